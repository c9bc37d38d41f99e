// docs/design.md, "Statements that name their jobs": why a settle joins its attempts as NAMED (queue and id as
// columns of a subquery kept whole) and tests the state as ACTIVE (text), and why redrive({ ids }) probes its ids.
//
//   node bench/design/named-plans.mjs [--reps 15]
//
// A worker's completion of 50 active jobs (completeLeafJobs, as the engine renders and plans it: unnamed, generic
// plan, the engine's session settings), in four states of the table's statistics, each written three ways:
//   NAMED + ACTIVE     the engine's statement
//   queue = $1         the attempts as a plain unnest, the queue as `j.queue = $1` (state still as text)
//   queue = $1, enum   and the state compared as the enum, `j.state = 'active'`
// Then redrive({ ids }) of 3 ids in a dead-letter queue of 200,000 jobs: listDeadLetteredByIds against the form
// it replaced, `($2 IS NULL OR d.id = ANY($2))`. Each statement runs in a transaction that is rolled back, the
// forms interleaved, after one warm-up round that is not counted.
import { activeAttempts, claimAll, describeServer, inSchema, intArg, sql, spread, table, timedRolledBack } from './common.mjs';

const REPS = intArg('reps', 15);
const N = 50;

/** The completion rewritten the plain way; throws if the statement no longer has the shape rewritten here. */
function plainForms(named) {
  const unnest = named.replace(
    /\(SELECT \$1::text AS queue, a\.\* FROM unnest\(([^()]*)\) AS a\(([^()]*)\) OFFSET 0\) u/,
    'unnest($1) AS u($2)',
  );
  const byQueue = unnest.replaceAll('j.queue = u.queue', 'j.queue = $1');
  const asEnum = byQueue.replaceAll("j.state::text = 'active'", "j.state = 'active'");
  if (unnest === named || byQueue === unnest || asEnum === byQueue)
    throw new Error('completeLeafJobs changed shape: update plainForms in this script');
  return { byQueue, asEnum };
}

/** Times the three forms of a completion of N active jobs of `queue`, interleaved. */
async function completions(ctx, queue) {
  const st = await ctx.statementsFor(queue);
  const { byQueue, asEnum } = plainForms(st.completeLeafJobs);
  const attempts = await activeAttempts(ctx.admin, ctx.S, queue, N);
  const values = sql.completeLeafArgs(
    {
      queue,
      ids: attempts.map((a) => a.id),
      retryCounts: null,
      workerId: attempts[0].worker_id,
      claimCounts: attempts.map((a) => a.claim_count),
      stamps: attempts.map((a) => a.stamp),
    },
    null,
    null,
  );
  const client = await ctx.session();
  const forms = [
    ['NAMED + ACTIVE', st.completeLeafJobs],
    ['queue = $1', byQueue],
    ['queue = $1, enum', asEnum],
  ];
  const ms = forms.map(() => []);
  for (let r = 0; r <= REPS; r++) {
    for (const [i, [, text]] of forms.entries()) {
      const t = await timedRolledBack(client, async () => {
        const { rowCount } = await client.query(text, values);
        if (rowCount !== N) throw new Error(`completed ${rowCount} of ${N}`);
      });
      if (r > 0) ms[i].push(t);
    }
  }
  return ms.map((xs) => spread(xs));
}

const rows = [];
let machine = '';

// 1. Statistics taken in a quiet spell (300 jobs, all finished), then a burst of 15,000 active jobs.
await inSchema('named_quiet', async (ctx) => {
  machine = await describeServer(ctx.admin);
  const { q, S, admin } = ctx;
  await q.createQueue('burst', { partition: true });
  const part = (await admin.query(`SELECT ${S}.queue_partition_name('burst') AS p`)).rows[0].p;
  await admin.query(`ALTER TABLE ${S}."${part}" SET (autovacuum_enabled = false)`);
  await q.insert(
    'burst',
    Array.from({ length: 300 }, () => ({})),
  );
  await claimAll(q, 'burst');
  await admin.query(`UPDATE ${S}.jobs SET state = 'completed', completed_on = now() WHERE queue = 'burst'`);
  await admin.query(`ANALYZE ${S}."${part}"`);
  for (let i = 0; i < 15; i++)
    await q.insert(
      'burst',
      Array.from({ length: 1000 }, () => ({})),
    );
  await claimAll(q, 'burst');
  rows.push(['statistics of a quiet spell, then 15,000 active', ...(await completions(ctx, 'burst'))]);
});

