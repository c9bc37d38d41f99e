// What fetch()'s options cost on a backlog: one fetch (batch 1 and batch 10) as a caller makes it, through the
// engine (its session, its prepared generic plans), plain and with ignoreStartAfter and/or priority: false.
// priority: false cannot walk jobs_ready_idx in its order (the index leads with priority DESC): it reads every
// ready job of the queue and sorts it, so its cost follows the backlog. Each fetch claims its jobs for good (a
// few hundred of the backlog; the queue is made again for each).
// Usage: node bench/fetch-options.mjs [--rows 100000] [--reps 30]   (DATABASE_URL, else the machine's server)
// Prints a table (median and p95 in ms) and the EXPLAIN ANALYZE of each fetch statement at batch 10.
import pg from 'pg';
// From the build, like the internals below, so that this script needs no `npm ci --prefix bench`.
import { PgQueue } from '../dist/lib/core/index.js';
import { buildStatements, fetchArgs, claimArgs } from '../dist/lib/core/sql/index.js';
import { ENGINE_SESSION } from '../dist/lib/core/runtime/db.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROWS = arg('rows', 100_000);
const REPS = arg('reps', 30);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `bench_fetchopts_${process.pid}`;
const S = `"${schema}"`;
const st = buildStatements(S, `${S}."jobs_default"`);

const q = new PgQueue({ connectionString: url, schema, supervise: false, logger: { log() {}, warn() {}, error: console.error } });
await q.start();
// The engine's session settings (generic plans, no seq scans), for the EXPLAINs.
const pool = new pg.Pool({ connectionString: url, max: 2, options: ENGINE_SESSION });

const READY = `now() - interval '1 minute' + g * interval '1 ms'`;
/** Shapes: [label, policy, start_after of the backlog, singleton key] */
const shapes = [
  [`${ROWS.toLocaleString('en-US')} ready jobs, priorities 0-9`, 'standard', READY, 'NULL'],
  [
    `${ROWS.toLocaleString('en-US')} deferred jobs (1-2 h), none ready`,
    'standard',
    `now() + interval '1 hour' + g * interval '30 ms'`,
    'NULL',
  ],
  [`singleton, ${ROWS.toLocaleString('en-US')} ready jobs, 10,000 keys`, 'singleton', READY, `'k' || (g % 10000)`],
  [`key_strict_fifo, ${ROWS.toLocaleString('en-US')} ready jobs, 10,000 keys`, 'key_strict_fifo', READY, `'k' || (g % 10000)`],
];
const statementFor = { standard: '', singleton: 'OnePerKey', key_strict_fifo: 'KeyFifo' };
/** Variants: [label, fetch options, statement, ignoreStartAfter] */
const variants = [
  ["plain fetch (the workers' claimJobs)", {}, 'claimJobs', null],
  ['ignoreStartAfter', { ignoreStartAfter: true }, 'fetchJobs', true],
  ['priority: false', { priority: false }, 'fetchJobsByDue', false],
  ['ignoreStartAfter + priority: false', { ignoreStartAfter: true, priority: false }, 'fetchJobsByDue', true],
];

const results = [];
const plans = [];
for (const [shape, policy, startAfter, key] of shapes) {
  // A fresh backlog per variant: the jobs claimed by one (and under singleton, the keys they hold) stay claimed.
  for (const [label, options, plain, ignore] of variants) {
    const queue = `bench.${results.length}`;
    await q.createQueue(queue, { policy });
    // Sent all at once, in one statement; the insert trigger marks the key_strict_fifo jobs as any insert does.
    await pool.query(
      `INSERT INTO ${S}.jobs (queue, policy, priority, start_after, singleton_key, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
     SELECT $1, $3, (random() * 9)::int, ${startAfter}, ${key}, 0, 0, false, 60, 60, now() + interval '1 day' FROM generate_series(0, $2 - 1) g`,
      [queue, ROWS, policy],
    );
    await pool.query(`ANALYZE ${S}.jobs_default`);
    const statement =
      plain === 'claimJobs' ? `claimJobs${statementFor[policy]}` : plain.replace('fetchJobs', `fetchJobs${statementFor[policy]}`);
    const row = { shape, label };
    for (const batch of [1, 10]) {
      const times = [];
      let claimed = 0;
      for (let i = 0; i < REPS + 3; i++) {
        const t = process.hrtime.bigint();
        const jobs = await q.fetch(queue, { ...options, batchSize: batch });
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        if (i >= 3) {
          times.push(ms);
          claimed += jobs.length;
        }
      }
      times.sort((a, b) => a - b);
      row[`b${batch}`] = { p50: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)], claimed };
    }
    results.push(row);
    const client = await pool.connect();
    try {
      const request = { queue, limit: 10, workerId: 'bench', minPriority: null, maxPriority: null, asyncCommit: false };
      const args = ignore === null ? claimArgs(request) : fetchArgs(request, ignore);
      await client.query('BEGIN');
      await client.query(`PREPARE p AS ${st[statement]}`);
      const literal = (v) => (v === null ? 'NULL' : `'${String(v).replaceAll("'", "''")}'`);
      const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE p(${args.map(literal).join(', ')})`);
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE p');
      plans.push([`${shape}, ${label}`, plan.rows.map((r) => r['QUERY PLAN']).join('\n')]);
    } finally {
      client.release();
    }
    await q.deleteQueue(queue);
  }
}

console.log(`\none fetch() on a backlog of one standard queue, ${REPS} repetitions (ms; claimed: jobs over the repetitions)`);
console.log('| backlog | fetch | batch 1 p50 | batch 1 p95 | batch 10 p50 | batch 10 p95 | claimed b1 / b10 |');
console.log('|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.shape} | ${r.label} | ${r.b1.p50.toFixed(2)} | ${r.b1.p95.toFixed(2)} | ${r.b10.p50.toFixed(2)} | ${r.b10.p95.toFixed(2)} | ${r.b1.claimed} / ${r.b10.claimed} |`,
  );
}
for (const [label, plan] of plans) console.log(`\nEXPLAIN ANALYZE (generic plan), ${label}, batch 10:\n${plan}`);

await pool.query(`DROP SCHEMA ${S} CASCADE`);
await pool.end();
await q.close();
