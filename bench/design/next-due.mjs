// docs/design.md, "Due times: the loop's timer": what a loop's read of its queue's next due time (nextDue) costs
// as the waiting jobs grow, with jobs due now (a backlog held back) and jobs due later, over `--priorities`
// distinct priorities.
//
//   node bench/design/next-due.mjs [--reps 15] [--priorities 4]
//
// For each size: the wall time of nextDue sent as the engine sends it (a statement prepared once per connection)
// and sent unnamed (planned on each run), medians (min–max) of the repetitions; and the shared buffers one run
// reads (EXPLAIN (ANALYZE, BUFFERS) of the generic plan). Connections have the engine's session settings.
import { describeServer, inSchema, intArg, spread, table, timed } from './common.mjs';

const REPS = intArg('reps', 15);
const PRIORITIES = intArg('priorities', 4);

await inSchema('nextdue', async (ctx) => {
  const { q, admin } = ctx;
  const machine = await describeServer(admin);
  await q.createQueue('d');
  const st = await ctx.statementsFor('d');
  const client = await ctx.session();
  await client.query(`PREPARE next_due(text, float8) AS ${st.nextDue}`);
  const rows = [];
  let stored = 0;
  for (const size of [1_000, 10_000, 100_000, 200_000]) {
    // Half due already (ready, as jobs a policy holds back stay), half due over the next 1,000 seconds.
    for (let sent = stored; sent < size; sent += 5_000) {
      const n = Math.min(5_000, size - sent);
      await q.insert(
        'd',
        Array.from({ length: n }, (_, i) => ({
          priority: (sent + i) % PRIORITIES,
          startAfter: (sent + i) % 2 === 0 ? undefined : 1 + ((sent + i) % 1_000),
        })),
      );
    }
    stored = size;
    await admin.query('ANALYZE');
    const prepared = [];
    const unnamed = [];
    for (let i = 0; i < REPS; i++) {
      prepared.push(await timed(() => client.query({ name: 'next_due_named', text: st.nextDue, values: ['d', 5] })));
      unnamed.push(await timed(() => client.query({ text: st.nextDue, values: ['d', 5] })));
    }
    const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE next_due('d', 5)`);
    const top = plan.rows[0]['QUERY PLAN'][0].Plan;
    rows.push([
      size.toLocaleString('en-US'),
      spread(prepared),
      spread(unnamed),
      String(top['Shared Hit Blocks'] + top['Shared Read Blocks']),
    ]);
  }
  console.log(`nextDue on one queue, ${PRIORITIES} priorities; ${machine}\n`);
  table(['waiting jobs', 'prepared ms', 'unnamed ms', 'buffers read'], rows);
});
