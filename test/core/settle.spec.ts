import { PermanentJobError } from '../../lib/core/errors.js';
import { recordingLogger, stateCounts, until } from '../helpers/db.js';
import { engineExec, engineStatements, queueFixture } from '../helpers/queue.js';
import { runtimeOf, type PgQueue } from '../../lib/core/pg-queue.js';

const f = queueFixture('settle');
const q = f.create();
beforeAll(async () => {
  await q.createQueue('s', { retryLimit: 1, retryDelay: 30 });
});
afterAll(() => f.cleanup());

async function claimOne(): Promise<string> {
  const [job] = await q.fetch('s');
  if (!job) throw new Error('nothing to claim');
  return job.id;
}

describe('complete', () => {
  it('completes an active job with its output and sets when it may be deleted', async () => {
    await q.send('s', { a: 1 });
    const id = await claimOne();
    expect(await q.complete('s', id, { ok: true })).toEqual({ requested: 1, updated: 1, ids: [id] });
    const job = (await q.getJobById('s', id))!;
    expect(job).toMatchObject({ state: 'completed', output: { ok: true } });
    expect(job.keepUntil!.getTime() - job.completedOn!.getTime()).toBe(7 * 24 * 3600 * 1000);
  });

  it('does not complete a job that is not active', async () => {
    const id = (await q.send('s', {}))!;
    expect((await q.complete('s', id)).updated).toBe(0);
    expect((await q.getJobById('s', id))!.state).toBe('created');
    await q.deleteJob('s', id);
  });

  it('with { id, retryCount } it completes only that attempt', async () => {
    await q.send('s', {});
    const id = await claimOne();
    expect((await q.complete('s', { id, retryCount: 1 }, 'stale')).updated).toBe(0);
    expect((await q.complete('s', { id, retryCount: 0 }, 'current')).updated).toBe(1);
    expect((await q.getJobById('s', id))!.output).toBe('current');
  });
});

