import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_exclusive');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

describe('policy exclusive: at most one job per key queued or active', () => {
  it('refuses a second job of a key while one is queued, active or in retry; accepts one once it finished', async () => {
    await q.createQueue('excl', { policy: 'exclusive', retryLimit: 1, retryDelay: 3600 });
    const first = (await q.send('excl', {}, { singletonKey: 'k' }))!;
    expect(await q.send('excl', {}, { singletonKey: 'k' })).toBeNull();
    await q.fetch('excl');
    expect(await q.send('excl', {}, { singletonKey: 'k' })).toBeNull();
    await q.fail('excl', first);
    expect((await q.getJobById('excl', first))!.state).toBe('retry');
    expect(await q.send('excl', {}, { singletonKey: 'k' })).toBeNull();
    await q.cancel('excl', first);
    const next = await q.send('excl', {}, { singletonKey: 'k' });
    expect(next).not.toBeNull();
    expect(await q.send('excl', {}, { singletonKey: 'other' })).not.toBeNull();
  });

  it('a job handed back or failed into retry keeps its place without conflict', async () => {
    await q.createQueue('excl.handback', { policy: 'exclusive' });
    const id = (await q.send('excl.handback', {}, { singletonKey: 'k' }))!;
    const [job] = await q.fetch('excl.handback');
    await q.fail('excl.handback', { id, retryCount: job!.retryCount });
    expect((await q.getJobById('excl.handback', id))!.state).toBe('retry');
  });
});
