// getDependencies / getDependents (the jobs a flow links to a job: its parents, its children), and what getJobById
// says of a job's place among other jobs: policy, group, throttle slot, why it waits (blocked) and whether
// children wait for it (blocking).
import { InvalidOptionError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('deps');
const q = f.create({ supervise: false });
beforeAll(async () => {
  await q.createQueue('dep.a');
  await q.createQueue('dep.b', { partition: true });
  await q.createQueue('dep.c');
});
afterAll(() => f.cleanup());

const summary = (jobs: { name: string; id: string; state: string }[] | null) => jobs?.map(({ name, id, state }) => ({ name, id, state }));

/** Claims job `id` of `queue` (it must be the next there) and completes it. */
async function run(queue: string, id: string): Promise<void> {
  const [job] = await q.fetch(queue);
  expect(job?.id).toBe(id);
  await q.complete(queue, id);
}

describe('getDependencies and getDependents', () => {
  it('follow a flow both ways, across a partitioned queue, with each linked job as it is now', async () => {
    // p1 has two children (c1, c2); c1 has two parents (p1, p2). dep.b keeps its jobs in a partition of its own.
    const ids = await q.flow([
      { name: 'dep.a', ref: 'p1', data: { step: 'p1' } },
      { name: 'dep.b', ref: 'p2' },
      { name: 'dep.c', ref: 'c1', dependsOn: ['p1', 'p2'] },
      { name: 'dep.b', ref: 'c2', dependsOn: ['p1'] },
    ]);
    const { p1, p2, c1, c2 } = ids;

    expect(summary(await q.getDependencies('dep.c', c1!))).toEqual([
      { name: 'dep.a', id: p1, state: 'created' },
      { name: 'dep.b', id: p2, state: 'created' },
    ]);
    expect(summary(await q.getDependents('dep.a', p1!))).toEqual([
      { name: 'dep.b', id: c2, state: 'created' },
      { name: 'dep.c', id: c1, state: 'created' },
    ]);
    expect(summary(await q.getDependents('dep.b', p2!))).toEqual([{ name: 'dep.c', id: c1, state: 'created' }]);
    expect(summary(await q.getDependencies('dep.b', c2!))).toEqual([{ name: 'dep.a', id: p1, state: 'created' }]);
    // each is a whole job, as getJobById reads it
    expect((await q.getDependencies('dep.c', c1!))![0]).toMatchObject({
      data: { step: 'p1' },
      retryCount: 0,
      startAfter: expect.any(Date),
    });
    // a job without links answers an empty list
    expect(await q.getDependencies('dep.a', p1!)).toEqual([]);
    expect(await q.getDependents('dep.c', c1!)).toEqual([]);

    expect(await q.getJobById('dep.c', c1!)).toMatchObject({ blocked: 'parents', blocking: false, startAfter: null });
    expect(await q.getJobById('dep.a', p1!)).toMatchObject({ blocked: null, blocking: true });
    expect(await q.getJobById('dep.b', p2!)).toMatchObject({ blocked: null, blocking: true });

    // p1 completes: c2 may run, c1 still waits for p2
    await run('dep.a', p1!);
    expect(await q.getJobById('dep.a', p1!)).toMatchObject({ state: 'completed', blocking: false });
    expect(await q.getJobById('dep.b', c2!)).toMatchObject({ blocked: null, startAfter: expect.any(Date) });
    expect(await q.getJobById('dep.c', c1!)).toMatchObject({ blocked: 'parents' });
    expect(summary(await q.getDependencies('dep.c', c1!))).toEqual([
      { name: 'dep.a', id: p1, state: 'completed' },
      { name: 'dep.b', id: p2, state: 'created' },
    ]);

    // p2 completes (dep.b's next job: p2 was sent before c2): c1 may run
    await run('dep.b', p2!);
    expect(await q.getJobById('dep.c', c1!)).toMatchObject({ blocked: null, blocking: false });
    expect(await q.getJobById('dep.b', p2!)).toMatchObject({ blocking: false });
    expect(summary(await q.getDependencies('dep.c', c1!))!.map((j) => j.state)).toEqual(['completed', 'completed']);
    // the links stay after the parents completed: getDependents still lists the children, now runnable
    expect(summary(await q.getDependents('dep.a', p1!))!.map((j) => j.state)).toEqual(['created', 'created']);
  });

  it('a parent whose children no longer wait (deleted, cancelled by hand) is not blocking, though the links stay', async () => {
    await q.createQueue('dep.gone');
    const ids = await q.flow([
      { name: 'dep.gone', ref: 'p' },
      { name: 'dep.c', ref: 'c1', dependsOn: ['p'] },
      { name: 'dep.c', ref: 'c2', dependsOn: ['p'] },
    ]);
    expect(await q.getJobById('dep.gone', ids.p!)).toMatchObject({ state: 'created', blocking: true });
    await q.deleteJob('dep.c', ids.c1!);
    expect(await q.getJobById('dep.gone', ids.p!)).toMatchObject({ blocking: true });
    await q.cancel('dep.c', ids.c2!);
    expect(await q.getJobById('dep.gone', ids.p!)).toMatchObject({ state: 'created', blocking: false });
    expect(summary(await q.getDependents('dep.gone', ids.p!))).toEqual([{ name: 'dep.c', id: ids.c2, state: 'cancelled' }]);
  });

  it('a parent that fails for good no longer blocks: its children failed with it', async () => {
    await q.createQueue('dep.fails', { retryLimit: 0 });
    const ids = await q.flow([
      { name: 'dep.fails', ref: 'p' },
      { name: 'dep.c', ref: 'c', dependsOn: ['p'] },
    ]);
    expect(await q.getJobById('dep.fails', ids.p!)).toMatchObject({ blocking: true });
    await q.fetch('dep.fails');
    await q.fail('dep.fails', ids.p!, new Error('no'));
    expect(await q.getJobById('dep.fails', ids.p!)).toMatchObject({ state: 'failed', blocking: false });
    expect(await q.getJobById('dep.c', ids.c!)).toMatchObject({ state: 'failed', blocked: null });
    expect(summary(await q.getDependents('dep.fails', ids.p!))).toEqual([{ name: 'dep.c', id: ids.c, state: 'failed' }]);
  });

  it('answer null for a job that does not exist, as getJobById does, and a typed error for a bad id', async () => {
    for (const name of ['dep.a', 'dep.b', 'no.such.queue']) {
      expect(await q.getDependencies(name, '999999999')).toBeNull();
      expect(await q.getDependents(name, '999999999')).toBeNull();
      expect(await q.getJobById(name, '999999999')).toBeNull();
    }
    await expect(q.getDependencies('dep.a', 'abc')).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'id' });
    await expect(q.getDependents('dep.a', ['1'] as unknown as string)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(q.getDependents('bad name', '1')).rejects.toMatchObject({ field: 'name' });
  });
});