describe('fail', () => {
  it('puts the job back in retry after retryDelay while retries remain, then fails it for good', async () => {
    await q.send('s', {});
    const id = await claimOne();
    const [{ now }] = (await f.sql<{ now: Date }>('SELECT now()')) as [{ now: Date }];
    await q.fail('s', id, new Error('first'));
    let job = (await q.getJobById('s', id))!;
    expect(job).toMatchObject({ state: 'retry', retryCount: 1 });
    expect(job.startAfter!.getTime() - now.getTime()).toBeGreaterThanOrEqual(30_000);
    expect(job.output).toMatchObject({ error: { name: 'Error', message: 'first' } });

    await f.sql(`UPDATE $schema.jobs SET start_after = now() WHERE id = $1`, [id]);
    expect(await claimOne()).toBe(id);
    await q.fail('s', id, 'second, a string');
    job = (await q.getJobById('s', id))!;
    expect(job).toMatchObject({ state: 'failed', retryCount: 1 });
    expect(job.completedOn).toBeInstanceOf(Date);
    const output = job.output as { error: { message: string }; errors: { message: string }[] };
    expect(output.error.message).toBe('second, a string');
    expect(output.errors.map((e) => e.message)).toEqual(['first', 'second, a string']);
  });

  it("a handler's throw is stored as thrown: an error's fields and cause; a thrown object's message and fields", async () => {
    await q.createQueue('s.thrown', { retryLimit: 0 });
    const [byError, byObject] = await q.insert('s.thrown', [{ data: { kind: 'error' } }, { data: { kind: 'object' } }]);
    await q.work('s.thrown', { concurrency: 2, pollingIntervalSeconds: 0.05 }, async (job) => {
      if ((job.data as { kind: string }).kind === 'error') {
        throw Object.assign(new Error('invalid order', { cause: new Error('negative total') }), {
          code: 'E_INVALID',
          statusCode: 422,
          details: [{ path: 'total' }],
        });
      }
      // What the test is about: a handler that throws a plain object.
      throw { message: 'no stock left', sku: 'A-1' };
    });
    await until(async () => (await stateCounts(f.pool, f.schema, 's.thrown')).failed === 2, 'both jobs failed');
    await q.offWork('s.thrown');
    expect((await q.getJobById('s.thrown', byError!))!.output).toMatchObject({
      error: { name: 'Error', message: 'invalid order', code: 'E_INVALID', statusCode: 422, details: [{ path: 'total' }] },
    });
    expect((await q.getJobById('s.thrown', byError!))!.output).toMatchObject({ error: { cause: { message: 'negative total' } } });
    expect((await q.getJobById('s.thrown', byObject!))!.output).toMatchObject({
      error: { name: 'Error', message: 'no stock left', sku: 'A-1', thrown: 'object' },
    });
  });

  it.each([true, false])(
    'a worker logs each failed attempt as a warning and a failure for good as an error (logJobFailures: %s)',
    async (logJobFailures) => {
      const logger = recordingLogger();
      const w = f.create({ logger, logJobFailures, supervise: false });
      const name = `s.logged.${logJobFailures}`;
      await w.createQueue(`${name}.dlq`);
      await w.createQueue(name, { retryLimit: 1, deadLetter: `${name}.dlq` });
      const id = await w.send(name, {});
      await w.work(name, { pollingIntervalSeconds: 0.05 }, async (job) => {
        throw new Error(`attempt ${job.retryCount + 1} went wrong`);
      });
      await until(async () => (await w.getJobById(name, id!))!.state === 'failed', 'the job failed for good');
      await w.offWork(name);
      const about = logger.lines.filter((l) => l.message.includes(`job ${id} of queue "${name}"`));
      expect(about).toEqual(
        logJobFailures
          ? [
              {
                level: 'warn',
                message: `job ${id} of queue "${name}" failed (attempt 1): attempt 1 went wrong; it will be retried in 0 s`,
              },
              {
                level: 'error',
                message: `job ${id} of queue "${name}" failed (attempt 2): attempt 2 went wrong; it failed for good (the queue's dead-letter queue: "${name}.dlq")`,
              },
            ]
          : [],
      );
      await w.close();
    },
  );

  it('a PermanentJobError fails at once, with no retry', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.fail('s', id, new PermanentJobError('bad input'));
    expect(await q.getJobById('s', id)).toMatchObject({ state: 'failed', retryCount: 0 });
  });

  it('an error with retryAfterSeconds is retried after exactly that delay', async () => {
    await q.send('s', {});
    const id = await claimOne();
    // start_after is the fail's now() + 7 s, and that now() lies between the statement timestamps read before and
    // after the fail: the delay is at most start_after − before and at least start_after − after, however slow the
    // machine (as text, to keep the microseconds a Date would drop)
    const [before] = await f.sql<{ at: string }>(`SELECT statement_timestamp()::text AS at`);
    await q.fail('s', id, Object.assign(new Error('429'), { retryAfterSeconds: 7 }));
    const [row] = await f.sql<{ min: number; max: number }>(
      `SELECT extract(epoch FROM start_after - statement_timestamp())::float8 AS min,
         extract(epoch FROM start_after - $2::timestamptz)::float8 AS max
       FROM $schema.jobs WHERE id = $1`,
      [id, before!.at],
    );
    expect(row!.max).toBeGreaterThanOrEqual(7);
    expect(row!.min).toBeLessThanOrEqual(7);
  });
});

describe('job control', () => {
  it('cancel stops a job, resume brings it back, deleteJob removes it', async () => {
    const id = (await q.send('s', { c: 1 }))!;
    expect((await q.cancel('s', id)).updated).toBe(1);
    expect((await q.getJobById('s', id))!.state).toBe('cancelled');
    expect(await q.fetch('s')).toEqual([]);
    expect((await q.cancel('s', id)).updated).toBe(0);
    expect((await q.resume('s', [id])).updated).toBe(1);
    expect(await q.getJobById('s', id)).toMatchObject({ state: 'created', completedOn: null });
    expect((await q.deleteJob('s', id)).updated).toBe(1);
    expect(await q.getJobById('s', id)).toBeNull();
  });

  it('cancelling an active job makes its holder unable to complete it', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.cancel('s', id);
    expect((await q.complete('s', id)).updated).toBe(0);
    expect((await q.getJobById('s', id))!.state).toBe('cancelled');
  });

  it('getJobById returns null for an unknown id or another queue', async () => {
    await q.createQueue('other');
    const id = (await q.send('s', {}))!;
    expect(await q.getJobById('s', '999999999')).toBeNull();
    expect(await q.getJobById('other', id)).toBeNull();
  });
});

