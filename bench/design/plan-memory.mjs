// docs/design.md, "Planning: what is prepared and what is planned on each run": the memory a statement's cached
// generic plan holds in the backend of a connection that prepared it, for one table (a queue's own partition).
//
//   node bench/design/plan-memory.mjs
//
// Each statement is prepared on a connection with the engine's session settings and explained once with null
// parameters (which builds and keeps its generic plan, as its first run would); the memory is the growth of the
// backend's cached-plan contexts (pg_backend_memory_contexts).
import { describeServer, inSchema, table } from './common.mjs';

const STATEMENTS = [
  'claimJobs',
  'insertJobs',
  'nextDue',
  'completeLeafJobs',
  'removeLeafJobs',
  'failLeafJobs',
  'releaseJobs',
  'heartbeatJobs',
  'completeJobs',
  'failJobs',
];

await inSchema('planmem', async (ctx) => {
  const { q, admin } = ctx;
  const machine = await describeServer(admin);
  await q.createQueue('m', { partition: true });
  const st = await ctx.statementsFor('m');
  const client = await ctx.session();
  const cached = async () =>
    Number(
      (
        await client.query(
          `SELECT coalesce(sum(total_bytes), 0)::bigint AS b FROM pg_backend_memory_contexts
           WHERE name IN ('CachedPlan', 'CachedPlanSource', 'CachedPlanQuery')`,
        )
      ).rows[0].b,
    );
  const rows = [];
  for (const name of STATEMENTS) {
    const text = st[name];
    const params = Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const before = await cached();
    await client.query(`PREPARE p_${name} AS ${text}`);
    await client.query('BEGIN');
    await client.query(`EXPLAIN EXECUTE p_${name}(${Array.from({ length: params }, () => 'NULL').join(', ')})`);
    await client.query('ROLLBACK');
    rows.push([name, ((await cached()) - before) / 1024]);
  }
  console.log(`${machine}\n`);
  table(
    ['statement', 'cached plan KiB'],
    rows.map(([n, kib]) => [n, kib.toFixed(0)]),
  );
});
