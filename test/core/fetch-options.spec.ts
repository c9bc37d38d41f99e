import { InvalidOptionError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('fetchopts');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let queues = 0;
/** A new queue per test (partitioned or not), so that no test sees another's jobs. */
async function newQueue(partition: boolean, options: Record<string, unknown> = {}): Promise<string> {
  const name = `fo${++queues}`;
  await q.createQueue(name, { partition, retryLimit: 3, ...options });
  return name;
}

const HOUR = 3600;
const ids = (jobs: { id: string }[]) => jobs.map((j) => j.id);

describe.each([false, true])('fetch with ignoreStartAfter (partition: %s)', (partition) => {
  it('claims jobs sent deferred and jobs waiting for a retry delay, which a plain fetch leaves', async () => {
    const name = await newQueue(partition, { retryDelay: HOUR });
    const deferred = (await q.send(name, { n: 1 }, { startAfter: HOUR }))!;
    const retrying = (await q.send(name, { n: 2 }))!;
    await q.fetch(name);
    await q.fail(name, retrying, new Error('later'));
    expect(await q.fetch(name)).toEqual([]);
    const jobs = await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 });
    expect(new Set(ids(jobs))).toEqual(new Set([deferred, retrying]));
    expect(jobs.find((j) => j.id === retrying)!.retryCount).toBe(1);
    // claimed as a fetch claims: settled by hand
    expect((await q.complete(name, ids(jobs))).updated).toBe(2);
  });

  it('never claims a flow child that waits for its parents', async () => {
    const parentQueue = await newQueue(partition);
    const childQueue = await newQueue(partition);
    const flow = await q.flow([
      { name: parentQueue, ref: 'p' },
      { name: childQueue, ref: 'c', dependsOn: ['p'] },
    ]);
    expect(await q.fetch(childQueue, { ignoreStartAfter: true })).toEqual([]);
    expect(await q.fetch(childQueue, { ignoreStartAfter: true, priority: false })).toEqual([]);
    await q.fetch(parentQueue);
    await q.complete(parentQueue, flow.p!);
    expect(ids(await q.fetch(childQueue, { ignoreStartAfter: true }))).toEqual([flow.c]);
  });

  it('singleton: one active job per key still, and one job per key per claim', async () => {
    const name = await newQueue(partition, { policy: 'singleton' });
    const a1 = (await q.send(name, {}, { singletonKey: 'a', startAfter: HOUR }))!;
    await q.send(name, {}, { singletonKey: 'a', startAfter: 2 * HOUR });
    const b = (await q.send(name, {}, { singletonKey: 'b', startAfter: HOUR }))!;
    const first = await q.fetch(name, { ignoreStartAfter: true, batchSize: 10 });
    expect(new Set(ids(first))).toEqual(new Set([a1, b]));
    // both keys are held by an active job now
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 10 })).toEqual([]);
  });

  it('key_strict_fifo: the earliest job of a key runs first however deferred, and nothing while the key is held', async () => {
    const name = await newQueue(partition, { policy: 'key_strict_fifo' });
    const early = (await q.send(name, { i: 1 }, { singletonKey: 'k', startAfter: HOUR }))!;
    const due = (await q.send(name, { i: 2 }, { singletonKey: 'k' }))!;
    // a worker would run the due job ahead of the deferred one; with ignoreStartAfter both are due, and the
    // deferred one was sent first (claimed together, the two would also break the key's unique index)
    expect(ids(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 }))).toEqual([early]);
    // the key is held by the active job: neither option lets the next one run beside it
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toEqual([]);
    expect(await q.fetch(name, { ignoreStartAfter: true, priority: false, batchSize: 5 })).toEqual([]);
    await q.complete(name, early);
    expect(ids(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 }))).toEqual([due]);
  });

  it('key_strict_fifo: a flow child waiting for its parent is never claimed, nor holds its key back', async () => {
    const parentQueue = await newQueue(partition);
    const name = await newQueue(partition, { policy: 'key_strict_fifo' });
    const flow = await q.flow([
      { name: parentQueue, ref: 'p' },
      { name, ref: 'c', singletonKey: 'k', dependsOn: ['p'] },
    ]);
    const later = (await q.send(name, {}, { singletonKey: 'k', startAfter: HOUR }))!;
    expect(ids(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 }))).toEqual([later]);
    expect(await q.fetch(name, { ignoreStartAfter: true, priority: false, batchSize: 5 })).toEqual([]);
    expect((await f.sql<{ state: string }>('SELECT state::text FROM $schema.jobs WHERE id = $1', [flow.c]))[0]!.state).toBe('created');
  });

  it('key_strict_fifo: a key held by a job that failed for good stays held', async () => {
    const name = await newQueue(partition, { policy: 'key_strict_fifo', retryLimit: 0 });
    const first = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.send(name, {}, { singletonKey: 'k', startAfter: HOUR });
    await q.fetch(name);
    await q.fail(name, first, new Error('for good'));
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toEqual([]);
  });

  it('a debounced job waits for its slot: claimed early, the sends that come later in its slot would never run', async () => {
    const name = await newQueue(partition);
    const first = (await q.sendDebounced(name, { n: 1 }, null, 600, 'k'))!;
    const next = (await q.sendDebounced(name, { n: 2 }, null, 600, 'k'))!;
    expect(next).not.toBeNull();
    expect(ids(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 }))).toEqual([first]);
  });

  it('a paused queue gives nothing', async () => {
    const name = await newQueue(partition);
    await q.send(name, {}, { startAfter: HOUR });
    await q.send(name, {});
    await q.pauseQueue(name);
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toEqual([]);
    expect(await q.fetch(name, { priority: false, batchSize: 5 })).toEqual([]);
    await q.resumeQueue(name);
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toHaveLength(2);
  });

  it('a rate limit still caps the claim', async () => {
    const name = await newQueue(partition, { rateLimit: { count: 2, perSeconds: HOUR } });
    for (let i = 0; i < 3; i++) await q.send(name, {}, { startAfter: HOUR });
    expect(await q.fetch(name, { ignoreStartAfter: true, priority: false, batchSize: 5 })).toHaveLength(2);
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toEqual([]);
  });

  it('a concurrency limit still caps the claim', async () => {
    const name = await newQueue(partition, { concurrencyLimit: 1 });
    await q.send(name, {}, { startAfter: HOUR });
    await q.send(name, {}, { startAfter: HOUR });
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toHaveLength(1);
    expect(await q.fetch(name, { ignoreStartAfter: true, batchSize: 5 })).toEqual([]);
  });
});

