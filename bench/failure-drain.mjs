// What a failed attempt costs: a backlog of jobs whose handler throws, drained by one worker (concurrency 50, batch
// 200) until every job has failed its attempts (retryLimit 1: two attempts each, the second failing it for good);
// the failures per second and the WAL bytes per failed attempt (pg_current_wal_lsn() around the drain). A failure
// writes the job's error (output, last_error) and, since migration 18, the attempt's record (attempts). Each build in
// a process and a schema of its own, the builds interleaved (harness/builds.mjs).
//
//   node bench/failure-drain.mjs [--dist /tmp/before/dist,dist] [--rounds 4] [--jobs 10000]
//
// To compare with an earlier commit: git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
// PostgreSQL: DATABASE_URL (required), on this machine for the WAL to be this drain's alone. Prints a table: per build,
// failed attempts per second and WAL bytes per failed attempt, medians of the rounds (min–max).
import { fileURLToPath } from 'node:url';
import { childEngine, distsOf, runInterleaved } from './harness/builds.mjs';
import { median, parseArgs } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;

if (process.env.PGQUEUE_FAILURE_CHILD) {
  const { dist, jobs } = JSON.parse(process.env.PGQUEUE_FAILURE_CHILD);
  const { q, end } = await childEngine(dist, url, 'failure_drain');
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await q.createQueue('fail.drain', { retryLimit: 1 });
  for (let done = 0; done < jobs; done += 5000)
    await q.insert(
      'fail.drain',
      Array.from({ length: Math.min(5000, jobs - done) }, (_, i) => ({ data: { i: done + i } })),
    );
  const lsn = async () => (await admin.query('SELECT pg_current_wal_lsn()::text AS at')).rows[0].at;
  const wal0 = await lsn();
  const t0 = performance.now();
  let attempts = 0;
  const finished = new Promise((resolve) => {
    void q.work('fail.drain', { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 0.05 }, async function fails(job) {
      attempts++;
      // the second attempt fails each job for good: the drain ends at the last one
      if (attempts === jobs * 2) setImmediate(resolve);
      throw new Error(`declined ${job.id}`);
    });
  });
  await finished;
  // every failure written: none left active or waiting
  for (;;) {
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM failure_drain_${process.pid}.jobs WHERE state <> 'failed'`);
    if (rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - t0) / 1000;
  const wal = Number((await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS bytes', [wal0])).rows[0].bytes);
  await admin.end();
  await end();
  console.log(JSON.stringify({ perSecond: (jobs * 2) / seconds, walPerAttempt: wal / (jobs * 2) }));
} else {
  if (!url) throw new Error('failure-drain: set DATABASE_URL');
  const dists = distsOf(args.dist);
  const rounds = Number(args.rounds ?? 4);
  const jobs = Number(args.jobs ?? 10000);
  const results = runInterleaved({
    script: fileURLToPath(import.meta.url),
    envVar: 'PGQUEUE_FAILURE_CHILD',
    dists,
    rounds,
    payload: { jobs },
  });
  const cell = (values, digits = 0) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  console.log(`${jobs} jobs failing two attempts each per run; ${rounds} interleaved rounds\n`);
  console.log('| build | failed attempts / s | WAL bytes per failed attempt |');
  console.log('| --- | ---: | ---: |');
  for (const [dist, runs] of results)
    console.log(`| ${dist} | ${cell(runs.map((r) => r.perSecond))} | ${cell(runs.map((r) => r.walPerAttempt))} |`);
}
