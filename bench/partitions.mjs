// What other queues' partitions cost a queue: a drain by one worker, fetch() and complete() by hand, on a
// queue in jobs_default and on a queue with a partition of its own, with 0 and with N other queues that
// have their own partitions. Each case runs in a schema of its own, created and dropped here.
// Usage: node bench/partitions.mjs [--others 100] [--jobs 4000] [--calls 200] [--reps 3]
//   (DATABASE_URL, else the machine's server). Prints a table: medians (min–max) of the repetitions.
import pg from 'pg';
// From the build, like bench/claim-fetch.mjs, so that this script needs no `npm ci --prefix bench`.
import { PgQueue } from '../dist/lib/core/index.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const OTHERS = arg('others', 100);
const JOBS = arg('jobs', 4000);
const CALLS = arg('calls', 200);
const REPS = arg('reps', 3);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const quiet = { log() {}, warn() {}, error: console.error };
const admin = new pg.Client(url);
await admin.connect();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let schemas = 0;

/** One repetition of one case: the three measures, in a fresh schema. */
async function measure(others, ownPartition) {
  const schema = `bench_parts_${process.pid}_${++schemas}`;
  const q = new PgQueue({ connectionString: url, schema, poolSize: 10, supervise: false, logger: quiet });
  try {
    for (let i = 0; i < others; i++) await q.createQueue(`other.${i}`, { partition: true });
    await q.createQueue('target', { partition: ownPartition });
    // drain: the clock runs from the worker's start to the last job's completion, read from the table
    await q.insert(
      'target',
      Array.from({ length: JOBS }, (_, i) => ({ data: { i } })),
    );
    let ran = 0;
    const t0 = performance.now();
    const workerId = await q.work('target', { concurrency: 50, batchSize: 200 }, async () => void ran++);
    for (;;) {
      const {
        rows: [left],
      } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE queue = 'target' AND state <> 'completed'`);
      if (left.n === 0) break;
      if (performance.now() - t0 > 120_000) throw new Error(`drain: ${left.n} jobs left after 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const drain = JOBS / ((performance.now() - t0) / 1000);
    await q.offWork(workerId);
    if (ran !== JOBS) throw new Error(`drain: the handler ran ${ran} times for ${JOBS} jobs`);
    // fetch() and complete() by hand, one job at a time
    await q.insert(
      'target',
      Array.from({ length: CALLS }, () => ({})),
    );
    const fetches = [];
    const completes = [];
    for (let i = 0; i < CALLS; i++) {
      let t = performance.now();
      const [job] = await q.fetch('target');
      fetches.push(performance.now() - t);
      if (!job) throw new Error('fetch: no job');
      t = performance.now();
      const { updated } = await q.complete('target', job.id);
      completes.push(performance.now() - t);
      if (updated !== 1) throw new Error('complete: not written');
    }
    return { drain, fetch: median(fetches), complete: median(completes) };
  } finally {
    await q.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

const cases = [];
for (const others of [0, OTHERS]) for (const own of [false, true]) cases.push({ others, own, runs: [] });
for (let rep = 1; rep <= REPS; rep++) {
  for (const c of cases) {
    process.stderr.write(
      `[partitions] repetition ${rep}/${REPS}: ${c.others} other partitioned queues, target ${c.own ? 'in its own partition' : 'in jobs_default'}\n`,
    );
    c.runs.push(await measure(c.others, c.own));
  }
}
await admin.end();

const cell = (runs, key, digits) => {
  const xs = runs.map((r) => r[key]);
  const f = (x) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
};
console.log(
  `\nOne queue among other queues that have partitions of their own: ${JOBS.toLocaleString('en-US')} jobs drained (concurrency 50, batch 200),`,
);
console.log(`then ${CALLS} fetch() and complete() by hand, one job at a time; medians (min–max) of ${REPS}.\n`);
console.log("| other partitioned queues | the queue's jobs in | drain jobs/s | fetch() p50 ms | complete() p50 ms |");
console.log('| ---: | --- | ---: | ---: | ---: |');
for (const c of cases) {
  console.log(
    `| ${c.others} | ${c.own ? 'its own partition' : 'jobs_default'} | ${cell(c.runs, 'drain', 0)} | ${cell(c.runs, 'fetch', 2)} | ${cell(c.runs, 'complete', 2)} |`,
  );
}
