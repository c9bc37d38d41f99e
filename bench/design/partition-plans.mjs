// docs/design.md, "Partitions: statements name the queue's table": what a statement that names the partitioned
// `jobs` costs once other queues have partitions of their own. completeJobs' release of a flow's children updates
// `jobs` (any queue may hold a child), so the whole statement is planned with every partition, on every run;
// completeNonParentJobs leaves that out (complete() by hand runs it first, and completeJobs only for flow parents).
//
//   node bench/design/partition-plans.mjs [--others 100] [--reps 20]
//
// complete() of one active job by hand (no fence but the queue and id), as the engine renders and plans it
// (unnamed, generic plan, the engine's session settings), with no other queue and with `--others` queues that have
// partitions of their own. Each statement runs in a transaction that is rolled back, interleaved, after one
// warm-up round that is not counted.
import { activeAttempts, describeServer, inSchema, intArg, sql, spread, table, timedRolledBack } from './common.mjs';

const OTHERS = intArg('others', 100);
const REPS = intArg('reps', 20);

const rows = [];
let machine = '';
for (const others of [0, OTHERS]) {
  await inSchema(`parts_${others}`, async (ctx) => {
    machine = await describeServer(ctx.admin);
    const { q, S, admin } = ctx;
    for (let i = 0; i < others; i++) await q.createQueue(`other-${i}`, { partition: true });
    await q.createQueue('q');
    await q.send('q', {});
    await q.fetch('q');
    const [a] = await activeAttempts(admin, S, 'q', 1);
    const st = await ctx.statementsFor('q');
    const target = { queue: 'q', ids: [a.id], retryCounts: [null], workerId: null, claimCounts: [null], stamps: null };
    const forms = [
      ['completeNonParentJobs', st.completeNonParentJobs, sql.completeLeafArgs(target, null, null)],
      ['completeJobs', st.completeJobs, sql.completeArgs(target, null, `pgqueue_${ctx.schema}`, null)],
    ];
    const client = await ctx.session();
    const ms = forms.map(() => []);
    for (let r = 0; r <= REPS; r++) {
      for (const [i, [, text, values]] of forms.entries()) {
        const t = await timedRolledBack(client, async () => {
          const { rowCount } = await client.query(text, values);
          if (rowCount !== 1) throw new Error(`completed ${rowCount} of 1`);
        });
        if (r > 0) ms[i].push(t);
      }
    }
    rows.push([String(others), ...ms.map((xs) => spread(xs))]);
  });
}

console.log(`# complete() of one job by hand, ms: median (min–max) of ${REPS}; the queue's jobs in jobs_default`);
console.log(`# ${machine}\n`);
table(
  ['other queues with partitions', "completeNonParentJobs (names the queue's table)", 'completeJobs (its release of children names jobs)'],
  rows,
);
