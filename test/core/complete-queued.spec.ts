import { InvalidOptionError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('cqueued');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let queues = 0;
/** A new queue per test (partitioned or not), so that no test sees another's jobs. */
async function newQueue(partition: boolean, options: Record<string, unknown> = {}): Promise<string> {
  const name = `cq${++queues}`;
  await q.createQueue(name, { partition, retryLimit: 3, retryDelay: 0, ...options });
  return name;
}

async function row(id: string) {
  const [r] = await f.sql<{ state: string; output: unknown; started_on: Date | null }>(
    'SELECT state::text, output, started_on FROM $schema.jobs WHERE id = $1',
    [id],
  );
  return r;
}

describe.each([false, true])('complete with includeQueued (partition: %s)', (partition) => {
  it('completes jobs that have not started, created and retry, and stores the output', async () => {
    const name = await newQueue(partition);
    const created = (await q.send(name, { n: 1 }, { startAfter: 3600 }))!;
    const retrying = (await q.send(name, { n: 2 }))!;
    await q.fetch(name);
    await q.fail(name, retrying, new Error('again'));
    expect((await row(retrying))!.state).toBe('retry');
    // without the option only active jobs complete
    expect(await q.complete(name, [created, retrying], { out: 0 })).toMatchObject({ requested: 2, updated: 0 });
    const result = await q.complete(name, [created, retrying], { out: 1 }, { includeQueued: true });
    expect(result.updated).toBe(2);
    expect(new Set(result.ids)).toEqual(new Set([created, retrying]));
    for (const id of [created, retrying]) expect(await row(id)).toMatchObject({ state: 'completed', output: { out: 1 } });
    expect((await row(created))!.started_on).toBeNull();
    // a finished job stays as it is
    expect((await q.complete(name, created, { out: 2 }, { includeQueued: true })).updated).toBe(0);
  });

  it('completes active jobs as without it, and still refuses a stale { id, retryCount } ref', async () => {
    const name = await newQueue(partition);
    const id = (await q.send(name, {}))!;
    await q.fetch(name);
    await q.fail(name, id, new Error('first attempt'));
    const [job] = await q.fetch(name);
    expect(job).toMatchObject({ id, retryCount: 1 });
    expect((await q.complete(name, { id, retryCount: 0 }, 'stale', { includeQueued: true })).updated).toBe(0);
    expect((await row(id))!.state).toBe('active');
    expect((await q.complete(name, { id, retryCount: 1 }, 'fresh', { includeQueued: true })).updated).toBe(1);
    expect(await row(id)).toMatchObject({ state: 'completed', output: 'fresh' });
  });

  it('a stale ref of a job waiting for its retry is refused too', async () => {
    const name = await newQueue(partition);
    const id = (await q.send(name, {}))!;
    await q.fetch(name);
    await q.fail(name, id, new Error('first attempt'));
    expect((await q.complete(name, { id, retryCount: 0 }, null, { includeQueued: true })).updated).toBe(0);
    expect((await q.complete(name, { id, retryCount: 1 }, null, { includeQueued: true })).updated).toBe(1);
  });

  it('a queued flow parent completed this way releases its children, as a normal completion does', async () => {
    const parentQueue = await newQueue(partition);
    const childQueue = await newQueue(partition);
    const ids = await q.flow([
      { name: parentQueue, ref: 'p', data: { step: 1 } },
      { name: childQueue, ref: 'c', data: { step: 2 }, dependsOn: ['p'] },
    ]);
    expect(await q.fetch(childQueue)).toEqual([]);
    expect((await q.complete(parentQueue, ids.p!, { done: true }, { includeQueued: true })).updated).toBe(1);
    expect((await q.fetch(childQueue)).map((j) => j.id)).toEqual([ids.c]);
  });

  it('a child waiting for its parent may be completed; the parent completing later leaves it completed', async () => {
    const parentQueue = await newQueue(partition);
    const childQueue = await newQueue(partition);
    const ids = await q.flow([
      { name: parentQueue, ref: 'p' },
      { name: childQueue, ref: 'c', dependsOn: ['p'] },
    ]);
    expect((await q.complete(childQueue, ids.c!, 'skipped', { includeQueued: true })).updated).toBe(1);
    await q.fetch(parentQueue);
    expect((await q.complete(parentQueue, ids.p!)).updated).toBe(1);
    expect(await row(ids.c!)).toMatchObject({ state: 'completed', output: 'skipped' });
  });

  it('key_strict_fifo: a queued job completed keeps its key in order, ahead of it or behind it', async () => {
    const name = await newQueue(partition, { policy: 'key_strict_fifo' });
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) sent.push((await q.send(name, { i }, { singletonKey: 'k' }))!);
    // the second, waiting behind the first
    expect((await q.complete(name, sent[1]!, null, { includeQueued: true })).updated).toBe(1);
    // the head itself
    expect((await q.complete(name, sent[0]!, null, { includeQueued: true })).updated).toBe(1);
    const [next] = await q.fetch(name, { batchSize: 5 });
    expect(next!.id).toBe(sent[2]);
    expect(await q.fetch(name)).toEqual([]);
    await q.complete(name, next!.id);
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([sent[3]]);
  });

  it('exclusive: the key a queued job held is free again once it is completed', async () => {
    const name = await newQueue(partition, { policy: 'exclusive' });
    const first = (await q.send(name, {}, { singletonKey: 'k' }))!;
    expect(await q.send(name, {}, { singletonKey: 'k' })).toBeNull();
    await q.complete(name, first, null, { includeQueued: true });
    const second = await q.send(name, {}, { singletonKey: 'k' });
    expect(second).not.toBeNull();
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([second]);
  });

  it('singleton: completing the queued job of a key while another runs leaves the running one alone', async () => {
    const name = await newQueue(partition, { policy: 'singleton' });
    const running = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.fetch(name);
    const queued = (await q.send(name, {}, { singletonKey: 'k' }))!;
    expect((await q.complete(name, queued, null, { includeQueued: true })).ids).toEqual([queued]);
    expect((await row(running))!.state).toBe('active');
    const later = (await q.send(name, {}, { singletonKey: 'k' }))!;
    expect(await q.fetch(name)).toEqual([]);
    await q.complete(name, running);
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([later]);
  });

  it('removeOnComplete: a queued job completed is deleted', async () => {
    const name = await newQueue(partition, { removeOnComplete: true });
    const id = (await q.send(name, {}))!;
    expect((await q.complete(name, id, null, { includeQueued: true })).ids).toEqual([id]);
    expect(await row(id)).toBeUndefined();
  });
});

