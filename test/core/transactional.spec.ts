import type { Job } from '../../lib/core/types.js';
import { deferred, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('tx');
const q = f.create({ supervise: false });
beforeAll(async () => {
  await f.sql('CREATE SCHEMA IF NOT EXISTS $schema');
  await q.start();
  await f.sql('CREATE TABLE $schema.effects (job_id bigint NOT NULL, note text NOT NULL)');
  // Checked at COMMIT: a second row with the same k makes the COMMIT itself fail.
  await f.sql('CREATE TABLE $schema.deferred (k int, CONSTRAINT deferred_k UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)');
  await f.sql('CREATE TABLE $schema.counter (id int PRIMARY KEY, v int NOT NULL)');
  await f.sql('INSERT INTO $schema.counter VALUES (1, 0)');
});
afterAll(() => f.cleanup());

const effects = async (id: string) =>
  (await f.sql<{ note: string }>('SELECT note FROM $schema.effects WHERE job_id = $1', [id])).map((r) => r.note);

describe('transactional handlers', () => {
  it("the handler's writes commit together with the job's completion", async () => {
    await q.createQueue('tx.ok');
    await q.work('tx.ok', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job: Job<{ note: string }>) => {
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, $2)`, [job.id, job.data.note]);
      return 'written';
    });
    const id = (await q.send('tx.ok', { note: 'hello' }))!;
    await until(async () => (await q.getJobById('tx.ok', id))!.state === 'completed', 'completed');
    expect(await effects(id)).toEqual(['hello']);
    expect((await q.getJobById('tx.ok', id))!.output).toBe('written');
    await q.offWork('tx.ok');
  });

  it('a throw rolls the writes back and fails the attempt', async () => {
    await q.createQueue('tx.throw', { retryLimit: 0 });
    await q.work('tx.throw', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, 'should vanish')`, [job.id]);
      throw new Error('after writing');
    });
    const id = (await q.send('tx.throw', {}))!;
    await until(async () => (await q.getJobById('tx.throw', id))!.state === 'failed', 'failed');
    expect(await effects(id)).toEqual([]);
    await q.offWork('tx.throw');
  });

  it('when the worker lost the job meanwhile, the writes roll back and the result is refused', async () => {
    await q.createQueue('tx.lost');
    const started = deferred<string>();
    const gate = deferred();
    await q.work('tx.lost', { transactional: true }, async (job) => {
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, 'stale attempt')`, [job.id]);
      started.resolve(job.id);
      await gate.promise;
      return 'stale';
    });
    await q.send('tx.lost', {});
    const id = await started.promise;
    await q.cancel('tx.lost', id);
    const staleBefore = q.counters.staleResults;
    gate.resolve();
    await until(() => q.counters.staleResults === staleBefore + 1, 'stale result counted');
    expect(await effects(id)).toEqual([]);
    expect(await q.getJobById('tx.lost', id)).toMatchObject({ state: 'cancelled', output: null });
    await q.offWork('tx.lost');
  });

  it('a handler that swallows its own SQL error cannot complete: the attempt fails', async () => {
    await q.createQueue('tx.aborted', { retryLimit: 0 });
    await q.work('tx.aborted', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      await job.db!.query('SELECT 1/0').catch(() => undefined);
      return 'pretends all is well';
    });
    const id = (await q.send('tx.aborted', {}))!;
    await until(async () => (await q.getJobById('tx.aborted', id))!.state === 'failed', 'failed');
    expect(JSON.stringify((await q.getJobById('tx.aborted', id))!.output)).toContain('current transaction is aborted');
    await q.offWork('tx.aborted');
  });

  /** Waits for the job to complete and returns it, with the errors of its failed attempts. */
  const completedJob = async (queue: string, id: string) => {
    await until(async () => (await q.getJobById(queue, id))!.state === 'completed', `job ${id} of ${queue} completed`);
    return (await q.getJobById(queue, id))!;
  };

  it('a COMMIT that fails (a deferred constraint) fails the attempt, its writes roll back, and the retry completes', async () => {
    await q.createQueue('tx.commit', { retryLimit: 2 });
    await q.work('tx.commit', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, $2)`, [job.id, `attempt ${job.retryCount}`]);
      if (job.retryCount === 0) await job.db!.query(`INSERT INTO "${f.schema}".deferred (k) VALUES ($1), ($1)`, [Number(job.id)]);
      return 'committed';
    });
    const id = (await q.send('tx.commit', {}))!;
    const job = await completedJob('tx.commit', id);
    expect(job).toMatchObject({ retryCount: 1, output: 'committed' });
    expect(await effects(id)).toEqual(['attempt 1']);
    // The loop goes on: the connection whose COMMIT failed was given back once, and the next job runs.
    const next = (await q.send('tx.commit', {}))!;
    expect((await completedJob('tx.commit', next)).output).toBe('committed');
    await q.offWork('tx.commit');
  });

  it('a statement timeout inside the handler fails the attempt, its writes roll back, and the retry completes', async () => {
    await q.createQueue('tx.timeout', { retryLimit: 2 });
    let failure = '';
    await q.work('tx.timeout', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, $2)`, [job.id, `attempt ${job.retryCount}`]);
      if (job.retryCount === 0) {
        await job.db!.query("SET LOCAL statement_timeout = '50ms'");
        await job.db!.query('SELECT pg_sleep(5)').catch((err: Error & { code?: string }) => {
          failure = String(err.code);
          throw err;
        });
      }
      return 'in time';
    });
    const id = (await q.send('tx.timeout', {}))!;
    const job = await completedJob('tx.timeout', id);
    expect(failure).toBe('57014');
    expect(job).toMatchObject({ retryCount: 1, output: 'in time' });
    expect(await effects(id)).toEqual(['attempt 1']);
    await q.offWork('tx.timeout');
  });

  it('a serialization failure of a serializable handler fails the attempt, and the retry completes', async () => {
    await q.createQueue('tx.serial', { retryLimit: 2 });
    const read = deferred();
    const raced = deferred();
    let failure = '';
    await q.work('tx.serial', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      await job.db!.query('SET TRANSACTION ISOLATION LEVEL SERIALIZABLE');
      await job.db!.query(`SELECT v FROM "${f.schema}".counter WHERE id = 1`);
      if (job.retryCount === 0) {
        read.resolve();
        await raced.promise; // another transaction changed the row after this one's snapshot
      }
      await job.db!.query(`UPDATE "${f.schema}".counter SET v = v + 1 WHERE id = 1`).catch((err: Error & { code?: string }) => {
        failure = String(err.code);
        throw err;
      });
      return 'serialized';
    });
    const id = (await q.send('tx.serial', {}))!;
    await read.promise;
    await f.sql('UPDATE $schema.counter SET v = v + 100 WHERE id = 1');
    raced.resolve();
    const job = await completedJob('tx.serial', id);
    expect(failure).toBe('40001');
    expect(job).toMatchObject({ retryCount: 1, output: 'serialized' });
    expect((await f.sql<{ v: number }>('SELECT v FROM $schema.counter WHERE id = 1'))[0]!.v).toBe(101);
    await q.offWork('tx.serial');
  });

  it('a handler whose connection is terminated mid-transaction fails the attempt, and the loop goes on claiming', async () => {
    await q.createQueue('tx.killed', { retryLimit: 2 });
    let killed = false;
    await q.work('tx.killed', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, $2)`, [job.id, `attempt ${job.retryCount}`]);
      if (!killed) {
        killed = true;
        const [{ pid }] = (await job.db!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
        await f.pool.query('SELECT pg_terminate_backend($1)', [pid]);
        await job.db!.query('SELECT 1'); // the session is gone: this throws
      }
      return 'after the loss';
    });
    const id = (await q.send('tx.killed', {}))!;
    const job = await completedJob('tx.killed', id);
    expect(job).toMatchObject({ retryCount: 1, output: 'after the loss' });
    expect(await effects(id)).toEqual(['attempt 1']);
    const next = (await q.send('tx.killed', {}))!;
    expect((await completedJob('tx.killed', next)).retryCount).toBe(0);
    await q.offWork('tx.killed');
  });

  it('job.db cannot be released by the handler: the queue ends its transaction', async () => {
    await q.createQueue('tx.release');
    let refused: unknown = null;
    await q.work('tx.release', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      try {
        job.db!.release();
      } catch (err) {
        refused = err;
      }
      await job.db!.query(`INSERT INTO "${f.schema}".effects (job_id, note) VALUES ($1, 'still in the transaction')`, [job.id]);
      return 'kept';
    });
    const id = (await q.send('tx.release', {}))!;
    expect((await completedJob('tx.release', id)).output).toBe('kept');
    expect(refused).toMatchObject({ code: 'JOB_DB_RELEASE' });
    expect(await effects(id)).toEqual(['still in the transaction']);
    await q.offWork('tx.release');
  });

  it('a handler that outlives its lease gives its connection up: on a pool of one, the retry still runs', async () => {
    const small = f.create({ supervise: false, poolSize: 1 });
    await small.createQueue('tx.outlived', { expireInSeconds: 1, retryLimit: 1 });
    await small.work('tx.outlived', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      if (job.retryCount === 0) await new Promise(() => undefined); // never returns, ignores its signal
      return 'second attempt';
    });
    const id = (await small.send('tx.outlived', {}))!;
    await until(async () => (await small.getJobById('tx.outlived', id))!.state === 'completed', 'the retry completed', 15_000);
    expect(await small.getJobById('tx.outlived', id)).toMatchObject({ retryCount: 1, output: 'second attempt' });
    await small.offWork('tx.outlived');
  });

  it('a handler cut off by its lease loses its server session too: the statement it had in flight stops', async () => {
    await q.createQueue('tx.session', { expireInSeconds: 1, retryLimit: 0 });
    let pid = 0;
    await q.work('tx.session', { transactional: true, pollingIntervalSeconds: 0.05 }, async (job) => {
      pid = (await job.db!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await job.db!.query('SELECT pg_sleep(60)'); // far past the lease
      return 'too late';
    });
    const id = (await q.send('tx.session', {}))!;
    await until(() => pid > 0, 'the handler runs');
    await until(
      async () => (await q.getJobById('tx.session', id))!.state === 'failed',
      'the attempt failed when its lease ran out',
      10_000,
    );
    // Without ending the session, pg_sleep(60) would go on running (and hold the transaction) after the socket closed.
    await until(
      async () => (await f.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0,
      'the session ended',
      10_000,
    );
    await q.offWork('tx.session');
  });
});
