// What one dashboard sample costs (lib/core/dashboard/sampler.ts): the sampler reads the database once a second
// while someone watches, so a sample must stay cheap whatever the table holds. Fills a schema with QUEUES queues
// and JOBS stored jobs in one of two shapes, then times samples:
//   finished: most jobs finished over the last hour (2% failed for good), 2% waiting, some in a retry, a few running,
//             and a steady stream finishing over the last two minutes (the first sample reads those);
//   backlog:  every job waiting (created), none finished: the counts' caps bound the read.
// Usage: node bench/dashboard-sample.mjs [--queues 100] [--jobs 1000000] [--samples 30] [--shape finished|backlog|both]
//   (DATABASE_URL, else the machine's server). Prints a table: the first sample (a new connection, and two minutes
//   of finishes read), and p50 / p95 / max of the samples after a few more, one a second, in ms.
import pg from 'pg';
// From the build, like bench/partitions.mjs, so that this script needs no `npm ci --prefix bench`.
import { PgQueue } from '../dist/lib/core/index.js';
import { runtimeOf } from '../dist/lib/core/pg-queue.js';
import { DashboardSampler } from '../dist/lib/core/dashboard/sampler.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const QUEUES = Number(arg('queues', 100));
const JOBS = Number(arg('jobs', 1_000_000));
const SAMPLES = Number(arg('samples', 30));
const SHAPES = arg('shape', 'both') === 'both' ? ['finished', 'backlog'] : [arg('shape')];
// --keep: the schemas stay (named in stderr), to look at the statements' plans afterwards
const KEEP = process.argv.includes('--keep');
const WARM_UP = 5;
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const quiet = { log() {}, warn() {}, error: console.error };

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** Fills `schema`: QUEUES queues, JOBS jobs inserted through the engine, then moved to their shape's states in SQL. */
async function fill(q, admin, schema, shape) {
  for (let i = 0; i < QUEUES; i++) await q.createQueue(`q.${String(i).padStart(3, '0')}`, { retryLimit: 3 });
  const perQueue = Math.floor(JOBS / QUEUES);
  for (let i = 0; i < QUEUES; i++) {
    const name = `q.${String(i).padStart(3, '0')}`;
    for (let done = 0; done < perQueue; done += 5000) {
      await q.insert(
        name,
        Array.from({ length: Math.min(5000, perQueue - done) }, (_, k) => ({ data: { k } })),
      );
    }
  }
  if (shape === 'finished') {
    // by id: 2% stay waiting, 0.2% in a retry, 0.05% running, 2% failed for good, the rest completed over the last
    // hour; 12,000 of the completed finish in the last two minutes (100 a second)
    const done = `CASE WHEN j.id % 1000 < 23 THEN NULL
                       WHEN j.id % 83 = 0 THEN now() - (j.id % 120) * interval '1 second'
                       ELSE now() - interval '1 hour' + (j.id % 3480) * interval '1 second' END`;
    const ran = `now() - interval '1 hour' + (j.id % 3480) * interval '1 second'`;
    await admin.query(`
      UPDATE "${schema}".jobs j SET
        state = CASE WHEN j.id % 1000 < 20 THEN 'created' WHEN j.id % 1000 < 22 THEN 'retry' WHEN j.id % 2000 = 22 THEN 'active'
                     WHEN j.id % 1000 < 45 THEN 'failed' ELSE 'completed' END::"${schema}".job_state,
        completed_on = ${done},
        -- each job waited a second from its creation and ran for 50 ms before it finished (or started an hour ago)
        created_on = coalesce(${done}, ${ran}) - interval '1 second',
        start_after = coalesce(${done}, ${ran}) - interval '1 second',
        started_on = CASE WHEN j.id % 1000 < 22 THEN NULL ELSE coalesce(${done}, ${ran}) - interval '50 milliseconds' END,
        lease_until = CASE WHEN j.id % 2000 = 22 THEN now() + interval '10 minutes' END,
        worker_id = CASE WHEN j.id % 2000 = 22 THEN 'bench' END,
        last_error = CASE WHEN j.id % 1000 BETWEEN 20 AND 44 THEN
          jsonb_build_object('error', jsonb_build_object('name', 'Error', 'message', 'boom'), 'on', now() - (j.id % 50) * interval '1 second', 'attempt', 1) END,
        retry_count = CASE WHEN j.id % 1000 BETWEEN 20 AND 44 THEN 1 ELSE 0 END`);
  }
  await admin.query(`VACUUM ANALYZE "${schema}".jobs`);
}

const rows = [];
for (const shape of SHAPES) {
  const schema = `bench_dash_${process.pid}_${shape}`;
  const admin = new pg.Client(url);
  await admin.connect();
  const q = new PgQueue({ connectionString: url, schema, poolSize: 4, supervise: false, logger: quiet });
  try {
    const t0 = performance.now();
    await fill(q, admin, schema, shape);
    process.stderr.write(`${shape}: filled ${JOBS} jobs in ${QUEUES} queues in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
    const rt = runtimeOf(q);
    const sampler = new DashboardSampler({ statements: rt.statements, connect: () => rt.connect() });
    const times = [];
    let first = 0;
    let snap;
    // the first sample opens a connection (its backend loads the catalog) and reads two minutes of finishes; the
    // next WARM_UP are not counted either, then SAMPLES are, one a second as a watched dashboard reads them
    for (let i = 0; i <= WARM_UP + SAMPLES; i++) {
      const s0 = performance.now();
      snap = await sampler.sampleNow();
      const ms = performance.now() - s0;
      if (snap.error) throw new Error(`sample ${i} failed: ${snap.error}`);
      if (i === 0) first = ms;
      else if (i > WARM_UP) times.push(ms);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - ms)));
    }
    const stored = (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs`)).rows[0].n;
    rows.push({ shape, stored, first, p50: pct(times, 50), p95: pct(times, 95), max: Math.max(...times), waiting: snap.tiles.waiting });
    await sampler.stop();
  } finally {
    await q.close();
    if (KEEP) process.stderr.write(`kept schema ${schema}\n`);
    else await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    await admin.end();
  }
}

console.log(
  `\n${QUEUES} queues, one sample = the statements of lib/core/sql/dashboard.ts in one READ ONLY transaction; ${SAMPLES} samples, one a second, after ${WARM_UP + 1}\n`,
);
console.log('| shape | stored jobs | waiting shown | first sample ms | p50 ms | p95 ms | max ms |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  const f = (x) => x.toFixed(1);
  console.log(
    `| ${r.shape} | ${r.stored.toLocaleString('en-US')} | ${r.waiting.toLocaleString('en-US')} | ${f(r.first)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.max)} |`,
  );
}
