import { engineExec, engineStatements, queueFixture } from '../helpers/queue.js';
import { testUrl } from '../helpers/db.js';
import { statementName } from '../../lib/core/runtime/db.js';
import { runtimeOf } from '../../lib/core/pg-queue.js';

const f = queueFixture('claim');
const q = f.create();
afterAll(() => f.cleanup());

describe('fetch (the claim)', () => {
  it('claims in order: priority first, then start_after, then id', async () => {
    await q.createQueue('order');
    const past = new Date(Date.now() - 60_000);
    const [low, high, olderStart, plain] = await q.insert('order', [
      { data: 'low', priority: -1 },
      { data: 'high', priority: 10 },
      { data: 'older-start', startAfter: past },
      { data: 'plain' },
    ]);
    const jobs = await q.fetch('order', { batchSize: 10 });
    expect(jobs.map((j) => j.id)).toEqual([high, olderStart, plain, low]);
    expect(jobs.every((j) => j.name === 'order' && j.retryCount === 0)).toBe(true);
  });

  it('marks claimed jobs active with a lease and holder', async () => {
    await q.createQueue('lease', { expireInSeconds: 42 });
    const id = await q.send('lease', { x: 1 });
    const [job] = await q.fetch('lease');
    expect(job!.id).toBe(id);
    const [row] = await f.sql<{ state: string; worker_id: string; lease_s: number }>(
      `SELECT state::text, worker_id, extract(epoch FROM lease_until - started_on)::int AS lease_s FROM $schema.jobs WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ state: 'active', worker_id: q.fetcherId, lease_s: 42 });
    expect(await q.fetch('lease')).toEqual([]);
  });

  it('does not claim deferred jobs until their time', async () => {
    await q.createQueue('deferred');
    const id = await q.send('deferred', {}, { startAfter: 3600 });
    expect(await q.fetch('deferred')).toEqual([]);
    await f.sql(`UPDATE $schema.jobs SET start_after = now() - interval '1 second' WHERE id = $1`, [id]);
    expect((await q.fetch('deferred')).map((j) => j.id)).toEqual([id]);
  });

  it('minPriority and maxPriority filter what is claimed', async () => {
    await q.createQueue('prio');
    const [p1, p5, p9] = await q.insert('prio', [{ priority: 1 }, { priority: 5 }, { priority: 9 }]);
    expect((await q.fetch('prio', { batchSize: 5, minPriority: 2, maxPriority: 8 })).map((j) => j.id)).toEqual([p5]);
    expect((await q.fetch('prio', { batchSize: 5, maxPriority: 3 })).map((j) => j.id)).toEqual([p1]);
    expect((await q.fetch('prio', { batchSize: 5 })).map((j) => j.id)).toEqual([p9]);
  });

  it('priority bounds limit the walk of the ready index, whatever values the plan was made for', async () => {
    const one = f.create({ poolSize: 1 });
    await one.createQueue('prio-walk', { partition: true }); // its backlog stays out of the shared partition that a later test sizes
    await one.insert(
      'prio-walk',
      Array.from({ length: 3000 }, (_, i) => ({ priority: i % 3 })),
    ); // 1,000 of each of 0, 1, 2
    const exec = engineExec(one);
    const statements = await engineStatements(one, 'prio-walk');
    await exec.query(`PREPARE prio_walk AS ${statements.claimJobs}`);
    await exec.query(`BEGIN`);
    // minPriority 2 with room for more than there are: the walk stops where priority 2 ends
    const plan = (
      await exec.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE prio_walk('prio-walk', 2000, 'w', 2, NULL, false)`,
      )
    )
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    await exec.query(`ROLLBACK`);
    expect(plan).toMatch(/rows=1000(\.00)? loops=1/); // (PostgreSQL 18 prints rows=1000.00)
    expect(plan).toMatch(/Index Cond: [^\n]*priority >= /);
  });

  it('concurrent claimers never receive the same job', async () => {
    await q.createQueue('race');
    const ids = await q.insert(
      'race',
      Array.from({ length: 400 }, (_, i) => ({ data: i })),
    );
    const claimers = Array.from({ length: 4 }, () => f.create({ poolSize: 3 }));
    const claimed: string[] = [];
    await Promise.all(
      claimers.map(async (c) => {
        for (;;) {
          const batch = await c.fetch('race', { batchSize: 7 });
          if (batch.length === 0) return;
          claimed.push(...batch.map((j) => j.id));
        }
      }),
    );
    expect(claimed).toHaveLength(400);
    expect(new Set(claimed).size).toBe(400);
    expect([...claimed].sort()).toEqual([...ids].sort());
  });

  it('the claim reads the ready index, not the finished rows', async () => {
    await q.createQueue('plan');
    await q.insert(
      'plan',
      Array.from({ length: 50 }, (_, i) => ({ data: i })),
    );
    // 20,000 finished rows, which the ready index never holds.
    await f.sql(`INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
      SELECT 'plan', 'completed', 0, 0, false, 60, 60, now() FROM generate_series(1, 20000)`);
    await f.sql('ANALYZE $schema.jobs_default');
    const plan = (
      await f.sql<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM $schema.jobs WHERE queue = 'plan' AND state < 'active' AND start_after <= now() ORDER BY priority DESC, start_after, id LIMIT 5`,
      )
    )
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toMatch(/Index (Only )?Scan using jobs_default_queue_priority_start_after_id_idx/);
    const [size] = await f.sql<{ ready: number; pkey: number }>(
      `SELECT pg_relation_size($1::regclass)::int AS ready, pg_relation_size($2::regclass)::int AS pkey`,
      [`"${f.schema}".jobs_default_queue_priority_start_after_id_idx`, `"${f.schema}".jobs_default_pkey`],
    );
    expect(size!.ready * 10).toBeLessThan(size!.pkey);
  });

  it('the engine prepares its claim once per connection and plans it once (a generic plan), never per run', async () => {
    const one = f.create({ poolSize: 1 }); // one connection: every statement below runs on it
    await one.createQueue('prepared');
    await one.insert(
      'prepared',
      Array.from({ length: 12 }, () => ({})),
    );
    for (let i = 0; i < 12; i++) expect(await one.fetch('prepared')).toHaveLength(1);
    const exec = engineExec(one);
    // (this query is prepared too, and its text holds the pattern: it is left out by name)
    const claims = await exec.query<{ generic_plans: number; custom_plans: number }>(
      `SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements
       WHERE statement LIKE '%WITH next AS MATERIALIZED%' AND statement NOT LIKE '%pg_prepared_statements%'`,
    );
    expect(claims).toEqual([{ generic_plans: 12, custom_plans: 0 }]);
  });

  it("a worker's claim commits without waiting for its flush, fetch()'s waits; neither changes the session", async () => {
    const one = f.create({ poolSize: 1 });
    await one.createQueue('flush');
    await one.insert('flush', [{}, {}]);
    const exec = engineExec(one);
    const statements = await engineStatements(one, 'flush');
    const [session] = await exec.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`);
    expect(session!.s).not.toBe('off');
    const inClaim = async (asyncCommit: boolean) => {
      await exec.query('BEGIN');
      const rows = await exec.query(statements.claimJobs, ['flush', 1, 'w', null, null, asyncCommit]);
      const [after] = await exec.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`);
      await exec.query('ROLLBACK');
      expect(rows).toHaveLength(1);
      return after!.s;
    };
    expect(await inClaim(true)).toBe('off');
    expect(await inClaim(false)).toBe(session!.s);
    expect((await exec.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`))[0]).toEqual(session);
  });

  it("the engine's session settings hold even when the connection string carries its own options", async () => {
    const url = new URL(testUrl());
    url.searchParams.set('options', '-c statement_timeout=600000');
    const q2 = f.create({ connectionString: url.toString(), poolSize: 1 });
    await q2.createQueue('session');
    const exec = engineExec(q2);
    const [settings] = await exec.query<Record<string, string>>(
      `SELECT current_setting('enable_bitmapscan') AS bitmap, current_setting('enable_seqscan') AS seq, current_setting('plan_cache_mode') AS plans,
         current_setting('default_transaction_isolation') AS isolation, current_setting('statement_timeout') AS timeout`,
    );
    expect(settings).toEqual({ bitmap: 'off', seq: 'off', plans: 'force_generic_plan', isolation: 'read committed', timeout: '10min' });
  });

  it('a prepared statement whose result a migration changed is sent again unnamed, and naming stops', async () => {
    // A release migrating while an older one runs may change the type of a column a prepared statement returns:
    // PostgreSQL then refuses the statement on every connection that prepared it (0A000, "cached plan must not change
    // result type"), however often it is sent.
    const lines: string[] = [];
    const one = f.create({ poolSize: 1, supervise: false, logger: { log() {}, warn: (m: string) => lines.push(m), error: () => {} } });
    await one.createQueue('retyped');
    await one.insert('retyped', [{}, {}, {}]);
    expect(await one.fetch('retyped')).toHaveLength(1); // the claim is prepared, its generic plan made
    expect(runtimeOf(one).namesStatements).toBe(true);
    await f.sql(`ALTER TABLE $schema.jobs ALTER COLUMN retry_limit TYPE bigint`);
    try {
      expect(await one.fetch('retyped')).toHaveLength(1);
      expect(runtimeOf(one).namesStatements).toBe(false);
      expect(await one.fetch('retyped')).toHaveLength(1);
      expect(lines.filter((l) => l.includes('cached plan must not change result type'))).toHaveLength(1);
    } finally {
      // the schema is the file's: later tests (and engines) see the column as the migrations made it
      await one.close();
      await f.sql(`ALTER TABLE $schema.jobs ALTER COLUMN retry_limit TYPE integer`);
    }
  });

  it('with preparedStatements: false nothing is prepared (for transaction-mode poolers)', async () => {
    const plain = f.create({ poolSize: 1, preparedStatements: false });
    await plain.createQueue('unprepared');
    await plain.insert('unprepared', [{}, {}]);
    expect(await plain.fetch('unprepared', { batchSize: 2 })).toHaveLength(2);
    const exec = engineExec(plain);
    expect(await exec.query(`SELECT name FROM pg_prepared_statements`)).toEqual([]);
  });

  it('a claim planned once on an empty table still reads only the rows it claims after the table has grown', async () => {
    const one = f.create({ poolSize: 1 }); // one connection: the plan examined below is the one every claim used
    await one.createQueue('grow');
    await one.createQueue('neighbour');
    expect(await one.fetch('grow')).toEqual([]); // the claim is prepared and planned here, on an empty table
    expect(await one.send('grow', { n: 0 })).not.toBeNull();
    expect(await one.fetch('grow')).toHaveLength(1);
    // The table grows with no ANALYZE (autovacuum has not come yet): history, a backlog, another queue's jobs.
    await f.sql(`INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until, worker_id, claim_count)
      SELECT CASE WHEN g % 4 = 0 THEN 'neighbour' ELSE 'grow' END, CASE WHEN g % 50 = 0 THEN 'created' ELSE 'completed' END::$schema.job_state,
        0, 0, false, 60, 60, now() + interval '1 day', 'w', 1 FROM generate_series(1, 20000) g`);
    const exec = engineExec(one);
    const statements = await engineStatements(one, 'grow');
    const plan = (
      await exec.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE ${statementName(statements.claimJobs)}('grow', 5, 'w', NULL, NULL, true)`,
      )
    )
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toMatch(/Index Scan using \S+_priority_start_after_id_idx/);
    expect(plan).toMatch(/Tid Scan/);
    expect(plan).not.toMatch(/Seq Scan|Bitmap|jobs\S*_pkey|->\s+Sort\s+\(/);
    // whether a job is a flow parent: one probe of job_deps per claimed row, never all of it hashed
    expect(plan).toMatch(/job_deps_pkey on job_deps d[^\n]*\n\s*Index Cond: \(\(parent_queue = /);
    expect(plan).toMatch(/actual time=\S+ rows=5(\.00)? loops=1/); // it claimed five
    const buffers = Math.max(...[...plan.matchAll(/shared hit=(\d+)/g)].map((m) => Number(m[1])));
    expect(buffers).toBeLessThan(100); // 20,000 rows in the table: a scan of the queue would read hundreds of pages
    expect(await one.fetch('grow', { batchSize: 500 })).toHaveLength(200 - 5); // the rest of its 200 queued
  });

  it("on a new queue's partition, with and without statistics, the claim walks the ready index and updates by tid", async () => {
    const one = f.create({ poolSize: 1 });
    await one.createQueue('fresh', { partition: true });
    await one.insert(
      'fresh',
      Array.from({ length: 20_000 }, (_, i) => ({ data: i })),
    );
    const exec = engineExec(one);
    const statements = await engineStatements(one, 'fresh');
    let n = 0;
    const genericPlan = async () => {
      const name = `claim_${++n}`;
      await exec.query(`PREPARE ${name} AS ${statements.claimJobs}`);
      return (await exec.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}('fresh', 150, 'w', NULL, NULL, true)`))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    };
    for (const phase of ['no statistics', 'analysed']) {
      if (phase === 'analysed') await exec.query(`ANALYZE "${f.schema}".jobs`);
      const claim = await genericPlan();
      expect({ phase, claim }).toEqual({
        phase,
        claim: expect.stringMatching(/Index Scan using \S+_priority_start_after_id_idx[\s\S]*Tid Scan/),
      });
      expect({ phase, claim }).toEqual({ phase, claim: expect.not.stringMatching(/Bitmap|->\s+Sort\s+\(|Seq Scan|Hash/) });
    }
  });
});
