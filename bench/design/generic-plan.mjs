// docs/design.md, "Planning: what is prepared and what is planned on each run": a one-job claim planned for its
// values on every run against the same claim run on its generic plan, made once per connection.
//
//   node bench/design/generic-plan.mjs [--claims 1000]
//
// Two connections with the engine's session settings, one of them with plan_cache_mode = force_custom_plan. Each
// runs the claim as the engine does (a named prepared statement: claimJobs, one job, committed without waiting for
// the WAL flush) from one backlog, taking turns; the table prints the wall time of a claim, p50 and p95.
import { describeServer, inSchema, intArg, quantile, sql, table, timed } from './common.mjs';

const CLAIMS = intArg('claims', 1000);

await inSchema('generic', async (ctx) => {
  const { q, admin } = ctx;
  const machine = await describeServer(admin);
  await q.createQueue('g');
  for (let n = 0; n < 2 * CLAIMS + 1000; n += 1000)
    await q.insert(
      'g',
      Array.from({ length: 1000 }, () => ({})),
    );
  const st = await ctx.statementsFor('g');
  const custom = await ctx.session();
  await custom.query('SET plan_cache_mode = force_custom_plan');
  const generic = await ctx.session();
  const values = sql.claimArgs({ queue: 'g', limit: 1, workerId: 'bench', minPriority: null, maxPriority: null, asyncCommit: true });
  const claim = (client) => async () => {
    const { rowCount } = await client.query({ name: 'design_claim', text: st.claimJobs, values });
    if (rowCount !== 1) throw new Error(`claimed ${rowCount}`);
  };
  const forms = [
    ['planned for its values (force_custom_plan)', custom],
    ["generic plan (the engine's session)", generic],
  ];
  const ms = forms.map(() => []);
  for (let r = 0; r < CLAIMS; r++) {
    for (const [i, [, client]] of forms.entries()) {
      const t = await timed(claim(client));
      if (r >= 10) ms[i].push(t); // the first claims prepare the statement and warm the caches
    }
  }
  console.log(`# One-job claim, wall ms, ${CLAIMS - 10} claims each (taking turns)`);
  console.log(`# ${machine}\n`);
  table(
    ['claim', 'p50', 'p95'],
    forms.map(([label], i) => [label, quantile(ms[i], 0.5).toFixed(2), quantile(ms[i], 0.95).toFixed(2)]),
  );
});
