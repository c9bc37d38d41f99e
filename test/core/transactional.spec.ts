import type { Job } from '../../lib/core/types.js';
import { deferred, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('tx');
const q = f.create({ supervise: false });
beforeAll(async () => {
  await f.sql('CREATE SCHEMA IF NOT EXISTS $schema');
  await q.start();
  await f.sql('CREATE TABLE $schema.effects (job_id bigint NOT NULL, note text NOT NULL)');
});
afterAll(() => f.cleanup());

const effects = async (id: string) => (await f.sql<{ note: string }>('SELECT note FROM $schema.effects WHERE job_id = $1', [id])).map((r) => r.note);

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
});
