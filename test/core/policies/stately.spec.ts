import { QueueError } from '../../../lib/core/errors.js';
import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_stately');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
async function queue(options = {}): Promise<string> {
  const name = `stately.${++n}`;
  await q.createQueue(name, { policy: 'stately', retryLimit: 3, ...options });
  return name;
}

describe('policy stately: at most one job per key in each state', () => {
  it('one queued per key: a second send returns null', async () => {
    const name = await queue();
    expect(await q.send(name, {}, { singletonKey: 'k' })).not.toBeNull();
    expect(await q.send(name, {}, { singletonKey: 'k' })).toBeNull();
    expect(await q.send(name, {}, { singletonKey: 'other' })).not.toBeNull();
  });

  it('one active and one queued of a key may exist together, and only one runs', async () => {
    const name = await queue();
    const first = await q.send(name, {}, { singletonKey: 'k' });
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([first]);
    const second = await q.send(name, {}, { singletonKey: 'k' });
    expect(second).not.toBeNull();
    expect(await q.fetch(name)).toEqual([]);
    await q.complete(name, first!);
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([second]);
  });

  it('a failure goes to retry when the key has no job in retry', async () => {
    const name = await queue();
    const id = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.fetch(name);
    await q.fail(name, id);
    expect(await q.getJobById(name, id)).toMatchObject({ state: 'retry', retryCount: 1 });
  });

  it('while one job of the key waits in retry, failing another active job of the key fails it for good', async () => {
    const name = await queue({ retryDelay: 3600 });
    const waiting = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.fetch(name);
    await q.fail(name, waiting);
    expect((await q.getJobById(name, waiting))!.state).toBe('retry');
    const other = (await q.send(name, {}, { singletonKey: 'k' }))!;
    expect((await q.fetch(name)).map((j) => j.id)).toEqual([other]);
    await q.fail(name, other, new Error('second failure'));
    expect(await q.getJobById(name, other)).toMatchObject({ state: 'failed', retryCount: 0 });
    expect((await q.getJobById(name, waiting))!.state).toBe('retry');
  });

  it('an expired lease obeys the same rule', async () => {
    const name = await queue({ retryDelay: 3600 });
    const waiting = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.fetch(name);
    await q.fail(name, waiting);
    const other = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.fetch(name);
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [other]);
    await q.maintain({ force: true });
    expect((await q.getJobById(name, other))!.state).toBe('failed');
  });

  it('resuming a cancelled job whose key is taken is refused with a typed error, changing nothing', async () => {
    const name = await queue();
    const cancelled = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.cancel(name, cancelled);
    expect(await q.send(name, {}, { singletonKey: 'k' })).not.toBeNull();
    const err = await q.resume(name, cancelled).catch((e) => e);
    expect(err).toBeInstanceOf(QueueError);
    expect(err.code).toBe('KEY_TAKEN');
    expect((await q.getJobById(name, cancelled))!.state).toBe('cancelled');
  });
});

describe('stately hand-back', () => {
  it('a job handed back at shutdown while its key waits in retry goes to the free created slot, no attempt counted', async () => {
    const name = await queue({ retryDelay: 3600 });
    const waiting = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await q.fetch(name);
    await q.fail(name, waiting);
    const w = f.create({ supervise: false, shutdownTimeoutMs: 20 });
    let started = '';
    await w.work(name, { pollingIntervalSeconds: 0.05 }, (job) => {
      started = job.id;
      return new Promise(() => undefined);
    });
    const running = (await q.send(name, {}, { singletonKey: 'k' }))!;
    const { until } = await import('../../helpers/db.js');
    await until(() => started === running, 'the second job is running');
    await w.stopWorkers();
    expect(await q.getJobById(name, running)).toMatchObject({ state: 'created', retryCount: 0 });
    expect((await q.getJobById(name, waiting))!.state).toBe('retry');
  });
});
