// docs/design.md, "Planning: what is prepared and what is planned on each run" and "Settling: one statement per
// batch, three kinds of completion": how much of a small statement is its planning.
//
//   node bench/design/plan-time.mjs [--reps 15]
//
// For each statement: its planning and execution time as EXPLAIN ANALYZE reports them for a generic plan made on
// the spot (PREPARE, then EXPLAIN ANALYZE EXECUTE, on a connection with the engine's session settings), and its
// wall time as the engine sends it (unnamed: planned on each run). A completion of 50 with completeJobs (which
// also releases a flow's children) and with completeLeafJobs (which does not), a claim of 200 (claimJobs) and the
// completion of 200 (completeLeafJobs). One queue in jobs_default, no other partitions. Each run is rolled back.
import { activeAttempts, claimAll, describeServer, inSchema, intArg, median, sql, table, timedRolledBack } from './common.mjs';

const REPS = intArg('reps', 15);

/** A parameter as an SQL literal, for EXECUTE (arrays as array literals). */
const literal = (v) => {
  if (v === null) return 'NULL';
  if (Array.isArray(v))
    return `'{${v.map((x) => (x === null ? 'NULL' : `"${String(x).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)).join(',')}}'`;
  return `'${String(v).replaceAll("'", "''")}'`;
};

await inSchema('plantime', async (ctx) => {
  const { q, S, admin } = ctx;
  const machine = await describeServer(admin);
  await q.createQueue('p');
  await q.insert(
    'p',
    Array.from({ length: 200 }, () => ({})),
  );
  await claimAll(q, 'p'); // 200 active jobs
  await q.insert(
    'p',
    Array.from({ length: 2000 }, () => ({})),
  ); // a backlog for the claim
  const st = await ctx.statementsFor('p');
  const target = (attempts) => ({
    queue: 'p',
    ids: attempts.map((a) => a.id),
    retryCounts: null,
    workerId: attempts[0].worker_id,
    claimCounts: attempts.map((a) => a.claim_count),
    stamps: attempts.map((a) => a.stamp),
  });
  const fifty = await activeAttempts(admin, S, 'p', 50);
  const all = await activeAttempts(admin, S, 'p', 200);
  const channel = `pgqueue_${ctx.schema}`;
  const cases = [
    ['completeJobs, 50 jobs (with the release of children)', st.completeJobs, sql.completeArgs(target(fifty), null, channel, null), 50],
    ['completeLeafJobs, 50 jobs (without it)', st.completeLeafJobs, sql.completeLeafArgs(target(fifty), null, null), 50],
    [
      'claimJobs, 200 jobs',
      st.claimJobs,
      sql.claimArgs({ queue: 'p', limit: 200, workerId: 'bench', minPriority: null, maxPriority: null, asyncCommit: true }),
      200,
    ],
    ['completeLeafJobs, 200 jobs', st.completeLeafJobs, sql.completeLeafArgs(target(all), null, null), 200],
  ];
  const client = await ctx.session();
  const results = cases.map(() => ({ plan: [], exec: [], wall: [] }));
  for (let r = 0; r <= REPS; r++) {
    for (const [i, [, text, values, n]] of cases.entries()) {
      await client.query(`PREPARE design_plan AS ${text}`);
      await client.query('BEGIN');
      let lines;
      try {
        lines = (await client.query(`EXPLAIN (ANALYZE, TIMING OFF) EXECUTE design_plan(${values.map(literal).join(', ')})`)).rows.map(
          (x) => x['QUERY PLAN'],
        );
      } finally {
        await client.query('ROLLBACK');
        await client.query('DEALLOCATE design_plan');
      }
      const time = (label) => Number(new RegExp(`${label} Time: ([\\d.]+) ms`).exec(lines.join('\n'))[1]);
      const wall = await timedRolledBack(client, async () => {
        const { rowCount } = await client.query(text, values);
        if (rowCount !== n) throw new Error(`${rowCount} rows, ${n} expected`);
      });
      if (r === 0) continue;
      results[i].plan.push(time('Planning'));
      results[i].exec.push(time('Execution'));
      results[i].wall.push(wall);
    }
  }
  console.log(`# Planning against running, ms: medians of ${REPS}`);
  console.log(`# ${machine}\n`);
  const f = (xs) => median(xs).toFixed(2);
  table(
    ['statement', 'planning (EXPLAIN)', 'execution (EXPLAIN)', 'as the engine sends it, unnamed (wall)'],
    cases.map(([label], i) => [label, f(results[i].plan), f(results[i].exec), f(results[i].wall)]),
  );
});
