// docs/performance.md, "What a job costs PostgreSQL": the least a kept job's claim and completion can cost in this
// schema, against what the engine's own statements cost. On one session, one batch at a time (no concurrency):
//
// - engine: claimJobs then completeLeafJobs, as a worker sends them (fenced, with their RETURNING and probes);
// - bare: a claim that locks with SKIP LOCKED and updates the columns a claim sets, then an UPDATE of the columns a
//   completion sets: the same rows and indexes, without the engine's fences, probes and returned columns;
// - bare, deleted: the same claim, then a DELETE (what removeOnComplete does, and Graphile Worker always).
//
//   node bench/design/row-floor.mjs [--jobs 40000] [--rounds 3]
//
// Prints per job the CPU of the session's backend (/proc/<pid>/stat: Linux, and the server on this machine),
// parsing, planning and commits included, and the WAL written (pg_current_wal_lsn()), medians (min–max) over the
// rounds, the variants taking turns on a fresh backlog each.
import { readFileSync } from 'node:fs';
import { describeServer, inSchema, intArg, median, sql, table } from './common.mjs';

const JOBS = intArg('jobs', 40_000);
const ROUNDS = intArg('rounds', 3);
const BATCH = 200;

await inSchema('floor', async ({ q, S, admin, session, statementsFor }) => {
  const machine = await describeServer(admin);
  await q.createQueue('f');
  const st = await statementsFor('f');
  const client = await session();
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const ticksPerSecond = 100; // USER_HZ: /proc reports CPU in clock ticks
  const cpuMicros = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond;
  };
  const J = `${S}.jobs_default`;
  const bareClaim = `WITH next AS MATERIALIZED (
  SELECT j.ctid AS tid FROM ${J} j WHERE j.queue = 'f' AND j.state < 'active' AND j.start_after <= statement_timestamp()
  ORDER BY j.priority DESC, j.start_after, j.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
UPDATE ${J} j SET state = 'active', claim_count = j.claim_count + 1, worker_id = 'w', started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second', heartbeat_until = NULL
WHERE j.ctid = ANY (ARRAY(SELECT tid FROM next)) RETURNING j.id::text`;
  const bareComplete = `UPDATE ${J} SET state = 'completed', completed_on = now(), output = NULL, lease_until = NULL,
  heartbeat_until = NULL, keep_until = now() + delete_after_seconds * interval '1 second'
WHERE queue = 'f' AND id = ANY ($1::bigint[])`;
  const bareDelete = `DELETE FROM ${J} WHERE queue = 'f' AND id = ANY ($1::bigint[])`;
  const ids = (rows) => `{${rows.map((r) => r.id).join(',')}}`;
  const variants = {
    engine: async () => {
      for (;;) {
        const { rows } = await client.query(st.claimJobs, ['f', BATCH, 'w', null, null, true]);
        if (rows.length === 0) return;
        const target = {
          queue: 'f',
          ids: ids(rows),
          retryCounts: null,
          workerId: 'w',
          claimCounts: `{${rows.map((r) => r.claim_count).join(',')}}`,
          stamps: `{${rows.map((r) => r.stamp).join(',')}}`,
        };
        await client.query(st.completeLeafJobs, sql.completeLeafArgs(target, null, null));
      }
    },
    bare: async () => {
      for (;;) {
        const { rows } = await client.query(bareClaim);
        if (rows.length === 0) return;
        await client.query(bareComplete, [ids(rows)]);
      }
    },
    'bare, deleted': async () => {
      for (;;) {
        const { rows } = await client.query(bareClaim);
        if (rows.length === 0) return;
        await client.query(bareDelete, [ids(rows)]);
      }
    },
  };
  const results = Object.fromEntries(Object.keys(variants).map((k) => [k, { cpu: [], wal: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(variants)) {
      await admin.query(`DELETE FROM ${S}.jobs`);
      for (let i = 0; i < JOBS; i += 5000)
        await q.insert(
          'f',
          Array.from({ length: Math.min(5000, JOBS - i) }, (_, k) => ({ data: { k } })),
        );
      await admin.query(`VACUUM ANALYZE ${S}.jobs`);
      const wal0 = (await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn;
      const cpu0 = cpuMicros();
      await run();
      const cpu = cpuMicros() - cpu0;
      const wal = (await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS bytes', [wal0])).rows[0].bytes;
      const left = (await admin.query(`SELECT count(*)::int AS n FROM ${S}.jobs WHERE state <> 'completed'`)).rows[0].n;
      if (left !== 0) throw new Error(`${name}: ${left} jobs not completed`);
      results[name].cpu.push(cpu / JOBS);
      results[name].wal.push(wal / JOBS);
    }
  }
  const spread = (xs, digits) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
  console.log(`${machine}; ${JOBS} jobs, batches of ${BATCH}, ${ROUNDS} rounds; medians (min–max)\n`);
  table(
    ['claim and completion', 'backend CPU µs per job', 'WAL bytes per job'],
    Object.entries(results).map(([name, r]) => [name, spread(r.cpu, 1), spread(r.wal, 0)]),
  );
});
