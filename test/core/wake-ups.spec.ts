// A job that a queue held back (behind its key, a singleton or concurrency slot, a group's turn) is claimed as
// soon as the job before it has finished in the same process, not at the loop's next poll. The loops here poll
// once a minute: only the wake-up can run the chain within the tests' deadlines.
import type { QueueOptions, WorkOptions } from '../../lib/core/types.js';
import { stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('wake');
afterAll(() => f.cleanup());

const POLL_ONCE_A_MINUTE = 60;

describe('wake-ups for held-back jobs, in the process that finished the job before them', () => {
  it.each<[string, QueueOptions, WorkOptions, (i: number) => Record<string, unknown>]>([
    ['key_strict_fifo: the next job of the key', { policy: 'key_strict_fifo' }, {}, () => ({ singletonKey: 'k' })],
    ['singleton: the next job of the key', { policy: 'singleton' }, {}, () => ({ singletonKey: 'k' })],
    ['a concurrency limit of 1: the next job', { concurrencyLimit: 1 }, {}, () => ({})],
    ['group concurrency of 1: the next job of the group', {}, { groupConcurrency: 1 }, () => ({ group: { id: 'g' } })],
    [
      'failures on key_strict_fifo: a retry of the same key',
      { policy: 'key_strict_fifo', retryLimit: 1 },
      {},
      () => ({ singletonKey: 'k' }),
    ],
  ])('%s is claimed without waiting for a poll', async (what, queueOptions, workOptions, job) => {
    const q = f.create({ supervise: false });
    const name = `wake.${what.split(':')[0]!.replace(/[^a-z_]/g, '')}.${Object.keys(queueOptions).length}`;
    await q.createQueue(name, queueOptions);
    const fails = queueOptions.retryLimit === 1;
    const n = 5;
    await q.insert(
      name,
      Array.from({ length: n }, (_, i) => ({ data: { i }, ...job(i) })),
    );
    const ran: number[] = [];
    let attempts = 0;
    await q.work(name, { concurrency: 4, batchSize: 4, pollingIntervalSeconds: POLL_ONCE_A_MINUTE, ...workOptions }, async (j) => {
      attempts++;
      // With retries: the first attempt of the first job fails and is retried at once (retryDelay 0).
      if (fails && attempts === 1) throw new Error('first attempt fails');
      ran.push((j.data as { i: number }).i);
    });
    await until(async () => (await stateCounts(f.pool, f.schema, name)).completed === n, `${n} jobs completed`, 20_000, 25);
    expect([...ran].sort()).toEqual([0, 1, 2, 3, 4]);
    if (queueOptions.policy === 'key_strict_fifo') expect(ran).toEqual([0, 1, 2, 3, 4]);
    await q.offWork(name);
  });
});