describe.each([false, true])('fetch with priority: false (partition: %s)', (partition) => {
  it('claims in due-time then id order, whatever the priority; the default claims by priority', async () => {
    const name = await newQueue(partition);
    const low = (await q.send(name, {}, { priority: 0 }))!;
    const high = (await q.send(name, {}, { priority: 10 }))!;
    const mid = (await q.send(name, {}, { priority: 5 }))!;
    await q.send(name, {}, { priority: 100, startAfter: HOUR });
    // same due time: the id decides
    await f.sql(`UPDATE $schema.jobs SET start_after = now() - interval '1 minute' WHERE id = ANY($1::bigint[])`, [[low, high, mid]]);
    const jobs = await q.fetch(name, { priority: false, batchSize: 2 });
    expect(ids(jobs)).toEqual([low, high]);
    expect(ids(await q.fetch(name, { batchSize: 5 }))).toEqual([mid]);
  });

  it('an earlier due time comes first, and with ignoreStartAfter a deferred job comes last', async () => {
    const name = await newQueue(partition);
    const later = (await q.send(name, {}, { priority: 9 }))!;
    const earlier = (await q.send(name, {}, { priority: 1 }))!;
    const deferred = (await q.send(name, {}, { priority: 50, startAfter: HOUR }))!;
    await f.sql(`UPDATE $schema.jobs SET start_after = now() - interval '1 minute' WHERE id = $1`, [earlier]);
    expect(ids(await q.fetch(name, { priority: false, ignoreStartAfter: true, batchSize: 5 }))).toEqual([earlier, later, deferred]);
  });

  it('keeps the priority filters', async () => {
    const name = await newQueue(partition);
    await q.send(name, {}, { priority: 0 });
    const high = (await q.send(name, {}, { priority: 7 }))!;
    expect(ids(await q.fetch(name, { priority: false, minPriority: 5, batchSize: 5 }))).toEqual([high]);
  });

  it('stately: one job per key per claim, in due order', async () => {
    const name = await newQueue(partition, { policy: 'stately' });
    const a = (await q.send(name, {}, { singletonKey: 'a', priority: 0 }))!;
    const b = (await q.send(name, {}, { singletonKey: 'b', priority: 9 }))!;
    expect(ids(await q.fetch(name, { priority: false, batchSize: 5 }))).toEqual([a, b]);
  });
});

