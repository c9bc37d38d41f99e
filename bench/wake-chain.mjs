// How long a key_strict_fifo key's next job waits once the job before it has finished: `keys` keys of
// `perKey` jobs each, a 1 ms handler, one worker at the default polling interval (2 s). The gap is from a
// handler's return to the start of its key's next job. Each build (and pg-boss, with `--peers pg-boss`) runs in a
// process and a schema of its own, interleaved with the others.
//
//   node bench/wake-chain.mjs [--dist dist,/path/to/other/dist] [--peers pg-boss] [--rounds 2] [--keys 20] [--per-key 10]
//                             [--breakdown]
//
// A build named `dist+pgbouncer` runs through a PgBouncer in transaction mode started for the run (Debian's
// pgbouncer), its LISTEN straight to PostgreSQL (the `listen` option): `--dist dist,dist+pgbouncer` compares the two.
// PostgreSQL: DATABASE_URL (required). Prints a table: per build, the gaps' p50/p95/max, the chain's jobs/s,
// and jobs/s per key. `--breakdown` adds, per pgqueue build, where a gap goes (p50 / p95 ms, from the times at
// which the engine's pool sent and got back each completion and each claim): the handler's return to its
// completion being sent, the completion statement, its end to the claim of the successor being sent, the claim,
// and the claim's return to the successor's handler.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { childEngine, distsOf, runInterleaved, startPoolerFor } from './harness/builds.mjs';
import { PGBOSS_WORK, pgBossEngine } from './harness/pgboss.mjs';
import { parseArgs } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;

/**
 * Records, per job id, when the engine's pool sent and got back the completion and the claim that named it: the
 * pg of build `dist` (resolved from there, as the engine resolves it) gets its Pool.query wrapped.
 */
function recordStatements(dist) {
  const seen = { completed: new Map(), claimed: new Map() };
  const pg = createRequire(`${dist}/`)('pg');
  const query = pg.Pool.prototype.query;
  pg.Pool.prototype.query = function (config, ...rest) {
    const text = typeof config === 'string' ? config : config?.text;
    const sent = performance.now();
    const result = query.call(this, config, ...rest);
    const into = text?.includes('WITH done AS') ? seen.completed : text?.includes('WITH next AS MATERIALIZED') ? seen.claimed : null;
    if (!into || typeof result?.then !== 'function') return result;
    return result.then((r) => {
      const back = performance.now();
      for (const row of r.rows) into.set(row.id, [sent, back]);
      return r;
    });
  };
  return seen;
}

/** The parts of a gap, in order (see the header). */
const PARTS = ['to completion sent', 'completion', 'to claim sent', 'claim', 'to handler'];

/** Each part's p50 and p95 over the links (a job and its key's job before it) whose statements were both seen. */
function breakdownOf(links, seen) {
  const parts = PARTS.map(() => []);
  for (const { before, id, started } of links) {
    const done = seen.completed.get(before.id);
    const claim = seen.claimed.get(id);
    if (!done || !claim) continue;
    [done[0] - before.at, done[1] - done[0], claim[0] - done[1], claim[1] - claim[0], started - claim[1]].forEach((x, i) =>
      parts[i].push(x),
    );
  }
  const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  return Object.fromEntries(PARTS.map((name, i) => [name, { p50: q(parts[i], 0.5), p95: q(parts[i], 0.95) }]));
}

/** Runs `handle` (one job's data; resolves when the handler returns) on the chain's jobs under `system`. */
async function chainOn(system, jobs, keys, handle) {
  if (system === 'pg-boss') {
    const { boss, queueOptions, end } = await pgBossEngine(url, 'wake_chain');
    await boss.createQueue('chain', { policy: 'key_strict_fifo', ...queueOptions });
    await boss.insert('chain', jobs);
    // A batch holds at most one job per key; its jobs run side by side, as pgqueue's slots do.
    await boss.work('chain', PGBOSS_WORK, (batch) => Promise.all(batch.map((job) => handle(job.data, job.id))));
    return end;
  }
  const { q, end } = await childEngine(system, url, 'wake_chain');
  await q.createQueue('chain', { policy: 'key_strict_fifo' });
  await q.insert('chain', jobs);
  await q.work('chain', { concurrency: keys, batchSize: keys }, (job) => handle(job.data, job.id));
  return async () => {
    await q.offWork('chain');
    await end();
  };
}

