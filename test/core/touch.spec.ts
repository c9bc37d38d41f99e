import { InvalidOptionError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('touch');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let name = 't';
let queues = 0;
beforeEach(async () => {
  // A queue per test, so a job one test leaves active is never fetched by the next.
  name = `t${++queues}`;
  await q.createQueue(name, { heartbeatSeconds: 30, retryLimit: 2, retryDelay: 0 });
});

interface Times {
  heartbeat: Date | null;
  lease: Date | null;
  /** Seconds from the database's now to heartbeat_until. */
  heartbeatLeft: number | null;
}

async function times(id: string): Promise<Times> {
  const [row] = await f.sql<Times>(
    `SELECT heartbeat_until AS heartbeat, lease_until AS lease,
      extract(epoch FROM heartbeat_until - now())::float8 AS "heartbeatLeft" FROM $schema.jobs WHERE id = $1`,
    [id],
  );
  return row!;
}

/** Brings the job's heartbeat to run out in `seconds` (negative: already run out). */
async function heartbeatIn(id: string, seconds: number): Promise<void> {
  await f.sql(`UPDATE $schema.jobs SET heartbeat_until = now() + $2 * interval '1 second' WHERE id = $1`, [id, seconds]);
}

async function fetchOne(queue = name): Promise<{ id: string; retryCount: number }> {
  const [job] = await q.fetch(queue);
  expect(job).toBeDefined();
  return { id: job!.id, retryCount: job!.retryCount };
}

describe('touch', () => {
  it("extends a fetched job's heartbeat by its heartbeatSeconds from now, and leaves its lease alone", async () => {
    await q.send(name, {});
    const { id } = await fetchOne();
    await heartbeatIn(id, 2);
    const before = await times(id);
    expect(await q.touch(name, id)).toEqual({ requested: 1, updated: 1, ids: [id] });
    const after = await times(id);
    expect(after.heartbeatLeft).toBeGreaterThan(25);
    expect(after.heartbeatLeft).toBeLessThanOrEqual(30);
    expect(after.lease).toEqual(before.lease);
  });

  it('a touch from a stale attempt is refused; the current attempt may touch', async () => {
    await q.send(name, {});
    const first = await fetchOne();
    await q.fail(name, first, new Error('first attempt'));
    const second = await fetchOne();
    expect(second).toEqual({ id: first.id, retryCount: 1 });
    await heartbeatIn(second.id, 2);
    const before = await times(second.id);
    expect(await q.touch(name, first)).toEqual({ requested: 1, updated: 0, ids: [] });
    expect((await times(second.id)).heartbeat).toEqual(before.heartbeat);
    expect((await q.touch(name, second)).ids).toEqual([second.id]);
    expect((await times(second.id)).heartbeatLeft).toBeGreaterThan(25);
    // once the attempt completed, its own touch changes nothing either
    await q.complete(name, second);
    expect((await q.touch(name, second)).updated).toBe(0);
    expect(await times(second.id)).toMatchObject({ heartbeat: null, lease: null });
  });

  it('a job that is not active is not touched: waiting, completed, cancelled, or of another queue', async () => {
    await q.createQueue(`${name}.other`, { heartbeatSeconds: 30 });
    const waiting = (await q.send(name, {}))!;
    await q.send(name, {}, { priority: 10 }); // fetched first
    const { id: completed } = await fetchOne();
    await q.complete(name, completed);
    await q.send(name, {}, { priority: 10 });
    const { id: cancelled } = await fetchOne();
    await q.cancel(name, cancelled);
    await q.send(`${name}.other`, {});
    const { id: elsewhere } = await fetchOne(`${name}.other`);
    await heartbeatIn(elsewhere, 2);
    const before = await times(elsewhere);
    expect(await q.touch(name, [waiting, completed, cancelled, elsewhere])).toEqual({ requested: 4, updated: 0, ids: [] });
    for (const id of [waiting, completed, cancelled]) expect((await times(id)).heartbeat).toBeNull();
    expect((await times(elsewhere)).heartbeat).toEqual(before.heartbeat);
    expect((await q.getJobById(name, waiting))!.state).toBe('created');
  });

  it('touches many jobs in one call, each by its own fence', async () => {
    await q.insert(name, [{}, {}, {}]);
    const jobs = await q.fetch(name, { batchSize: 3 });
    expect(jobs).toHaveLength(3);
    const [a, b, c] = jobs.map((j) => j.id) as [string, string, string];
    for (const id of [a, b, c]) await heartbeatIn(id, 2);
    const result = await q.touch(name, [a, { id: b, retryCount: 0 }, { id: c, retryCount: 1 }, a]);
    expect(result.requested).toBe(4);
    expect(result.updated).toBe(2);
    expect([...result.ids].sort()).toEqual([a, b].sort());
    expect((await times(a)).heartbeatLeft).toBeGreaterThan(25);
    expect((await times(b)).heartbeatLeft).toBeGreaterThan(25);
    expect((await times(c)).heartbeatLeft).toBeLessThanOrEqual(2);
  });

  it('a job without heartbeatSeconds has no heartbeat to extend: it is named as active, its lease unchanged', async () => {
    await q.createQueue(`${name}.plain`);
    await q.send(`${name}.plain`, {});
    const { id } = await fetchOne(`${name}.plain`);
    const before = await times(id);
    expect(before.heartbeat).toBeNull();
    expect(await q.touch(`${name}.plain`, id)).toEqual({ requested: 1, updated: 1, ids: [id] });
    expect(await times(id)).toMatchObject({ heartbeat: null, lease: before.lease });
  });

  it('touches the jobs of a queue in a partition of its own', async () => {
    await q.createQueue(`${name}.part`, { partition: true, heartbeatSeconds: 30 });
    await q.send(`${name}.part`, {});
    const { id } = await fetchOne(`${name}.part`);
    await heartbeatIn(id, 2);
    expect((await q.touch(`${name}.part`, [id])).ids).toEqual([id]);
    expect((await times(id)).heartbeatLeft).toBeGreaterThan(25);
  });

  it('the reaper leaves a touched job whose heartbeat had run out; it still reaps a lease run out, which touch does not extend', async () => {
    await q.insert(name, [{}, {}, {}]);
    const [touched, control, leased] = (await q.fetch(name, { batchSize: 3 })).map((j) => j.id) as [string, string, string];
    for (const id of [touched, control, leased]) await heartbeatIn(id, -1);
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [leased]);
    expect((await q.touch(name, [touched, leased])).updated).toBe(2);
    expect((await q.maintain({ force: true })).reaped).toBe(2);
    expect((await q.getJobById(name, touched))!.state).toBe('active');
    for (const id of [control, leased]) expect(await q.getJobById(name, id)).toMatchObject({ state: 'retry', retryCount: 1 });
    expect((await q.complete(name, { id: touched, retryCount: 0 })).updated).toBe(1);
  });
});

describe('touch: bad input', () => {
  it.each([
    ['a bad queue name', () => q.touch('bad name', '1'), 'name', 'got "bad name"'],
    ['no ids', () => q.touch('good', []), 'ids', 'at least one job id'],
    ['an id that is not digits', () => q.touch('good', 'abc'), 'id', 'got "abc"'],
    ['an id of a list that is not digits', () => q.touch('good', ['1', '-2']), 'ids[1]', 'got "-2"'],
    ['a negative retryCount', () => q.touch('good', [{ id: '1', retryCount: -1 }]), 'ids[0].retryCount', 'got -1'],
    ['a fractional retryCount', () => q.touch('good', { id: '1', retryCount: 0.5 }), 'id.retryCount', 'got 0.5'],
  ] as const)('%s is refused with InvalidOptionError naming the field, and touches nothing', async (_what, call, field, says) => {
    await q.send(name, {});
    const { id } = await fetchOne();
    await heartbeatIn(id, 2);
    const before = await times(id);
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err).toMatchObject({ code: 'INVALID_OPTION', field });
    expect((err as Error).message).toContain(says);
    expect(await times(id)).toMatchObject({ heartbeat: before.heartbeat, lease: before.lease });
  });
});
