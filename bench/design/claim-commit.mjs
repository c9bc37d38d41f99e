// docs/design.md, "The claim: one statement": what waiting for the WAL flush costs a one-job claim under a steady
// load of one-at-a-time sends, the case where a worker claims each job as it arrives.
//
//   node bench/design/claim-commit.mjs [--rounds 500]
//
// Each round sends one job (send(), a durable commit), claims it as a worker does (claimJobs, one job, a named
// prepared statement on a connection with the engine's session settings) and completes it; the claim alone is
// timed. The claim commits without waiting for the flush ($6 true: synchronous_commit off for its transaction, as
// a worker's claim) or waiting for it ($6 false: as fetch() claims), the two taking turns.
import { describeServer, inSchema, intArg, quantile, sql, table, timed } from './common.mjs';

const ROUNDS = intArg('rounds', 500);

await inSchema('commit', async (ctx) => {
  const { q, admin } = ctx;
  const machine = await describeServer(admin);
  await q.createQueue('c');
  const st = await ctx.statementsFor('c');
  const client = await ctx.session();
  const forms = [
    ['waits for the flush (synchronous_commit on)', false],
    ["does not wait (synchronous_commit off, a worker's claim)", true],
  ];
  const ms = forms.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, [, asyncCommit]] of forms.entries()) {
      await q.send('c', { r });
      const values = sql.claimArgs({ queue: 'c', limit: 1, workerId: 'bench', minPriority: null, maxPriority: null, asyncCommit });
      let row;
      const t = await timed(async () => {
        [row] = (await client.query({ name: 'design_claim', text: st.claimJobs, values })).rows;
      });
      if (!row) throw new Error('claimed nothing');
      const done = await client.query(
        st.completeLeafJobs,
        sql.completeLeafArgs(
          { queue: 'c', ids: [row.id], retryCounts: null, workerId: 'bench', claimCounts: [row.claim_count], stamps: [row.stamp] },
          null,
          null,
        ),
      );
      if (done.rowCount !== 1) throw new Error('completed nothing');
      if (r >= 10) ms[i].push(t);
    }
  }
  console.log(`# One-job claim under one-at-a-time sends, wall ms, ${ROUNDS - 10} claims each (taking turns)`);
  console.log(`# ${machine}\n`);
  table(
    ['claim commit', 'p50', 'p95'],
    forms.map(([label], i) => [label, quantile(ms[i], 0.5).toFixed(2), quantile(ms[i], 0.95).toFixed(2)]),
  );
});