if (process.env.PGQUEUE_WAKE_CHAIN_CHILD) {
  const { dist, keys, perKey, breakdown } = JSON.parse(process.env.PGQUEUE_WAKE_CHAIN_CHILD);
  const seen = breakdown && dist !== 'pg-boss' ? recordStatements(dist.replace(/\+pgbouncer$/, '')) : null;
  // Job n of every key before job n+1 of any: each key's jobs are in order, and keys interleave.
  const jobs = [];
  for (let n = 0; n < perKey; n++) for (let k = 0; k < keys; k++) jobs.push({ singletonKey: `k${k}`, data: { k, n } });
  const ended = new Map();
  const gaps = [];
  const links = [];
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const t0 = performance.now();
  const end = await chainOn(dist, jobs, keys, async ({ k, n }, id) => {
    const started = performance.now();
    if (n > 0) {
      gaps.push(started - ended.get(k).at);
      links.push({ before: ended.get(k), id, started });
    }
    await new Promise((r) => setTimeout(r, 1));
    ended.set(k, { id, at: performance.now() });
    if (++done === jobs.length) finish();
  });
  await all;
  const seconds = (performance.now() - t0) / 1000;
  await end();
  gaps.sort((a, b) => a - b);
  const at = (p) => gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))];
  console.log(
    JSON.stringify({
      p50: at(0.5),
      p95: at(0.95),
      max: gaps[gaps.length - 1],
      jobsPerSecond: jobs.length / seconds,
      perKey: perKey / seconds,
      parts: seen ? breakdownOf(links, seen) : null,
    }),
  );
} else {
  if (!url) throw new Error('wake-chain: set DATABASE_URL');
  const breakdown = args.breakdown === true;
  const dists = [...distsOf(args.dist), ...(args.peers ? String(args.peers).split(',') : [])];
  const rounds = Number(args.rounds ?? 2);
  const keys = Number(args.keys ?? 20);
  const perKey = Number(args['per-key'] ?? 10);
  const script = fileURLToPath(import.meta.url);
  const stopPooler = await startPoolerFor(dists, url);
  let results;
  try {
    results = runInterleaved({ script, envVar: 'PGQUEUE_WAKE_CHAIN_CHILD', dists, rounds, payload: { keys, perKey, breakdown } });
  } finally {
    await stopPooler();
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ms = (x) => x.toFixed(1);
  console.log(
    `key_strict_fifo chain: ${keys} keys x ${perKey} jobs, 1 ms handler, one worker (concurrency ${keys}), default polling; medians of ${rounds} rounds\n`,
  );
  console.log('| build | gap p50 ms | gap p95 ms | gap max ms | jobs/s | jobs/s per key |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [dist, runs] of results) {
    const m = (key) => median(runs.map((r) => r[key]));
    console.log(
      `| ${dist} | ${ms(m('p50'))} | ${ms(m('p95'))} | ${ms(m('max'))} | ${m('jobsPerSecond').toFixed(0)} | ${m('perKey').toFixed(1)} |`,
    );
  }
  if (breakdown) {
    console.log('\nWhere a gap goes, p50 / p95 ms (medians of the rounds):\n');
    console.log(`| build | ${PARTS.join(' | ')} |`);
    console.log(`| --- | ${PARTS.map(() => '---:').join(' | ')} |`);
    for (const [dist, runs] of results) {
      if (!runs[0].parts) continue;
      const cell = (part) => ['p50', 'p95'].map((p) => ms(median(runs.map((r) => r.parts[part][p])))).join(' / ');
      console.log(`| ${dist} | ${PARTS.map(cell).join(' | ')} |`);
    }
  }
}
