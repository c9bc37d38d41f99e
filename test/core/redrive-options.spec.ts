import { InvalidOptionError, PermanentJobError, QueueNotFoundError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('redriveopts');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let sets = 0;
/** A dead-letter queue fed by two source queues, and a destination with settings of its own; new per test. */
async function queues(partition: boolean, destination: Record<string, unknown> = {}) {
  const n = ++sets;
  const names = { dlq: `dlq${n}`, a: `src${n}.a`, b: `src${n}.b`, dest: `dest${n}` };
  await q.createQueue(names.dlq, { partition, retryLimit: 7 });
  await q.createQueue(names.a, { partition, retryLimit: 0, deadLetter: names.dlq });
  await q.createQueue(names.b, { partition, retryLimit: 0, deadLetter: names.dlq });
  await q.createQueue(names.dest, { partition, retryLimit: 5, expireInSeconds: 55, ...destination });
  return names;
}

/** Sends a job to `queue`, fails it for good, and returns its copy's id in the dead-letter queue. */
async function deadLetter(queue: string, dlq: string, data: unknown, options = {}): Promise<string> {
  const id = (await q.send(queue, data, options))!;
  const [job] = await q.fetch(queue);
  expect(job!.id).toBe(id);
  await q.fail(queue, id, new PermanentJobError('declined'));
  const [row] = await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = $1 AND source_id = $2`, [dlq, id]);
  return row!.id;
}

const queueOf = async (id: string) => (await f.sql<{ queue: string }>('SELECT queue FROM $schema.jobs WHERE id = $1', [id]))[0]?.queue;

describe.each([false, true])('redrive options (partition: %s)', (partition) => {
  it('sourceName: only jobs that came from that queue move, back to it', async () => {
    const n = await queues(partition);
    const fromA = await deadLetter(n.a, n.dlq, { from: 'a' });
    const fromB = await deadLetter(n.b, n.dlq, { from: 'b' });
    const result = await q.redrive(n.dlq, { sourceName: n.a });
    expect(result.moved).toBe(1);
    expect(await queueOf(result.ids[0]!)).toBe(n.a);
    expect(await queueOf(fromA)).toBeUndefined();
    expect(await queueOf(fromB)).toBe(n.dlq);
    // a source with no jobs there moves nothing
    expect(await q.redrive(n.dlq, { sourceName: n.dest })).toEqual({ moved: 0, ids: [] });
  });

  it("destination: the jobs move there instead, under the destination's settings, keeping the chain's root", async () => {
    const n = await queues(partition);
    const copyA = await deadLetter(n.a, n.dlq, { from: 'a' }, { priority: 4, singletonKey: 'k' });
    const copyB = await deadLetter(n.b, n.dlq, { from: 'b' });
    const sourceOfA = (await q.getJobById(n.dlq, copyA))!.sourceId;
    const result = await q.redrive(n.dlq, { destination: n.dest });
    expect(result.moved).toBe(2);
    const moved = await Promise.all(result.ids.map((id) => q.getJobById(n.dest, id)));
    expect(moved.map((j) => j!.data)).toEqual([{ from: 'a' }, { from: 'b' }]);
    expect(moved[0]).toMatchObject({
      name: n.dest,
      state: 'created',
      priority: 4,
      singletonKey: 'k',
      retryLimit: 5,
      expireInSeconds: 55,
      sourceName: null,
      sourceRootId: sourceOfA,
    });
    for (const id of [copyA, copyB]) expect(await queueOf(id)).toBeUndefined();
    expect(await q.fetch(n.a)).toEqual([]);
    expect(await q.fetch(n.dest, { batchSize: 5 })).toHaveLength(2);
  });

  it('sourceName and destination together, with ids and limit', async () => {
    const n = await queues(partition);
    const a1 = await deadLetter(n.a, n.dlq, { i: 1 });
    const b1 = await deadLetter(n.b, n.dlq, { i: 2 });
    const a2 = await deadLetter(n.a, n.dlq, { i: 3 });
    const a3 = await deadLetter(n.a, n.dlq, { i: 4 });
    // ids name a1, b1 and a3; sourceName leaves b1; the limit keeps the lowest id of the others
    const first = await q.redrive(n.dlq, { ids: [a1, b1, a3], sourceName: n.a, destination: n.dest, limit: 1 });
    expect(first.moved).toBe(1);
    expect((await q.getJobById(n.dest, first.ids[0]!))!.data).toEqual({ i: 1 });
    const rest = await q.redrive(n.dlq, { sourceName: n.a, destination: n.dest, limit: 10 });
    expect(rest.moved).toBe(2);
    expect(new Set(await Promise.all([a1, a2, a3].map(queueOf)))).toEqual(new Set([undefined]));
    expect(await queueOf(b1)).toBe(n.dlq);
  });

  it('destination takes jobs whose source queue is gone, which a plain redrive cannot move', async () => {
    const n = await queues(partition);
    const copy = await deadLetter(n.b, n.dlq, { orphan: true });
    await q.deleteQueue(n.b);
    expect(await q.redrive(n.dlq)).toEqual({ moved: 0, ids: [] });
    const result = await q.redrive(n.dlq, { destination: n.dest, sourceName: n.b });
    expect(result.moved).toBe(1);
    expect(await queueOf(copy)).toBeUndefined();
  });

  it("a job the destination's policy refuses stays in the dead-letter queue", async () => {
    const n = await queues(partition, { policy: 'exclusive' });
    await q.send(n.dest, {}, { singletonKey: 'k' });
    const copy = await deadLetter(n.a, n.dlq, {}, { singletonKey: 'k' });
    expect(await q.redrive(n.dlq, { destination: n.dest })).toEqual({ moved: 0, ids: [] });
    expect(await queueOf(copy)).toBe(n.dlq);
  });

  it('a key_strict_fifo destination takes only jobs with a key, as send does: a keyless one stays', async () => {
    const n = await queues(partition, { policy: 'key_strict_fifo' });
    const keyless = await deadLetter(n.a, n.dlq, { v: 1 });
    const keyed = await deadLetter(n.a, n.dlq, { v: 2 }, { singletonKey: 'k' });
    const moved = await q.redrive(n.dlq, { destination: n.dest });
    expect(moved.moved).toBe(1);
    expect(await queueOf(keyless)).toBe(n.dlq);
    expect(await queueOf(keyed)).toBeUndefined();
    expect(await queueOf(moved.ids[0]!)).toBe(n.dest);
  });

  it('a destination that does not exist: QueueNotFoundError, and nothing moves', async () => {
    const n = await queues(partition);
    const copy = await deadLetter(n.a, n.dlq, {});
    await expect(q.redrive(n.dlq, { destination: 'no.such.queue' })).rejects.toBeInstanceOf(QueueNotFoundError);
    expect(await queueOf(copy)).toBe(n.dlq);
  });
});

describe('redrive options: bad input', () => {
  it('a wrong type or the dead-letter queue itself is refused, naming the field, and nothing moves', async () => {
    const n = await queues(false);
    const copy = await deadLetter(n.a, n.dlq, {});
    const refused = [
      [{ sourceName: 5 }, 'options.sourceName', 5],
      [{ sourceName: '' }, 'options.sourceName', ''],
      [{ destination: ['x'] }, 'options.destination', ['x']],
      [{ destination: n.dlq }, 'options.destination', n.dlq],
      // pg-boss's filters not built here: refused, never taken as a filter that matched everything
      [{ createdBefore: new Date(0) }, 'options.createdBefore', new Date(0)],
      [{ data: { v: 1 } }, 'options.data', { v: 1 }],
    ] as const;
    for (const [options, field, value] of refused) {
      await expect(q.redrive(n.dlq, options as never)).rejects.toMatchObject({ constructor: InvalidOptionError, field, value });
    }
    expect(await queueOf(copy)).toBe(n.dlq);
  });
});