describe("getJobById: a job's place among other jobs", () => {
  it('gives the policy copied onto the job, and its group (id and tier) or null', async () => {
    await q.createQueue('dep.stately', { policy: 'stately' });
    const grouped = (await q.send('dep.stately', {}, { singletonKey: 'k1', group: { id: 'tenant-1', tier: 'gold' } }))!;
    const untiered = (await q.send('dep.stately', {}, { singletonKey: 'k2', group: { id: 'tenant-2' } }))!;
    const alone = (await q.send('dep.stately', {}, { singletonKey: 'k3' }))!;
    expect(await q.getJobById('dep.stately', grouped)).toMatchObject({ policy: 'stately', group: { id: 'tenant-1', tier: 'gold' } });
    expect((await q.getJobById('dep.stately', untiered))!.group).toEqual({ id: 'tenant-2', tier: null });
    expect(await q.getJobById('dep.stately', alone)).toMatchObject({ group: null, singletonOn: null, slotUntil: null });
    expect((await q.getJobById('dep.b', (await q.send('dep.b', {}))!))!.policy).toBe('standard');
  });

  it('gives the throttle slot a throttled or debounced job holds', async () => {
    await q.createQueue('dep.throttled');
    const id = (await q.sendThrottled('dep.throttled', {}, null, 3600, 'k'))!;
    const job = (await q.getJobById('dep.throttled', id))!;
    const [now] = await f.sql<{ ms: number }>('SELECT (extract(epoch FROM now()) * 1000)::float8 AS ms');
    const slot = Math.floor(now!.ms / 3_600_000) * 3_600_000;
    expect(job.singletonOn!.getTime()).toBe(slot);
    expect(job.slotUntil!.getTime()).toBe(slot + 3_600_000);
    // a debounced send into a taken slot waits in the next one
    const next = (await q.sendDebounced('dep.throttled', {}, null, 3600, 'k'))!;
    expect((await q.getJobById('dep.throttled', next))!.singletonOn!.getTime()).toBe(slot + 3_600_000);
  });

  it("says a key_strict_fifo job waits behind its key ('key') until the job ahead of it is done", async () => {
    await q.createQueue('dep.fifo', { policy: 'key_strict_fifo' });
    const first = (await q.send('dep.fifo', {}, { singletonKey: 'k' }))!;
    const second = (await q.send('dep.fifo', {}, { singletonKey: 'k' }))!;
    const [inBatch, behindInBatch] = await q.insert('dep.fifo', [
      { data: {}, singletonKey: 'm' },
      { data: {}, singletonKey: 'm' },
    ]);
    const other = (await q.send('dep.fifo', {}, { singletonKey: 'other' }))!;
    expect(await q.getJobById('dep.fifo', first)).toMatchObject({ policy: 'key_strict_fifo', blocked: null, blocking: false });
    expect((await q.getJobById('dep.fifo', second))!.blocked).toBe('key');
    expect((await q.getJobById('dep.fifo', inBatch!))!.blocked).toBeNull();
    expect((await q.getJobById('dep.fifo', behindInBatch!))!.blocked).toBe('key');
    expect((await q.getJobById('dep.fifo', other))!.blocked).toBeNull();
    // active, the first still holds the key; completed, it lets the second lead
    const claimed = await q.fetch('dep.fifo', { batchSize: 10 });
    expect(claimed.map((j) => j.id).sort()).toEqual([first, inBatch, other].sort());
    expect((await q.getJobById('dep.fifo', second))!.blocked).toBe('key');
    await q.complete('dep.fifo', first);
    expect((await q.getJobById('dep.fifo', second))!.blocked).toBeNull();
    // a job that is not waiting is never blocked
    expect((await q.getJobById('dep.fifo', inBatch!))!.blocked).toBeNull();
  });
});
