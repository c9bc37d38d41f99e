// What one dashboard sample costs (lib/core/dashboard/sampler.ts): the sampler reads the database once a second
// while someone watches, so a sample must stay cheap whatever the table holds. Fills a schema with QUEUES queues
// and JOBS stored jobs in one of two shapes, then times samples:
//   finished: most jobs finished over the last hour (2% failed for good), 2% waiting, some in a retry, a few running,
//             and a steady stream finishing over the last two minutes (the first sample reads those);
//   backlog:  every job waiting (created), none finished: the counts' caps bound the read.
// Usage: node bench/dashboard-sample.mjs [--queues 100] [--jobs 1000000] [--samples 30] [--shape finished|backlog|both]
//   [--dist dist,/path/to/other/dist] [--statements] [--keep]
//   --dist: builds whose samplers read the same filled schema in turn, sample by sample (a build's dist must
//   resolve pg from a node_modules above it); the schema is filled by the first.
//   (DATABASE_URL, else the machine's server). Prints a table: the first sample (a new connection, and two minutes
//   of finishes read), and p50 / p95 / max of the samples after a few more, one a second, in ms.
import pg from 'pg';
// From the build, like bench/partitions.mjs, so that this script needs no `npm ci --prefix bench`.
import { resolve } from 'node:path';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const DISTS = String(arg('dist', new URL('../dist', import.meta.url).pathname))
  .split(',')
  .map((d) => resolve(d.trim()));
const { PgQueue } = await import(`${DISTS[0]}/lib/core/index.js`);
const { runtimeOf } = await import(`${DISTS[0]}/lib/core/pg-queue.js`);
const SAMPLERS = await Promise.all(DISTS.map(async (d) => (await import(`${d}/lib/core/dashboard/sampler.js`)).DashboardSampler));
const QUEUES = Number(arg('queues', 100));
const JOBS = Number(arg('jobs', 1_000_000));
const SAMPLES = Number(arg('samples', 30));
const SHAPES = arg('shape', 'both') === 'both' ? ['finished', 'backlog'] : [arg('shape')];
// --keep: the schemas stay (named in stderr), to look at the statements' plans afterwards
const KEEP = process.argv.includes('--keep');
// --statements: also times each statement of a sample on its own (15 runs, after 3 not counted), to see which cost
const STATEMENTS = process.argv.includes('--statements');
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

/** Each statement of a sample timed alone on an engine connection, with the arguments a sample gives it: p50 ms. */
async function timeStatements(rt, admin, schema, at) {
  const newest = (await admin.query(`SELECT coalesce(max(id), 0)::text AS id FROM "${schema}".jobs`)).rows[0].id;
  const args = {
    dashboardQueues: [1000],
    dashboardFinished: [at - 6000, 50_000],
    dashboardRetrying: [2000],
    dashboardTimings: [500],
    dashboardRunning: [50],
    dashboardStarted: [at - 2000, 50],
    dashboardLeases: [],
    dashboardProblems: [20],
    dashboardSent: [String(BigInt(newest) - 10n), 50],
    dashboardFinishes: [at - 2000, 50],
    dashboardWorkers: [],
    dashboardSchedules: [100],
  };
  const client = await rt.connect();
  const out = {};
  try {
    for (const [name, values] of Object.entries(args)) {
      const times = [];
      for (let i = 0; i < 18; i++) {
        const t0 = performance.now();
        await client.query({ name, text: rt.statements[name], values });
        if (i >= 3) times.push(performance.now() - t0);
      }
      out[name] = pct(times, 50);
    }
    const t0 = performance.now();
    for (let i = 0; i < 50; i++) await client.query('SELECT 1');
    out['round trip (SELECT 1)'] = (performance.now() - t0) / 50;
  } finally {
    client.release();
  }
  return out;
}

const rows = [];
const statementRows = [];
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
    const builds = SAMPLERS.map((Sampler, b) => ({
      dist: DISTS[b],
      sampler: new Sampler({ statements: rt.statements, connect: () => rt.connect(), prepared: rt.namesStatements }),
      times: [],
      first: 0,
      snap: null,
    }));
    // the first sample opens a connection (its backend loads the catalog) and reads two minutes of finishes; the
    // next WARM_UP are not counted either, then SAMPLES are, one a second as a watched dashboard reads them; with
    // several builds, each reads its sample in turn within the second, the order swapped every second
    for (let i = 0; i <= WARM_UP + SAMPLES; i++) {
      const s0 = performance.now();
      for (const b of i % 2 === 0 ? builds : [...builds].reverse()) {
        const b0 = performance.now();
        b.snap = await b.sampler.sampleNow();
        const ms = performance.now() - b0;
        if (b.snap.error) throw new Error(`sample ${i} failed: ${b.snap.error}`);
        if (i === 0) b.first = ms;
        else if (i > WARM_UP) b.times.push(ms);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (performance.now() - s0))));
    }
    const stored = (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs`)).rows[0].n;
    for (const b of builds) {
      const { times, first, snap } = b;
      rows.push({
        shape,
        dist: b.dist,
        stored,
        first,
        p50: pct(times, 50),
        p95: pct(times, 95),
        max: Math.max(...times),
        waiting: snap.tiles.waiting,
      });
      await b.sampler.stop();
    }
    const snap = builds[0].snap;
    if (STATEMENTS) statementRows.push({ shape, times: await timeStatements(rt, admin, schema, snap.at) });
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
const withBuild = DISTS.length > 1;
console.log(`| shape |${withBuild ? ' build |' : ''} stored jobs | waiting shown | first sample ms | p50 ms | p95 ms | max ms |`);
console.log(`| --- |${withBuild ? ' --- |' : ''} ---: | ---: | ---: | ---: | ---: | ---: |`);
for (const r of rows) {
  const f = (x) => x.toFixed(1);
  console.log(
    `| ${r.shape} |${withBuild ? ` ${r.dist} |` : ''} ${r.stored.toLocaleString('en-US')} | ${r.waiting.toLocaleString('en-US')} | ${f(r.first)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.max)} |`,
  );
}

if (STATEMENTS) {
  console.log(`\neach statement alone, p50 ms of 15 runs\n`);
  console.log(`| statement | ${statementRows.map((r) => r.shape).join(' | ')} |`);
  console.log(`| --- | ${statementRows.map(() => '---:').join(' | ')} |`);
  for (const name of Object.keys(statementRows[0]?.times ?? {}))
    console.log(`| ${name} | ${statementRows.map((r) => r.times[name].toFixed(2)).join(' | ')} |`);
}
