import { JobNotFoundError, JobStateError, PermanentJobError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('deadletter');
const q = f.create({ supervise: false });
beforeAll(async () => {
  await q.createQueue('orders.dlq', { retryLimit: 7, expireInSeconds: 77 });
  await q.createQueue('orders', { retryLimit: 0, deadLetter: 'orders.dlq' });
});
afterAll(() => f.cleanup());

async function failForGood(data: unknown, options = {}): Promise<string> {
  const id = (await q.send('orders', data, options))!;
  const [job] = await q.fetch('orders');
  expect(job!.id).toBe(id);
  await q.fail('orders', id, new PermanentJobError('card declined'));
  return id;
}

async function deadLettered(sourceId: string) {
  const [row] = await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = 'orders.dlq' AND source_id = $1`, [sourceId]);
  return row ? q.getJobById('orders.dlq', row.id) : null;
}

describe('dead letters', () => {
  it('a job that fails for good is copied into the dead-letter queue, with where it came from', async () => {
    const id = await failForGood({ order: 1 }, { priority: 3, singletonKey: 'cust-9' });
    const source = (await q.getJobById('orders', id))!;
    const copy = (await deadLettered(id))!;
    expect(source.state).toBe('failed');
    expect(copy).toMatchObject({
      name: 'orders.dlq',
      state: 'created',
      data: { order: 1 },
      priority: 3,
      singletonKey: 'cust-9',
      retryLimit: 7,
      expireInSeconds: 77,
      sourceName: 'orders',
      sourceId: id,
      sourceRetryCount: 0,
      sourceRootId: id,
    });
    expect(copy.sourceCreatedOn!.getTime()).toBe(source.createdOn.getTime());
    expect((copy.sourceOutput as { error: { message: string } }).error.message).toBe('card declined');
    // the failure is in the copy's output too, where pg-boss puts it; the copy's own failures start a history of their own
    expect(copy.output).toEqual(source.output);
    await q.fail('orders.dlq', copy.id, new Error('still declined'));
    const failedCopy = (await q.getJobById('orders.dlq', copy.id))!;
    expect((failedCopy.output as { errors: { message: string }[] }).errors.map((e) => e.message)).toEqual(['still declined']);
  });

  it('a job whose lease ran out with no retries left is dead-lettered too', async () => {
    const id = (await q.send('orders', { order: 2 }))!;
    await q.fetch('orders');
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    await q.maintain({ force: true });
    expect((await q.getJobById('orders', id))!.state).toBe('failed');
    expect((await deadLettered(id))!.sourceOutput).toMatchObject({ error: { name: 'LeaseExpiredError' } });
  });

  it('a job that is retried is not dead-lettered', async () => {
    await q.createQueue('orders.retrying', { retryLimit: 1, deadLetter: 'orders.dlq' });
    const id = (await q.send('orders.retrying', {}))!;
    await q.fetch('orders.retrying');
    await q.fail('orders.retrying', id, new Error('transient'));
    expect((await q.getJobById('orders.retrying', id))!.state).toBe('retry');
    expect(await deadLettered(id)).toBeNull();
  });

  it("the copy and a redrive keep the job's group", async () => {
    const id = (await q.send('orders', { order: 9 }, { group: { id: 'tenant-7', tier: 'pro' }, priority: 100 }))!; // claimed first
    const [claimed] = await q.fetch('orders');
    expect(claimed!.id).toBe(id);
    await q.fail('orders', id, new PermanentJobError('declined'));
    const copy = (await deadLettered(id))!;
    const groupOf = async (jobId: string) =>
      (await f.sql<{ group_id: string; group_tier: string }>(`SELECT group_id, group_tier FROM $schema.jobs WHERE id = $1`, [jobId]))[0];
    expect(await groupOf(copy.id)).toEqual({ group_id: 'tenant-7', group_tier: 'pro' });
    const moved = await q.redrive('orders.dlq', { ids: [copy.id] });
    expect(await groupOf(moved.ids[0]!)).toEqual({ group_id: 'tenant-7', group_tier: 'pro' });
    await q.deleteJob('orders', moved.ids[0]!); // (claimed first by the tests below otherwise)
  });

  it('redrive moves dead-lettered jobs back to their source queue, and the root id survives any number of redrives', async () => {
    const root = await failForGood({ order: 3 });
    const copy1 = (await deadLettered(root))!;
    const first = await q.redrive('orders.dlq', { ids: [copy1.id] });
    expect(first.moved).toBe(1);
    expect(await q.getJobById('orders.dlq', copy1.id)).toBeNull();
    const again = (await q.getJobById('orders', first.ids[0]!))!;
    expect(again).toMatchObject({ state: 'created', data: { order: 3 }, sourceRootId: root, sourceName: null });

    const [claimed] = await q.fetch('orders');
    expect(claimed!.id).toBe(again.id);
    await q.fail('orders', again.id, new PermanentJobError('declined again'));
    const copy2 = (await deadLettered(again.id))!;
    expect(copy2).toMatchObject({ sourceId: again.id, sourceRootId: root });
    const second = await q.redrive('orders.dlq', { ids: [copy2.id] });
    expect((await q.getJobById('orders', second.ids[0]!))!.sourceRootId).toBe(root);
  });

  it('a queue that is the dead letter of another cannot be deleted while it is referenced', async () => {
    await expect(q.deleteQueue('orders.dlq')).rejects.toThrow('queue "orders.dlq" is the dead-letter queue of "orders", "orders.retrying"');
    expect(await q.getQueue('orders.dlq')).not.toBeNull();
  });
});

describe('retry', () => {
  it('puts failed jobs back in the queue', async () => {
    await q.createQueue('r', { retryLimit: 0 });
    const id = (await q.send('r', {}))!;
    await q.fetch('r');
    await q.fail('r', id);
    expect((await q.retry('r', id)).updated).toBe(1);
    expect(await q.getJobById('r', id)).toMatchObject({ state: 'retry', completedOn: null });
    expect((await q.fetch('r')).map((j) => j.id)).toEqual([id]);
  });

  it('gives an exhausted job its full budget again, refuses a result held for an earlier attempt, keeps every error', async () => {
    await q.createQueue('budget', { retryLimit: 2 });
    const id = (await q.send('budget', {}))!;
    const failAttempt = async (n: number) => {
      const [job] = await q.fetch('budget');
      expect(job!.id).toBe(id);
      expect((await q.fail('budget', { id, retryCount: job!.retryCount }, new Error(`boom ${n}`))).updated).toBe(1);
      return job!;
    };
    for (let n = 1; n <= 3; n++) await failAttempt(n);
    const exhausted = (await q.getJobById('budget', id))!;
    expect(exhausted).toMatchObject({ state: 'failed', retryCount: 2, retryLimit: 2 });

    await q.retry('budget', id);
    expect(await q.getJobById('budget', id)).toMatchObject({ state: 'retry', retryCount: 3, retryLimit: 5 });
    // a result for the last attempt of the old budget (retryCount 2) does not settle the new one
    const first = await failAttempt(4);
    expect(first).toMatchObject({ retryCount: 3, retryLimit: 5 });
    expect((await q.complete('budget', { id, retryCount: 2 }, 'stale')).updated).toBe(0);
    // three attempts in all again: the first failed above, two retries remain
    await failAttempt(5);
    const last = await failAttempt(6);
    expect(last.retryCount).toBe(last.retryLimit);
    const after = (await q.getJobById('budget', id))!;
    expect(after).toMatchObject({ state: 'failed', retryCount: 5, retryLimit: 5 });
    expect((after.output as { errors: { message: string }[] }).errors.map((e) => e.message)).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => `boom ${n}`),
    );
    expect(await q.fetch('budget')).toEqual([]);

    // a second retry() gives the same budget again, however the previous one ended
    await q.retry('budget', id);
    expect(await q.getJobById('budget', id)).toMatchObject({ state: 'retry', retryCount: 6, retryLimit: 8 });
  });

  it('refuses jobs in other states with JobStateError, and an unknown id with JobNotFoundError, changing nothing', async () => {
    await q.createQueue('r2', { retryLimit: 0 });
    const failed = (await q.send('r2', {}))!;
    await q.fetch('r2');
    await q.fail('r2', failed);
    const waiting = (await q.send('r2', {}))!;
    const err = await q.retry('r2', [failed, waiting]).catch((e) => e);
    expect(err).toBeInstanceOf(JobStateError);
    expect(err.message).toContain(`job ${waiting} in queue "r2" is created; this needs a job that is failed`);
    expect((await q.getJobById('r2', failed))!.state).toBe('failed');
    await expect(q.retry('r2', [failed, '987654321'])).rejects.toThrow(JobNotFoundError);
    expect((await q.getJobById('r2', failed))!.state).toBe('failed');
  });
});

describe('dead letters under the dead-letter queue’s policy', () => {
  it('a copy the dead-letter queue’s policy refuses is not made; the source job stays failed and visible', async () => {
    await q.createQueue('pol.dlq', { policy: 'short' });
    await q.createQueue('pol.src', { retryLimit: 0, deadLetter: 'pol.dlq' });
    const [a, b] = await q.insert('pol.src', [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
    await q.fetch('pol.src', { batchSize: 2 });
    await q.fail('pol.src', [a!, b!], new Error('down'));
    expect((await q.getJobById('pol.src', a!))!.state).toBe('failed');
    expect((await q.getJobById('pol.src', b!))!.state).toBe('failed');
    const copies = await f.sql(`SELECT source_id::text FROM $schema.jobs WHERE queue = 'pol.dlq'`);
    expect(copies).toHaveLength(1);
  });
});