describe('fetch options: bad input', () => {
  it('a wrong type is refused, naming the field', async () => {
    const name = await newQueue(false);
    await q.send(name, {});
    await expect(q.fetch(name, { ignoreStartAfter: 1 as never })).rejects.toMatchObject({
      constructor: InvalidOptionError,
      field: 'options.ignoreStartAfter',
      value: 1,
    });
    await expect(q.fetch(name, { priority: 'no' as never })).rejects.toMatchObject({ field: 'options.priority', value: 'no' });
    // a pg-boss option not built here is refused rather than ignored
    await expect(q.fetch(name, { includeMetadata: true } as never)).rejects.toMatchObject({
      field: 'options.includeMetadata',
      value: true,
    });
    expect(await q.fetch(name)).toHaveLength(1);
  });
});

describe('fetch with priority: false, racing', () => {
  it('skips a job another transaction holds locked, and never waits for it', async () => {
    const name = await newQueue(false);
    const first = (await q.send(name, {}))!;
    const second = (await q.send(name, {}))!;
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${f.schema}".jobs WHERE queue = $1 AND id = $2 FOR UPDATE`, [name, first]);
      // a fetch that waited for the lock would hang here until the holder let go
      expect(ids(await q.fetch(name, { priority: false }))).toEqual([second]);
      expect(await q.fetch(name, { priority: false, ignoreStartAfter: true })).toEqual([]);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(ids(await q.fetch(name, { priority: false }))).toEqual([first]);
  });
});

describe('fetch with group limits', () => {
  it('groupConcurrency counts the active jobs of each group; ignoreGroups leaves groups out; both as pg-boss takes them', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('fg');
    const [a1, a2, b1, c1] = await q.insert('fg', [
      { data: 'a1', group: { id: 'a' } },
      { data: 'a2', group: { id: 'a' } },
      { data: 'b1', group: { id: 'b', tier: 'pro' } },
      { data: 'c1' },
    ]);
    // at most one active job of a group: a1 and b1 (and c1, of no group), never a2 beside a1
    const first = await q.fetch('fg', { batchSize: 4, groupConcurrency: 1 });
    expect(first.map((j) => j.id).sort()).toEqual([a1, b1, c1].sort());
    expect(await q.fetch('fg', { groupConcurrency: { default: 1, tiers: { pro: 2 } } })).toEqual([]);
    await q.complete('fg', a1!);
    // a's limit has room again; but a caller that leaves a out gets nothing
    expect(await q.fetch('fg', { ignoreGroups: ['a'] })).toEqual([]);
    expect((await q.fetch('fg', { groupConcurrency: 1, ignoreGroups: ['b'] })).map((j) => j.id)).toEqual([a2]);
  });

  it('refuses them with ignoreStartAfter or priority: false, on other policies, and bad values, naming the field', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('fg.bad');
    await q.createQueue('fg.single', { policy: 'singleton' });
    const refused = async (call: Promise<unknown>, field: string) => {
      const err = (await call.catch((e: unknown) => e)) as InvalidOptionError;
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err.field).toBe(field);
    };
    await refused(q.fetch('fg.bad', { groupConcurrency: 1, ignoreStartAfter: true }), 'options.groupConcurrency');
    await refused(q.fetch('fg.bad', { ignoreGroups: ['a'], priority: false }), 'options.ignoreGroups');
    await refused(q.fetch('fg.single', { groupConcurrency: 1 }), 'options.groupConcurrency');
    await refused(q.fetch('fg.bad', { ignoreGroups: 'a' as never }), 'options.ignoreGroups');
    await refused(q.fetch('fg.bad', { ignoreGroups: [''] }), 'options.ignoreGroups[0]');
    await refused(q.fetch('fg.bad', { groupConcurrency: 0 }), 'options.groupConcurrency');
  });
});
