import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_short');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

describe('policy short: at most one queued job per key, any number active', () => {
  it.each([
    ['no key: a second send while one is queued returns null', [undefined, undefined], [true, false]],
    ['same key twice: the second is refused', ['a', 'a'], [true, false]],
    ['different keys are independent', ['a', 'b'], [true, true]],
    ['no key and a key are different keys', [undefined, 'a'], [true, true]],
  ] as const)('%s', async (_name, keys, accepted) => {
    const queue = `short.${Math.random().toString(36).slice(2, 8)}`;
    await q.createQueue(queue, { policy: 'short' });
    const ids = [];
    for (const singletonKey of keys) ids.push(await q.send(queue, {}, singletonKey ? { singletonKey } : {}));
    expect(ids.map((id) => id !== null)).toEqual(accepted);
  });

  it('once the queued job is active, another may be queued, and both run', async () => {
    await q.createQueue('short.active', { policy: 'short' });
    const first = await q.send('short.active', {}, { singletonKey: 'k' });
    expect(await q.send('short.active', {}, { singletonKey: 'k' })).toBeNull();
    const [claimed] = await q.fetch('short.active');
    expect(claimed!.id).toBe(first);
    const second = await q.send('short.active', {}, { singletonKey: 'k' });
    expect(second).not.toBeNull();
    expect((await q.fetch('short.active')).map((j) => j.id)).toEqual([second]);
  });

  it('insert skips refused jobs and returns the ids it inserted', async () => {
    await q.createQueue('short.insert', { policy: 'short' });
    const ids = await q.insert('short.insert', [{ singletonKey: 'x' }, { singletonKey: 'x' }, { singletonKey: 'y' }]);
    expect(ids).toHaveLength(2);
    expect(await q.insert('short.insert', [{ singletonKey: 'x' }])).toEqual([]);
  });

  it('a failed attempt goes to retry beside a newly queued job of its key', async () => {
    await q.createQueue('short.retry', { policy: 'short', retryLimit: 1 });
    const first = (await q.send('short.retry', {}, { singletonKey: 'k' }))!;
    await q.fetch('short.retry');
    const second = (await q.send('short.retry', {}, { singletonKey: 'k' }))!;
    await q.fail('short.retry', first);
    expect((await q.getJobById('short.retry', first))!.state).toBe('retry');
    expect((await q.getJobById('short.retry', second))!.state).toBe('created');
  });
});
