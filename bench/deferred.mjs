// How late a job that becomes due later runs: `--jobs` jobs sent in one insert with startAfter spread over
// `--spread-s` seconds; then `--retries` jobs sent in one insert, whose first attempt fails with retryDelay 1.
// One worker at the default polling interval (2 s), idle when the jobs arrive. Lateness is
// the job's claim (started_on) minus the time it became due (start_after, which a retry sets to its due time),
// both read from the database's clock, the same way for every system. Each build (and pg-boss, with
// `--peers pg-boss`) runs in a process and a schema of its own, interleaved with the others.
//
//   node bench/deferred.mjs [--dist dist,/path/to/other/dist] [--peers pg-boss] [--rounds 2] [--jobs 500] [--retries 50] [--spread-s 10]
//
// A build named `dist+pgbouncer` runs through a PgBouncer in transaction mode started for the run (Debian's
// pgbouncer), its LISTEN straight to PostgreSQL (the `listen` option): `--dist dist,dist+pgbouncer` compares the two.
// PostgreSQL: DATABASE_URL (required). Prints a table: per build and kind of job, lateness p50/p95/max.
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { childEngine, distsOf, runInterleaved, startPoolerFor } from './harness/builds.mjs';
import { PGBOSS_WORK, pgBossEngine } from './harness/pgboss.mjs';
import { parseArgs, pause, quantile } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;
const QUEUE = 'due';

/**
 * Starts `system`'s worker on the queue (a first attempt of a job whose data says `fail` throws) and returns how
 * to insert, where the jobs are stored, and how to end.
 */
async function open(system, onDone) {
  const failed = new Set();
  const handle = (id, data) => {
    if (data.fail && !failed.has(id)) {
      failed.add(id);
      throw new Error('the first attempt fails');
    }
    onDone();
  };
  const retry = { retryLimit: 1, retryDelay: 1 };
  if (system === 'pg-boss') {
    const { boss, schema, queueOptions, end } = await pgBossEngine(url, 'deferred');
    await boss.createQueue(QUEUE, { ...queueOptions, ...retry });
    // A batch handler's throw fails its whole batch: the failing jobs' first attempts come in a batch of their own
    // (one insert, fetched at once), which fails as a whole.
    await boss.work(QUEUE, PGBOSS_WORK, async (batch) => {
      const first = batch.filter((job) => job.data.fail && !failed.has(job.id));
      for (const job of first) failed.add(job.id);
      if (first.length > 0) throw new Error('the first attempt fails');
      for (const job of batch) handle(job.id, job.data);
    });
    return {
      insert: (jobs) => boss.insert(QUEUE, jobs),
      table: `${schema}.job WHERE name = '${QUEUE}'`,
      end,
    };
  }
  const { q, end } = await childEngine(system, url, 'deferred');
  await q.createQueue(QUEUE, retry);
  await q.work(QUEUE, { concurrency: 50, batchSize: 200 }, async (job) => handle(job.id, job.data));
  return {
    insert: (jobs) => q.insert(QUEUE, jobs),
    table: `${q.config.schema}.jobs WHERE queue = '${QUEUE}'`,
    end: async () => {
      await q.offWork(QUEUE);
      await end();
    },
  };
}

if (process.env.PGQUEUE_DEFERRED_CHILD) {
  const { dist, jobs, retries, spreadMs } = JSON.parse(process.env.PGQUEUE_DEFERRED_CHILD);
  let done = 0;
  let finish;
  const phase = (n) => {
    done = 0;
    return new Promise((r) => (finish = () => done === n && r()));
  };
  const system = await open(dist, () => {
    done++;
    finish?.();
  });
  // The worker has polled once and sleeps when the jobs arrive. Two phases, each alone on the queue (a send
  // would wake the worker and find what is due by chance).
  await pause(500);
  let all = phase(jobs);
  const t0 = Date.now() + 500;
  await system.insert(
    Array.from({ length: jobs }, (_, i) => ({ data: { i }, startAfter: new Date(t0 + Math.floor((i * spreadMs) / jobs)) })),
  );
  await all;
  all = phase(retries);
  await system.insert(Array.from({ length: retries }, (_, i) => ({ data: { fail: true, i } })));
  await all;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query(
    `SELECT coalesce((data->>'fail')::boolean, false) AS retry, extract(epoch FROM started_on - start_after) * 1000 AS late FROM ${system.table}`,
  );
  await client.end();
  await system.end();
  const stats = (kind) => {
    const late = rows.filter((r) => r.retry === kind).map((r) => Number(r.late));
    return { p50: quantile(late, 0.5), p95: quantile(late, 0.95), max: Math.max(...late), n: late.length };
  };
  console.log(JSON.stringify({ deferred: stats(false), retries: stats(true) }));
} else {
  if (!url) throw new Error('deferred: set DATABASE_URL');
  const dists = [...distsOf(args.dist), ...(args.peers ? String(args.peers).split(',') : [])];
  const rounds = Number(args.rounds ?? 2);
  const jobs = Number(args.jobs ?? 500);
  const retries = Number(args.retries ?? 50);
  const spreadMs = Number(args['spread-s'] ?? 10) * 1000;
  const script = fileURLToPath(import.meta.url);
  const stopPooler = await startPoolerFor(dists, url);
  let results;
  try {
    results = runInterleaved({ script, envVar: 'PGQUEUE_DEFERRED_CHILD', dists, rounds, payload: { jobs, retries, spreadMs } });
  } finally {
    await stopPooler();
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ms = (x) => x.toFixed(1);
  console.log(
    `Lateness after the due time: ${jobs} jobs with startAfter over ${spreadMs / 1000} s (one insert), ${retries} retries with ` +
      `retryDelay 1 (one insert); one idle worker, polling every 2 s; medians of ${rounds} rounds\n`,
  );
  console.log('| build | jobs | late p50 ms | late p95 ms | late max ms |');
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const [dist, runs] of results) {
    for (const kind of ['deferred', 'retries']) {
      const m = (key) => median(runs.map((r) => r[kind][key]));
      console.log(
        `| ${dist} | ${kind === 'deferred' ? `${jobs} deferred` : `${retries} retries`} | ${ms(m('p50'))} | ${ms(m('p95'))} | ${ms(m('max'))} |`,
      );
    }
  }
}
