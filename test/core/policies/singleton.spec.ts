import { until } from '../../helpers/db.js';
import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_singleton');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

describe('policy singleton: at most one active job per key, any number queued', () => {
  it('queues any number of jobs of one key', async () => {
    await q.createQueue('single.queue', { policy: 'singleton' });
    const ids = await q.insert('single.queue', [{ singletonKey: 'k' }, { singletonKey: 'k' }, { singletonKey: 'k' }]);
    expect(ids).toHaveLength(3);
  });

  it('a fetch takes one job per key, and none of a key that is active', async () => {
    await q.createQueue('single.fetch', { policy: 'singleton' });
    const [a1, a2, b1, n1, n2] = await q.insert('single.fetch', [
      { singletonKey: 'a' },
      { singletonKey: 'a' },
      { singletonKey: 'b' },
      {},
      {},
    ]);
    const first = await q.fetch('single.fetch', { batchSize: 10 });
    expect(first.map((j) => j.id).sort()).toEqual([a1, b1, n1].sort());
    expect(await q.fetch('single.fetch', { batchSize: 10 })).toEqual([]);
    await q.complete('single.fetch', a1!);
    expect((await q.fetch('single.fetch', { batchSize: 10 })).map((j) => j.id)).toEqual([a2]);
    await q.complete('single.fetch', n1!);
    expect((await q.fetch('single.fetch', { batchSize: 10 })).map((j) => j.id)).toEqual([n2]);
  });

  it('two workers racing for one key: the loser gets an empty fetch, never an error', async () => {
    await q.createQueue('single.race', { policy: 'singleton' });
    const claimers = Array.from({ length: 6 }, () => f.create({ supervise: false, poolSize: 2 }));
    for (let round = 0; round < 10; round++) {
      await q.insert('single.race', [
        { singletonKey: 'hot', data: round },
        { singletonKey: 'hot', data: round },
      ]);
      const results = await Promise.all(claimers.map((c) => c.fetch('single.race', { batchSize: 2 })));
      const won = results.flat();
      expect(won).toHaveLength(1);
      await q.complete('single.race', won[0]!.id);
      await q.deleteJob(
        'single.race',
        (await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = 'single.race' AND state = 'created'`)).map(
          (r) => r.id,
        ),
      );
    }
  });

  it('workers run a key one job at a time, across instances', async () => {
    await q.createQueue('single.work', { policy: 'singleton' });
    let running = 0;
    let peak = 0;
    const handler = async () => {
      running++;
      peak = Math.max(peak, running);
      await f.sql('SELECT pg_sleep(0.005)');
      running--;
    };
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await a.work('single.work', { concurrency: 4, pollingIntervalSeconds: 0.05 }, handler);
    await b.work('single.work', { concurrency: 4, pollingIntervalSeconds: 0.05 }, handler);
    await q.insert(
      'single.work',
      Array.from({ length: 20 }, () => ({ singletonKey: 'one' })),
    );
    await until(
      async () =>
        (await f.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = 'single.work' AND state = 'completed'`))[0]!
          .n === 20,
      'all 20 completed',
    );
    expect(peak).toBe(1);
    await Promise.all([a.offWork('single.work'), b.offWork('single.work')]);
  });
});
