import { PermanentJobError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

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
    expect(job.keepUntil.getTime() - job.completedOn!.getTime()).toBe(7 * 24 * 3600 * 1000);
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
    expect(job.startAfter.getTime() - now.getTime()).toBeGreaterThanOrEqual(30_000);
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

  it('a PermanentJobError fails at once, with no retry', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.fail('s', id, new PermanentJobError('bad input'));
    expect(await q.getJobById('s', id)).toMatchObject({ state: 'failed', retryCount: 0 });
  });

  it('an error with retryAfterSeconds is retried after exactly that delay', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.fail('s', id, Object.assign(new Error('429'), { retryAfterSeconds: 7 }));
    const [row] = await f.sql<{ delay: number }>(
      `SELECT extract(epoch FROM start_after - now())::float8 AS delay FROM $schema.jobs WHERE id = $1`,
      [id],
    );
    expect(row!.delay).toBeGreaterThan(6);
    expect(row!.delay).toBeLessThanOrEqual(7);
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
    if (Array.isArray(v)) return `'{${v.map((x) => (x === null ? 'NULL' : `"${String(x).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)).join(',')}}'`;
    return `'${String(v).replaceAll("'", "''")}'`;
  };

  /** The active jobs of `queue` that the tests below settle: 10 of them (all claimed by fetch()). */
  async function tenActive(queue: string): Promise<string[]> {
    const named = (await f.sql<{ id: string }>(
      `SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state = 'active' ORDER BY id DESC LIMIT 10`, [queue])).map((r) => r.id);
    expect(named).toHaveLength(10);
    return named;
  }

  /** Each settle of `one`'s engine, with its parameters for the jobs `named` of `queue`. */
  function settles(one: ReturnType<typeof f.create>, queue: string, named: string[]): [string, unknown[]][] {
    const all = <T>(v: T) => named.map(() => v);
    const worker = one.fetcherId;
    const channel = one.config.channel;
    return [
      ['completeJobs', [queue, named, all(null), all('{}'), worker, all(1), channel, all(null)]],
      ['completeLeafJobs', [queue, named, all(null), all('{}'), worker, all(1), all(null)]],
      ['removeLeafJobs', [queue, named, all(null), all('{}'), worker, all(1), all(null)]],
      ['failJobs', [queue, named, all(null), all('{"message":"x"}'), all(false), all(null), worker, all(1), channel, all(null)]],
      ['heartbeatJobs', [queue, named, all(1), worker, all(null)]],
      ['releaseJobs', [queue, named, all(1), worker, channel, all(null)]],
    ];
  }

  /**
   * Runs (and rolls back) each statement of `runs` on `one`'s engine, with its plan as the engine makes it, and
   * returns, per statement, the reads of `table` that returned more rows than `most` (none: one probe per job).
   */
  async function overReads(one: ReturnType<typeof f.create>, table: string, most: number, runs: [string, unknown[]][]): Promise<Record<string, string[]>> {
    const exec = (one as unknown as { exec: { query<R>(text: string): Promise<R[]> } }).exec;
    const statements = (one as unknown as { statements: Record<string, string> }).statements;
    const over: Record<string, string[]> = {};
    for (const [name, values] of runs) {
      await exec.query(`PREPARE by_id AS ${statements[name]}`);
      await exec.query('BEGIN');
      const plan = (await exec.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE by_id(${values.map(literal).join(', ')})`,
      )).map((r) => r['QUERY PLAN']);
      await exec.query('ROLLBACK');
      await exec.query('DEALLOCATE by_id');
      const reads = plan.filter((line) => new RegExp(`Scan .* on ${table} `).test(line));
      expect({ name, reads: reads.length > 0 }).toEqual({ name, reads: true });
      over[name] = reads.filter((line) => {
        const run = /rows=(\d+)(?:\.\d+)? loops=(\d+)/.exec(line); // null: never executed
        return run !== null && Number(run[1]) * Number(run[2]) > most;
      });
    }
    return over;
  }

  const none = { completeJobs: [], completeLeafJobs: [], removeLeafJobs: [], failJobs: [], heartbeatJobs: [], releaseJobs: [] };

  it('a settle probes only the jobs it names, with statistics taken in a quiet spell before a burst', async () => {
    const one = f.create({ poolSize: 1 }); // one connection, with the engine's session settings
    await one.createQueue('burst', { partition: true }); // statistics of its own partition
    // 300 jobs ran and completed; the statistics are taken then, with no job active
    await one.insert('burst', Array.from({ length: 300 }, () => ({})));
    const quiet = await one.fetch('burst', { batchSize: 300 });
    expect((await one.complete('burst', quiet.map((j) => j.id))).updated).toBe(300);
    const [{ partition }] = (await f.sql<{ partition: string }>(`SELECT $schema.queue_partition_name('burst') AS partition`)) as [{ partition: string }];
    await f.sql(`ANALYZE $schema."${partition}"`);
    // then 3,000 jobs active at once
    await one.insert('burst', Array.from({ length: 3000 }, () => ({})));
    let active = 0;
    while (active < 3000) active += (await one.fetch('burst', { batchSize: 1000 })).length;
    expect(await overReads(one, partition, 10, settles(one, 'burst', await tenActive('burst')))).toEqual(none);
  });

  it('a settle, or a change by hand, probes only the jobs it names in one large queue among many small ones', async () => {
    const one = f.create({ poolSize: 1 });
    await one.createQueue('large');
    // the shared partition: 1,000 small queues of 3 finished jobs, and 'large' with 10,000 finished and 1,000 active
    await f.sql(`INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
      SELECT CASE WHEN g <= 3000 THEN 'small-' || g % 1000 ELSE 'large' END, 'completed', 0, 0, false, 60, 60, now() FROM generate_series(1, 13000) g`);
    await one.insert('large', Array.from({ length: 1000 }, () => ({})));
    expect(await one.fetch('large', { batchSize: 1000 })).toHaveLength(1000);
    await f.sql('ANALYZE $schema.jobs_default');
    const named = await tenActive('large');
    expect(await overReads(one, 'jobs_default', 10, settles(one, 'large', named))).toEqual(none);
    // and so do the changes by hand, which name jobs in any state
    const byHand = ['cancelJobs', 'resumeJobs', 'deleteJobs', 'retryJobs', 'getJobStates', 'listDeadLetteredByIds'];
    const values = (name: string) => (name === 'resumeJobs' || name === 'retryJobs' ? ['large', named, one.config.channel] : name === 'listDeadLetteredByIds' ? ['large', named, 100] : ['large', named]);
    expect(await overReads(one, 'jobs_default', 10, byHand.map((name) => [name, values(name)]))).toEqual(Object.fromEntries(byHand.map((name) => [name, []])));
  });
});