// 2. A queue's own partition never analysed, 15,000 active jobs.
await inSchema('named_fresh', async (ctx) => {
  const { q, S, admin } = ctx;
  await q.createQueue('fresh', { partition: true });
  const part = (await admin.query(`SELECT ${S}.queue_partition_name('fresh') AS p`)).rows[0].p;
  await admin.query(`ALTER TABLE ${S}."${part}" SET (autovacuum_enabled = false)`);
  for (let i = 0; i < 15; i++)
    await q.insert(
      'fresh',
      Array.from({ length: 1000 }, () => ({})),
    );
  await claimAll(q, 'fresh');
  rows.push(['never analysed, 15,000 active', ...(await completions(ctx, 'fresh'))]);
});

// 3. One queue of 21,000 jobs (1,000 active) among 1,000 small ones of 3 finished jobs, in the shared partition.
await inSchema('named_many', async (ctx) => {
  const { q, S, admin } = ctx;
  await admin.query(`ALTER TABLE ${S}.jobs_default SET (autovacuum_enabled = false)`);
  await q.createQueue('large');
  await admin.query(`INSERT INTO ${S}.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until, completed_on)
    SELECT CASE WHEN g <= 3000 THEN 'small-' || g % 1000 ELSE 'large' END, 'completed', 0, 0, false, 60, 60, now(), now()
    FROM generate_series(1, 23000) g`);
  await q.insert(
    'large',
    Array.from({ length: 1000 }, () => ({})),
  );
  await claimAll(q, 'large');
  await admin.query(`ANALYZE ${S}.jobs_default`);
  rows.push(['1 queue of 21,000 among 1,000 small, 1,000 active', ...(await completions(ctx, 'large'))]);
});

// 4. A queue's own partition analysed while it held one job (the queue looks unique), then 15,000 active jobs.
await inSchema('named_one', async (ctx) => {
  const { q, S, admin } = ctx;
  await q.createQueue('one', { partition: true });
  const part = (await admin.query(`SELECT ${S}.queue_partition_name('one') AS p`)).rows[0].p;
  await admin.query(`ALTER TABLE ${S}."${part}" SET (autovacuum_enabled = false)`);
  await q.insert('one', [{}]);
  await admin.query(`ANALYZE ${S}."${part}"`);
  for (let i = 0; i < 15; i++)
    await q.insert(
      'one',
      Array.from({ length: 1000 }, () => ({})),
    );
  await claimAll(q, 'one');
  rows.push(['analysed while it held 1 job, then 15,000 active', ...(await completions(ctx, 'one'))]);
});

console.log(`# Completion of ${N} active jobs (completeLeafJobs), ms: median (min–max) of ${REPS}`);
console.log(`# ${machine}\n`);
table(['statistics', 'NAMED + ACTIVE', 'queue = $1', 'queue = $1, enum'], rows);

// 4. redrive({ ids }): 3 ids of a dead-letter queue of 200,000 jobs, the last three in id order.
await inSchema('named_redrive', async (ctx) => {
  const { q, S, admin } = ctx;
  await q.createQueue('src');
  await q.createQueue('dlq');
  await admin.query(`INSERT INTO ${S}.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until, completed_on, source_name, source_id)
    SELECT 'dlq', 'failed', 0, 0, false, 60, 60, now(), now(), 'src', g FROM generate_series(1, 200000) g`);
  await admin.query(`ANALYZE ${S}.jobs_default`);
  const ids = (await admin.query(`SELECT id::text FROM ${S}.jobs WHERE queue = 'dlq' ORDER BY id DESC LIMIT 3`)).rows.map((r) => r.id);
  const st = await ctx.statementsFor('dlq');
  const before = `
SELECT d.id::text FROM ${S}.jobs_default d
JOIN ${S}.queues src ON src.name = d.source_name
WHERE d.queue = $1 AND d.state IN ('created', 'retry', 'failed')
  AND ($2::bigint[] IS NULL OR d.id = ANY($2::bigint[]))
ORDER BY d.id
LIMIT $3`;
  const client = await ctx.session();
  const forms = [st.listDeadLetteredByIds, before];
  const ms = forms.map(() => []);
  for (let r = 0; r <= REPS; r++) {
    for (const [i, text] of forms.entries()) {
      const t = await timedRolledBack(client, async () => {
        const { rowCount } = await client.query(text, ['dlq', ids, 1000]);
        if (rowCount !== 3) throw new Error(`found ${rowCount} of 3`);
      });
      if (r > 0) ms[i].push(t);
    }
  }
  console.log(`\n# redrive({ ids }) of 3 ids in a dead-letter queue of 200,000 jobs: finding them, ms: median (min–max) of ${REPS}\n`);
  table(
    ['statement', 'ms'],
    [
      ['listDeadLetteredByIds (NAMED probes)', spread(ms[0])],
      ['`($2 IS NULL OR d.id = ANY($2))` (before)', spread(ms[1])],
    ],
  );
});
