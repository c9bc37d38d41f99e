import { InvalidOptionError } from '../../../lib/core/errors.js';
import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_fifo');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
async function fifo(options = {}): Promise<string> {
  const name = `fifo.${++n}`;
  await q.createQueue(name, { policy: 'key_strict_fifo', retryLimit: 2, ...options });
  return name;
}
const ids = async (name: string, options = {}) => (await q.fetch(name, { batchSize: 10, ...options })).map((j) => j.id);
const backdate = (id: string) => f.sql(`UPDATE $schema.jobs SET start_after = now() - interval '1 second' WHERE id = $1`, [id]);

describe('policy key_strict_fifo', () => {
  it('every job needs a singletonKey', async () => {
    const name = await fifo();
    await expect(q.send(name, {})).rejects.toThrow(InvalidOptionError);
    await expect(q.send(name, {})).rejects.toThrow('options.singletonKey must be a key on every job of key_strict_fifo queue');
    await expect(q.insert(name, [{ singletonKey: 'a' }, {}])).rejects.toThrow('jobs[1].singletonKey');
    expect(await f.sql(`SELECT 1 FROM $schema.jobs WHERE queue = $1`, [name])).toEqual([]);
  });

  it('per key, jobs run strictly in FIFO order; other keys are not held back', async () => {
    const name = await fifo();
    const [a1, a2, b1] = await q.insert(name, [{ singletonKey: 'a' }, { singletonKey: 'a' }, { singletonKey: 'b' }]);
    expect((await ids(name)).sort()).toEqual([a1, b1].sort());
    expect(await ids(name)).toEqual([]);
    await q.complete(name, a1!);
    expect(await ids(name)).toEqual([a2]);
  });

  it('a job in retry holds its successors back, and keeps the head', async () => {
    const name = await fifo({ retryDelay: 3600 });
    const [a1, a2, b1] = await q.insert(name, [{ singletonKey: 'a' }, { singletonKey: 'a' }, { singletonKey: 'b' }]);
    await ids(name);
    await q.fail(name, a1!);
    expect((await q.getJobById(name, a1!))!.state).toBe('retry');
    await q.complete(name, b1!);
    expect(await ids(name)).toEqual([]);
    await backdate(a1!);
    expect(await ids(name)).toEqual([a1]);
    await q.complete(name, a1!);
    expect(await ids(name)).toEqual([a2]);
  });

  it('a job failed for good blocks its key until it is deleted or retried; getBlockedKeys lists it', async () => {
    const name = await fifo({ retryLimit: 0 });
    const [a1, a2, b1] = await q.insert(name, [{ singletonKey: 'a' }, { singletonKey: 'a' }, { singletonKey: 'b' }]);
    await ids(name);
    await q.fail(name, a1!);
    expect(await q.getBlockedKeys(name)).toEqual(['a']);
    await q.complete(name, b1!);
    expect(await ids(name)).toEqual([]);
    await q.retry(name, a1!);
    expect(await q.getBlockedKeys(name)).toEqual([]);
    expect(await ids(name)).toEqual([a1]);
    await q.fail(name, a1!);
    expect(await q.getBlockedKeys(name)).toEqual(['a']);
    await q.deleteJob(name, a1!);
    expect(await ids(name)).toEqual([a2]);
  });

  it('a deferred job is skipped when choosing the head; the later job that ran ahead keeps the head through its retry', async () => {
    const name = await fifo({ retryDelay: 3600 });
    const a1 = (await q.send(name, { first: true }, { singletonKey: 'a', startAfter: 3600 }))!;
    const a2 = (await q.send(name, { second: true }, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([a2]);
    await q.fail(name, a2);
    await backdate(a1);
    expect(await ids(name)).toEqual([]);
    await backdate(a2);
    expect(await ids(name)).toEqual([a2]);
    await q.complete(name, a2);
    expect(await ids(name)).toEqual([a1]);
  });

  it('priority orders heads across keys but never reorders within a key', async () => {
    const name = await fifo();
    const [a1, , b1] = await q.insert(name, [
      { singletonKey: 'a', priority: 0 },
      { singletonKey: 'a', priority: 10 },
      { singletonKey: 'b', priority: 5 },
    ]);
    expect(await ids(name, { batchSize: 1 })).toEqual([b1]);
    expect(await ids(name, { batchSize: 1 })).toEqual([a1]);
  });

  it('minPriority and maxPriority apply to the head and cannot skip it', async () => {
    const name = await fifo();
    const [a1] = await q.insert(name, [{ singletonKey: 'a', priority: 0 }, { singletonKey: 'a', priority: 10 }]);
    expect(await ids(name, { minPriority: 5 })).toEqual([]);
    expect(await ids(name, { maxPriority: 5 })).toEqual([a1]);
  });

  it('two workers racing on one key: one claims its head, the other gets an empty fetch, never an error', async () => {
    const name = await fifo();
    const claimers = Array.from({ length: 6 }, () => f.create({ supervise: false, poolSize: 2 }));
    for (let round = 0; round < 8; round++) {
      const [head] = await q.insert(name, [{ singletonKey: 'hot' }, { singletonKey: 'hot' }]);
      const won = (await Promise.all(claimers.map((c) => c.fetch(name, { batchSize: 2 })))).flat();
      expect(won.map((j) => j.id)).toEqual([head]);
      await q.complete(name, head!);
      await q.deleteJob(name, (await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state = 'created'`, [name])).map((r) => r.id));
    }
  });

  it('getBlockedKeys refuses a queue of another policy', async () => {
    await q.createQueue('fifo.not');
    await expect(q.getBlockedKeys('fifo.not')).rejects.toThrow('name must be a key_strict_fifo queue');
  });
});

describe('key_strict_fifo: one blocking job per key', () => {
  it('resuming a cancelled job while another job of its key waits in retry is refused, so the key never blocks itself', async () => {
    const name = await fifo({ retryDelay: 0 });
    const [a, b] = await q.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
    expect(await ids(name)).toEqual([a]);
    await q.fail(name, a!);
    await q.cancel(name, a!);
    expect(await ids(name)).toEqual([b]);
    await q.fail(name, b!);
    const err = await q.resume(name, a!).catch((e) => e);
    expect(err.code).toBe('KEY_TAKEN');
    expect((await q.getJobById(name, a!))!.state).toBe('cancelled');
    expect(await ids(name)).toEqual([b]);
  });

  it('a key_strict_fifo queue cannot be a dead-letter queue (copies may carry no key)', async () => {
    const name = await fifo();
    await expect(q.createQueue('fifo.source', { deadLetter: name })).rejects.toThrow('options.deadLetter must be a queue whose policy is not key_strict_fifo');
  });
});
