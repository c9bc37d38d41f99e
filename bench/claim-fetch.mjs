// Claim cost by policy and queue shape: the time of one claim as a worker makes it (batch 1 and batch 10)
// on a backlog, run inside a transaction that is rolled back so every repetition sees the same rows.
// Usage: node bench/claim-fetch.mjs [--rows 200000] [--reps 30]   (DATABASE_URL, else the machine's server)
// Prints a table (median and p95 in ms) and the EXPLAIN of each claim.
import pg from 'pg';
// From the build, like the internals below, so that this script needs no `npm ci --prefix bench`.
import { PgQueue } from '../dist/lib/core/index.js';
import { buildStatements } from '../dist/lib/core/sql/index.js';
import { claimJobs } from '../dist/lib/core/worker/index.js';
import { pgExecutor } from '../dist/lib/core/runtime/db.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROWS = arg('rows', 200_000);
const REPS = arg('reps', 30);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const schema = `bench_claim_${process.pid}`;
const S = `"${schema}"`;
const st = buildStatements(S);

const q = new PgQueue({ connectionString: url, schema, supervise: false, logger: { log() {}, warn() {}, error: console.error } });
await q.start();
const pool = new pg.Pool({ connectionString: url, max: 2 });

/** Shapes: [label, policy, number of keys (0: no key), interleaved] */
const shapes = [
  ['standard, no keys', 'standard', 0, true],
  [`key_strict_fifo, ${ROWS.toLocaleString('en-US')} keys x 1 job`, 'key_strict_fifo', ROWS, true],
  [`key_strict_fifo, 200 keys x ${(ROWS / 200).toLocaleString('en-US')} jobs, interleaved`, 'key_strict_fifo', 200, true],
  [`key_strict_fifo, 200 keys x ${(ROWS / 200).toLocaleString('en-US')} jobs, key after key`, 'key_strict_fifo', 200, false],
];

const results = [];
const plans = [];
for (const [label, policy, keys, interleaved] of shapes) {
  const queue = `bench.${results.length}`;
  await q.createQueue(queue, { policy });
  // Sent all at once, in one statement; the insert trigger marks the key_strict_fifo jobs as any insert does.
  const key = keys === 0 ? 'NULL' : interleaved ? `'k' || (g % ${keys})` : `'k' || (g / ${ROWS / keys})::int`;
  await pool.query(
    `INSERT INTO ${S}.jobs (queue, policy, singleton_key, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
     SELECT $1, $2, ${key}, 0, 0, false, 60, 60, now() + interval '1 day' FROM generate_series(0, $3 - 1) g`,
    [queue, policy, ROWS],
  );
  await pool.query(`ANALYZE ${S}.jobs_default`);
  const statement = policy === 'key_strict_fifo' ? st.claimJobsKeyFifo : st.claimJobs;
  const row = { label };
  for (const batch of [1, 10]) {
    const times = [];
    const client = await pool.connect();
    try {
      for (let i = 0; i < REPS + 3; i++) {
        await client.query('BEGIN');
        const t = process.hrtime.bigint();
        const claimed = await claimJobs(
          { exec: pgExecutor(client), statements: st, connect: () => pool.connect(), schema },
          queue,
          { policy, limited: false },
          batch,
          'bench',
        );
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        await client.query('ROLLBACK');
        if (claimed.length !== batch) throw new Error(`${label}: claimed ${claimed.length}, expected ${batch}`);
        if (i >= 3) times.push(ms);
      }
      if (batch === 10) {
        await client.query('BEGIN');
        const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${statement}`, [
          queue,
          batch,
          'bench',
          null,
          null,
          false,
        ]);
        await client.query('ROLLBACK');
        plans.push([label, plan.rows.map((r) => r['QUERY PLAN']).join('\n')]);
      }
    } finally {
      client.release();
    }
    times.sort((a, b) => a - b);
    row[`b${batch}`] = { p50: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)] };
  }
  results.push(row);
  await pool.query(`DELETE FROM ${S}.jobs WHERE queue = $1`, [queue]);
}

const base = results[0];
console.log(`\nclaim statement cost, ${ROWS.toLocaleString('en-US')} ready rows per shape, ${REPS} repetitions (ms; ratio to standard)`);
console.log('| shape | batch 1 p50 | batch 1 p95 | batch 10 p50 | batch 10 p95 | ratio b1 / b10 |');
console.log('|---|---|---|---|---|---|');
for (const r of results) {
  const ratio = (b) => (r[b].p50 / base[b].p50).toFixed(1);
  console.log(
    `| ${r.label} | ${r.b1.p50.toFixed(2)} | ${r.b1.p95.toFixed(2)} | ${r.b10.p50.toFixed(2)} | ${r.b10.p95.toFixed(2)} | ${ratio('b1')}x / ${ratio('b10')}x |`,
  );
}
for (const [label, plan] of plans) console.log(`\nEXPLAIN ANALYZE, ${label}, batch 10:\n${plan}`);

await pool.query(`DROP SCHEMA ${S} CASCADE`);
await pool.end();
await q.close();
