// What one monitor pass costs with persistQueueStats (lib/core/passes/monitor.ts): the count of every queue, its
// snapshot, and the recount of the last hour's windows that adds late commits (sql/monitor.ts, reconcileLateStats).
// Fills a schema with QUEUES queues and JOBS jobs finished over the last HOURS hours in the order they were sent (2%
// failed for good, 2% still waiting, created over the same hours), and a snapshot per queue for each minute of
// the last 7 days, as a pass a minute records them; then times forced passes, one build after the other, the order
// swapped every round. "The recount alone" runs it again right after a pass: what it reads, with nothing to raise.
// Usage: node bench/monitor-pass.mjs [--queues 10] [--jobs 500000] [--hours 2] [--rounds 10] [--dist dist,/path/to/other/dist]
//   [--keep]
//   --dist: builds whose passes run in turn on the same filled schema (a build's dist must resolve pg from a
//   node_modules above it); the schema is filled by the first. (DATABASE_URL, else the machine's server.)
// Prints, per build, the pass's p50 / min / max in ms, and the recount alone (builds that have it).
import pg from 'pg';
import { resolve } from 'node:path';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const DISTS = String(arg('dist', new URL('../dist', import.meta.url).pathname))
  .split(',')
  .map((d) => resolve(d.trim()));
const QUEUES = Number(arg('queues', 10));
const JOBS = Number(arg('jobs', 500_000));
const ROUNDS = Number(arg('rounds', 10));
// --keep: the schema stays (named in stderr), to look at the statements' plans afterwards
const KEEP = process.argv.includes('--keep');
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const quiet = { log() {}, warn() {}, error: console.error };
const HOURS = Number(arg('hours', 2));
const { PgQueue } = await import(`${DISTS[0]}/lib/core/index.js`);
const { runtimeOf } = await import(`${DISTS[0]}/lib/core/pg-queue.js`);

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

const schema = `bench_monitor_${process.pid}`;
const admin = new pg.Client(url);
await admin.connect();
const q = new PgQueue({ connectionString: url, schema, poolSize: 3, supervise: false, logger: quiet });
try {
  const t0 = performance.now();
  const names = Array.from({ length: QUEUES }, (_, i) => `q.${String(i).padStart(3, '0')}`);
  for (const name of names) await q.createQueue(name);
  const perQueue = Math.floor(JOBS / QUEUES);
  for (const name of names)
    for (let done = 0; done < perQueue; done += 5000)
      await q.insert(
        name,
        Array.from({ length: Math.min(5000, perQueue - done) }, (_, k) => ({ data: { k } })),
      );
  // by id: 2% waiting, 2% failed for good, the rest completed; finished in the order of their ids, evenly over the
  // last HOURS hours (as a queue drains), each having waited a second and run 50 ms
  const [{ lo, hi }] = (await admin.query(`SELECT min(id)::float8 AS lo, max(id)::float8 AS hi FROM "${schema}".jobs`)).rows;
  const ended = `now() - ${HOURS} * interval '1 hour' + (j.id - ${lo})::float8 / ${Math.max(1, hi - lo)} * ${HOURS} * interval '1 hour'`;
  await admin.query(`
    UPDATE "${schema}".jobs j SET
      state = CASE WHEN j.id % 100 < 2 THEN 'created' WHEN j.id % 100 < 4 THEN 'failed' ELSE 'completed' END::"${schema}".job_state,
      created_on = ${ended} - interval '1 second', start_after = ${ended} - interval '1 second',
      started_on = CASE WHEN j.id % 100 >= 2 THEN ${ended} - interval '50 milliseconds' END,
      completed_on = CASE WHEN j.id % 100 >= 2 THEN ${ended} END`);
  // a snapshot a minute over the last 7 days (queueStatRetentionDays' default), each window's deltas 0: the first
  // pass's recount raises those of the last hour, the later ones find nothing to raise
  await admin.query(
    `INSERT INTO "${schema}".queue_stats (queue, captured_on, created_delta, completed_delta, failed_delta, delta_seconds, delta_on)
     SELECT q.name, now() - m * interval '1 minute', 0, 0, 0, 60, now() - m * interval '1 minute' - interval '10 seconds'
     FROM "${schema}".queues q CROSS JOIN generate_series(1, 7 * 1440) m`,
  );
  await admin.query(`UPDATE "${schema}".queues SET delta_on = now() - interval '70 seconds'`);
  await admin.query(`VACUUM ANALYZE "${schema}".jobs`);
  await admin.query(`ANALYZE "${schema}".queue_stats`);
  process.stderr.write(`filled ${JOBS} jobs in ${QUEUES} queues in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);

  const builds = await Promise.all(
    DISTS.map(async (dist) => {
      const { QueueMonitor } = await import(`${dist}/lib/core/passes/monitor.js`);
      const { buildStatements } = await import(`${dist}/lib/core/sql/index.js`);
      const statements = buildStatements(`"${schema}"`);
      const monitor = new QueueMonitor({
        statements,
        schema,
        intervalSeconds: 60,
        persistQueueStats: true,
        queueStatRetentionDays: 7,
        warningQueueSize: null,
        warning() {},
        error(err) {
          throw err;
        },
      });
      return { dist, statements, monitor, passes: [], recounts: [] };
    }),
  );
  // the engine's own connections, with its session's settings (lib/core/runtime/db.ts), as its passes run
  const rt = runtimeOf(q);
  const connect = () => rt.connect();
  for (let round = 0; round <= ROUNDS; round++) {
    for (const b of round % 2 === 0 ? builds : [...builds].reverse()) {
      const p0 = performance.now();
      await b.monitor.run(connect, true);
      const ms = performance.now() - p0;
      // the recount alone, where the build has it
      let recount = null;
      if (b.statements.reconcileLateStats) {
        const r0 = performance.now();
        const client = await connect();
        try {
          await client.query(b.statements.reconcileLateStats);
        } finally {
          client.release();
        }
        recount = performance.now() - r0;
      }
      // round 0 warms the caches and is not counted
      if (round === 0) continue;
      b.passes.push(ms);
      if (recount !== null) b.recounts.push(recount);
    }
  }
  const stored = (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs`)).rows[0].n;
  console.log(
    `\n${stored.toLocaleString('en-US')} jobs in ${QUEUES} queues, finished over the last ${HOURS} hours; a forced pass with persistQueueStats, ${ROUNDS} rounds after one not counted\n`,
  );
  console.log('| build | pass p50 ms | min | max | recount alone p50 ms |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const f = (x) => x.toFixed(1);
  for (const b of builds)
    console.log(
      `| ${b.dist} | ${f(pct(b.passes, 50))} | ${f(Math.min(...b.passes))} | ${f(Math.max(...b.passes))} | ${b.recounts.length ? f(pct(b.recounts, 50)) : '—'} |`,
    );
} finally {
  await q.close();
  if (KEEP) process.stderr.write(`kept schema ${schema}\n`);
  else await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  await admin.end();
}