describe('plans', () => {
  /** An SQL literal of a parameter value (arrays as array literals), for EXECUTE. */
  const literal = (v: unknown): string => {
    if (v === null) return 'NULL';
    if (Array.isArray(v))
      return `'{${v.map((x) => (x === null ? 'NULL' : `"${String(x).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)).join(',')}}'`;
    return `'${String(v).replaceAll("'", "''")}'`;
  };

  /** Each read of a jobs partition in `plan` (an index, sequential or bitmap scan), with the lines that describe it. */
  const jobScans = (plan: string[]): string[][] =>
    plan.flatMap((line, i) => {
      if (!/Scan\b.*\bon jobs_\w+ /.test(line)) return [];
      const end = plan.findIndex((l, k) => k > i && l.includes('->'));
      return [[line, ...plan.slice(i + 1, end === -1 ? undefined : end)]];
    });

  /** The rows a scan's filters and rechecks removed. */
  const removedBy = (block: string[]): number =>
    block.reduce((n, l) => n + Number(/Rows Removed by (?:Index Recheck|Filter): (\d+)/.exec(l)?.[1] ?? 0), 0);

  /** An engine on one connection with the engine's session settings, and no maintenance pass to share it with. */
  const engine = () => f.create({ poolSize: 1, supervise: false });

  /**
   * Runs (and rolls back) each statement of `runs` as `one`'s engine runs it for `queue`, with its plan as the engine makes it, and
   * returns, per statement, its executed reads of the jobs table that are not a probe by id or that read more rows
   * (returned or filtered out) than `most`. An empty list for each: one probe per job named.
   */
  async function wideReads(one: PgQueue, queue: string, most: number, runs: [string, unknown[]][]): Promise<Record<string, string[]>> {
    const exec = engineExec(one);
    const statements = await engineStatements(one, queue);
    const wide: Record<string, string[]> = {};
    for (const [name, values] of runs) {
      await exec.query(`PREPARE by_id AS ${statements[name as keyof typeof statements]}`);
      await exec.query('BEGIN');
      const plan = (
        await exec.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE by_id(${values.map(literal).join(', ')})`,
        )
      ).map((r) => r['QUERY PLAN']);
      await exec.query('ROLLBACK');
      await exec.query('DEALLOCATE by_id');
      const scans = jobScans(plan);
      expect({ name, scans: scans.length > 0 }).toEqual({ name, scans: true });
      wide[name] = scans
        .filter(([line]) => !line!.includes('never executed'))
        .filter((block) => {
          const [, rows, loops] = /rows=(\d+)(?:\.\d+)? loops=(\d+)/.exec(block[0]!)!;
          const removed = removedBy(block);
          const byId = block.some((l) => /Index Cond: .*\bid = /.test(l));
          return !byId || (Number(rows) + removed) * Number(loops) > most;
        })
        .map((block) => block.join(' | '));
    }
    return wide;
  }

  /**
   * Every statement that names jobs, on jobs of `queue` (at least 40 of them active, claimed by fetch()): the
   * settles on 10 active jobs, and the changes by hand on 10 jobs each in the state they act on.
   */
  async function everyStatementByIds(one: PgQueue, queue: string): Promise<Record<string, string[]>> {
    const ids = (
      await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state = 'active' ORDER BY id DESC LIMIT 40`, [
        queue,
      ])
    ).map((r) => r.id);
    expect(ids).toHaveLength(40);
    const [active, cancelled, failed, dead] = [0, 10, 20, 30].map((k) => ids.slice(k, k + 10)) as [string[], string[], string[], string[]];
    await f.sql(`UPDATE $schema.jobs SET state = 'cancelled' WHERE queue = $1 AND id = ANY($2::bigint[])`, [queue, cancelled]);
    await f.sql(`UPDATE $schema.jobs SET state = 'failed' WHERE queue = $1 AND id = ANY($2::bigint[])`, [queue, failed]);
    await f.sql(`UPDATE $schema.jobs SET state = 'failed', source_name = $1 WHERE queue = $1 AND id = ANY($2::bigint[])`, [queue, dead]);
    const all = <T>(v: T) => active.map(() => v);
    const {
      fetcherId: worker,
      config: { channel },
    } = one;
    return wideReads(one, queue, 10, [
      ['completeJobs', [queue, active, all(null), all('{}'), worker, all(1), channel, all(null), channel]],
      ['completeLeafJobs', [queue, active, all(null), all('{}'), worker, all(1), all(null), channel]],
      ['completeQueuedJobs', [queue, active, all(null), all('{}'), null, all(null), channel, all(null), channel]],
      ['completeQueuedNonParentJobs', [queue, active, all(null), all('{}'), null, all(null), all(null), channel]],
      ['removeLeafJobs', [queue, active, all(null), all('{}'), worker, all(1), all(null), channel]],
      ['failJobs', [queue, active, all(null), all('{"message":"x"}'), all(false), all(null), worker, all(1), channel, all(null), channel]],
      ['heartbeatJobs', [queue, active, all(1), worker, all(null)]],
      ['releaseJobs', [queue, active, all(1), worker, channel, all(null)]],
      ['touchJobs', [queue, active, all(null)]],
      ['cancelJobs', [queue, active]],
      ['resumeJobs', [queue, cancelled, channel]],
      ['deleteJobs', [queue, active]],
      ['retryJobs', [queue, failed, channel]],
      ['getJobStates', [queue, active]],
      ['listDeadLetteredByIds', [queue, dead, 100, null, null]],
    ]);
  }

  const none = Object.fromEntries(
    [
      'completeJobs',
      'completeLeafJobs',
      'completeQueuedJobs',
      'completeQueuedNonParentJobs',
      'removeLeafJobs',
      'failJobs',
      'heartbeatJobs',
      'releaseJobs',
      'touchJobs',
      'cancelJobs',
      'resumeJobs',
      'deleteJobs',
      'retryJobs',
      'getJobStates',
      'listDeadLetteredByIds',
    ].map((name) => [name, []]),
  );

  /** The partition of a queue created with `partition: true`, with autovacuum off (its statistics stay as the test left them). */
  async function ownPartition(one: PgQueue, queue: string): Promise<string> {
    await one.createQueue(queue, { partition: true });
    const [{ partition }] = (await f.sql<{ partition: string }>(`SELECT $schema.queue_partition_name($1) AS partition`, [queue])) as [
      { partition: string },
    ];
    await f.sql(`ALTER TABLE $schema."${partition}" SET (autovacuum_enabled = false)`);
    return partition;
  }

  async function claimAll(one: PgQueue, queue: string, n: number): Promise<void> {
    await one.insert(
      queue,
      Array.from({ length: n }, () => ({})),
    );
    let claimed = 0;
    while (claimed < n) claimed += (await one.fetch(queue, { batchSize: 1000 })).length;
  }

  it('statements that name jobs probe each, with statistics taken in a quiet spell before a burst', async () => {
    const one = engine();
    const partition = await ownPartition(one, 'burst');
    // 300 jobs ran and completed; the statistics are taken then, with no job active
    await claimAll(one, 'burst', 300);
    await f.sql(`UPDATE $schema.jobs SET state = 'completed' WHERE queue = 'burst'`);
    await f.sql(`ANALYZE $schema."${partition}"`);
    await claimAll(one, 'burst', 3000); // then 3,000 jobs active at once
    expect(await everyStatementByIds(one, 'burst')).toEqual(none);
  });

  it('statements that name jobs probe each in a queue never analysed', async () => {
    const one = engine();
    await ownPartition(one, 'fresh');
    await f.sql(`INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
      SELECT 'fresh', 'completed', 0, 0, false, 60, 60, now() FROM generate_series(1, 20000)`);
    await claimAll(one, 'fresh', 40);
    // the 10 jobs settled are flow parents, each with a child waiting for it: completing them releases the children
    await one.flow(
      Array.from({ length: 10 }, (_, i) => [
        { name: 'fresh', ref: `p${i}` },
        { name: 'fresh', ref: `c${i}`, dependsOn: [`p${i}`] },
      ]).flat(),
    );
    expect(await one.fetch('fresh', { batchSize: 20 })).toHaveLength(10);
    expect(await everyStatementByIds(one, 'fresh')).toEqual(none);
  });

  it("the completions a worker prepares once, planned while its queue's table was small, probe the jobs it names", async () => {
    // A prepared statement keeps its generic plan until something invalidates it (new statistics, DDL, or any schema
    // made or dropped on the server, as other test files do): growth alone does not. So the plan each completion the
    // engine prepares (planOnce in lib/core/queues/router.ts) gets on a table of 60 jobs must already be one probe of
    // the primary key per job named, and stay so: it is read there, and run again after 23,000 more rows came in
    // (3,000 of them active), with no ANALYZE between.
    const one = engine();
    await ownPartition(one, 'grown');
    await claimAll(one, 'grown', 60);
    const exec = engineExec(one);
    const statements = await engineStatements(one, 'grown');
    const {
      fetcherId: worker,
      config: { channel },
    } = one;
    const runsOn = (ids: string[]): [string, unknown[]][] => {
      const all = <T>(v: T) => ids.map(() => v);
      return [
        ['completeLeafJobs', ['grown', ids, all(null), all('{}'), worker, all(1), all(null), channel]],
        ['removeLeafJobs', ['grown', ids, all(null), all('{}'), worker, all(1), all(null), channel]],
      ];
    };
    const activeIds = async () =>
      (
        await f.sql<{ id: string }>(
          `SELECT id::text FROM $schema.jobs WHERE queue = 'grown' AND state = 'active' ORDER BY id DESC LIMIT 10`,
        )
      ).map((r) => r.id);
    // each run in a transaction rolled back: the jobs stay active for the next statement
    const run = async (name: string, values: unknown[], explain: string) => {
      await exec.query('BEGIN');
      try {
        return (await exec.query<{ 'QUERY PLAN': string }>(`${explain} EXECUTE planned_${name}(${values.map(literal).join(', ')})`)).map(
          (r) => r['QUERY PLAN'],
        );
      } finally {
        await exec.query('ROLLBACK');
      }
    };
    /**
     * Each read of a jobs partition in `plan` (any scan: index, sequential, bitmap), with the lines that describe it,
     * that is not a probe of the primary key by id or that read more than `most` rows per loop (returned or removed).
     */
    const wideReads = (plan: string[], most: number) =>
      jobScans(plan)
        .filter(([line]) => !line!.includes('never executed'))
        .flatMap((block) => {
          const probe = /Index Scan using \S+_pkey/.test(block[0]!) && block.some((l) => /Index Cond: .*\bid = /.test(l));
          const rows = /rows=(\d+)/.exec(block[0]!);
          return probe && (rows === null || Number(rows[1]) + removedBy(block) <= most) ? [] : [block.join(' | ')];
        });
    const none = Object.fromEntries(runsOn([]).map(([name]) => [name, []]));
    const small: Record<string, string[]> = {};
    for (const [name, values] of runsOn(await activeIds())) {
      const text = statements[name as keyof typeof statements];
      expect({ name, prepared: runtimeOf(one).router.preparedTexts.has(text) }).toEqual({ name, prepared: true });
      await exec.query(`PREPARE planned_${name} AS ${text}`);
      const plan = await run(name, values, 'EXPLAIN (COSTS OFF)'); // planned here, on the small table, and kept
      expect({ name, reads: plan.some((l) => /Scan\b.*\bon jobs_\w+ /.test(l)) }).toEqual({ name, reads: true });
      small[name] = wideReads(plan, 1);
    }
    expect(small).toEqual(none);
    await f.sql(`INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
      SELECT 'grown', 'completed', 0, 0, false, 60, 60, now() FROM generate_series(1, 20000)`);
    await claimAll(one, 'grown', 3000);
    const grown: Record<string, string[]> = {};
    for (const [name, values] of runsOn(await activeIds()))
      grown[name] = wideReads(await run(name, values, 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)'), 1);
    expect(grown).toEqual(none);
  });

  it('statements that name jobs probe each in one large queue among many small ones', async () => {
    const one = engine();
    await one.createQueue('large');
    // the shared partition: 1,000 small queues of 3 finished jobs, and 'large' with 10,000 finished and 1,000 active
    await f.sql(`INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
      SELECT CASE WHEN g <= 3000 THEN 'small-' || g % 1000 ELSE 'large' END, 'completed', 0, 0, false, 60, 60, now() FROM generate_series(1, 13000) g`);
    await claimAll(one, 'large', 1000);
    await f.sql('ALTER TABLE $schema.jobs_default SET (autovacuum_enabled = false)');
    await f.sql('ANALYZE $schema.jobs_default');
    expect(await everyStatementByIds(one, 'large')).toEqual(none);
  });
});