describe('complete(name, ids, { includeQueued }): the options given third', () => {
  it('completes a queued job with no output; with options after it, the same object is the output', async () => {
    const name = await newQueue(false);
    const [short, long, plain] = await q.insert(name, [{ data: {} }, { data: {} }, { data: {} }]);
    expect((await q.complete(name, short!, { includeQueued: true })).ids).toEqual([short]);
    expect(await row(short!)).toMatchObject({ state: 'completed', output: null });
    expect((await q.complete(name, long!, { includeQueued: true }, {})).updated).toBe(0);
    expect((await row(long!))!.state).toBe('created');
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([long]);
    expect((await q.complete(name, long!, { includeQueued: true }, {})).updated).toBe(1);
    expect(await row(long!)).toMatchObject({ state: 'completed', output: { includeQueued: true } });
    // false is the default: a queued job stays queued
    expect((await q.complete(name, plain!, { includeQueued: false })).updated).toBe(0);
    await expect(q.complete(name, plain!, { includeQueued: 'yes' })).rejects.toMatchObject({ field: 'options.includeQueued' });
  });
});

describe('complete options: bad input', () => {
  it('a wrong type or an unknown key is refused, naming the field, and nothing changes', async () => {
    const name = await newQueue(false);
    const id = (await q.send(name, {}))!;
    await expect(q.complete(name, id, null, { includeQueued: 'yes' as unknown as boolean })).rejects.toMatchObject({
      constructor: InvalidOptionError,
      field: 'options.includeQueued',
      value: 'yes',
    });
    await expect(q.complete(name, id, null, { includeQueud: true } as never)).rejects.toMatchObject({ field: 'options.includeQueud' });
    await expect(q.complete(name, id, null, 5 as never)).rejects.toMatchObject({ field: 'options' });
    expect((await row(id))!.state).toBe('created');
  });
});
