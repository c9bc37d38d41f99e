// A job that a queue held back (behind its key, a singleton or concurrency slot, a group's turn) is claimed as
// soon as the job before it has finished in the same process, not at the loop's next poll. The loops here poll
// once a minute: only the wake-up can run the chain within the tests' deadlines.
import type { QueueOptions, WorkOptions } from '../../lib/core/types.js';
import { deferred, stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';
import { asleepSessions, listen, untilAsleep } from '../helpers/wake.js';

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
    await q.close();
  });

  it.each<[string, QueueOptions, WorkOptions, (i: number) => Record<string, unknown>]>([
    ['key_strict_fifo', { policy: 'key_strict_fifo' }, {}, (i) => ({ singletonKey: `k${i}` })],
    ['singleton', { policy: 'singleton' }, {}, (i) => ({ singletonKey: `k${i % 3}` })],
    ['a concurrency limit', { concurrencyLimit: 2 }, {}, () => ({})],
    ['group concurrency', {}, { groupConcurrency: 1 }, (i) => ({ group: { id: `g${i % 3}` } })],
  ])(
    '%s: a loop whose slots all fill drains a backlog of many jobs, polling once a minute',
    async (what, queueOptions, workOptions, job) => {
      // Fast handlers fill every slot with results being written; the loop then waits for a slot, not for work.
      const q = f.create({ supervise: false });
      const name = `wake.backlog.${what.replace(/[^a-z_]/g, '')}`;
      await q.createQueue(name, queueOptions);
      const n = 60;
      await q.insert(
        name,
        Array.from({ length: n }, (_, i) => job(i)),
      );
      await q.work(
        name,
        { concurrency: 2, batchSize: 2, pollingIntervalSeconds: POLL_ONCE_A_MINUTE, ...workOptions },
        async () => undefined,
      );
      await until(async () => (await stateCounts(f.pool, f.schema, name)).completed === n, `${n} jobs completed`, 20_000, 25);
      await q.close();
    },
  );
});

describe('wake-ups for held-back jobs, in another process', () => {
  it.each<[string, QueueOptions, WorkOptions, Record<string, unknown>]>([
    ['key_strict_fifo: the next job of its key', { policy: 'key_strict_fifo' }, {}, { singletonKey: 'k' }],
    ['singleton: the next job of its key', { policy: 'singleton' }, {}, { singletonKey: 'k' }],
    ['stately: the next job of its key', { policy: 'stately' }, {}, { singletonKey: 'k' }],
    ['a concurrency limit of 1: the next job', { concurrencyLimit: 1 }, {}, {}],
    ['group concurrency of 1: the next job of the group', {}, { groupConcurrency: 1 }, { group: { id: 'g' } }],
  ])('a job finished by one engine wakes the loop of another for %s', async (what, queueOptions, workOptions, job) => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = `wake.across.${what.split(':')[0]!.replace(/[^a-z_]/g, '')}`;
    await a.createQueue(name, queueOptions);
    const [first] = await a.insert(name, [{ data: { i: 0 }, ...job }]);
    const gate = deferred();
    let started = false;
    await a.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE, ...workOptions }, async () => {
      started = true;
      await gate.promise;
    });
    await until(() => started, 'the first job running in a');
    // Sent once the first runs (a stately key takes one queued job at a time); a has no free slot to claim it.
    const [second] = await a.insert(name, [{ data: { i: 1 }, ...job }]);
    expect(second).toBeDefined();
    const before = await asleepSessions(f);
    const ranInB: string[] = [];
    await b.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE, ...workOptions }, async (j) => void ranInB.push(j.id));
    // b's first claim has found the next job held back by a's running one; b then sleeps for a minute.
    await untilAsleep(f, before, "b's first claim done, b asleep");
    expect(ranInB).toEqual([]);
    // a stops claiming (its running job drains), so only b can take the next job.
    const aStopped = a.offWork(name);
    gate.resolve();
    await aStopped;
    await until(() => ranInB.length === 1, 'the next job run by b', 20_000, 25);
    expect(ranInB).toEqual([second]);
    expect((await a.getJobById(name, first!))!.state).toBe('completed');
    await Promise.all([a.close(), b.close()]);
  });

  it('a rate-limit window filled by one engine: the loop of another claims when it ends, with no poll', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = 'wake.across.window';
    await a.createQueue(name, { rateLimit: { count: 1, perSeconds: 2 } });
    const [first] = await a.insert(name, [{ data: { i: 0 } }]);
    const ranInA: string[] = [];
    await a.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (j) => void ranInA.push(j.id));
    await until(() => ranInA.length === 1, 'the first job run by a (the window is full)');
    await a.offWork(name);
    const [second] = await a.insert(name, [{ data: { i: 1 } }]);
    const ranInB: string[] = [];
    await b.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (j) => void ranInB.push(j.id));
    await until(() => ranInB.length === 1, 'the second job run by b once the window ended', 20_000, 25);
    expect(ranInA).toEqual([first]);
    expect(ranInB).toEqual([second]);
    await Promise.all([a.close(), b.close()]);
  });

  it.each([
    ['kept', false],
    ['deleted (removeOnComplete)', true],
  ])('outcomes on a queue that holds jobs back send a NOTIFY for it, jobs %s', async (_, removeOnComplete) => {
    // (That a plain queue's outcomes send none is the completer's unit test: an absence has no moment to wait for.)
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = `wake.notify.fifo.${removeOnComplete}`;
    await q.createQueue(name, { policy: 'key_strict_fifo', removeOnComplete });
    const { heard, stop } = await listen(q.config.channel);
    try {
      await q.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
      await until(() => heard.length === 1, "the insert's NOTIFY");
      await q.work(name, { pollingIntervalSeconds: 0.05 }, async () => undefined);
      await until(() => heard.length >= 3, 'a NOTIFY from each of the two outcomes');
      expect(new Set(heard)).toEqual(new Set([name]));
      await q.close();
    } finally {
      await stop();
    }
  });
});

describe('wake-ups from a transactional worker', () => {
  it('a transactional completion on a key_strict_fifo queue sends a NOTIFY for it', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'wake.notify.tx';
    await q.createQueue(name, { policy: 'key_strict_fifo' });
    const { heard, stop } = await listen(q.config.channel);
    try {
      await q.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
      await until(() => heard.length === 1, "the insert's NOTIFY");
      await q.work(name, { pollingIntervalSeconds: 0.05, transactional: true }, async () => undefined);
      await until(() => heard.length >= 3, 'a NOTIFY after each of the two transactional completions');
      await q.close();
    } finally {
      await stop();
    }
  });
});

describe('wake-ups after changes by hand', () => {
  it('complete() by hand in one engine wakes the loop of another for the next job of the key', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = 'wake.by-hand';
    await a.createQueue(name, { policy: 'key_strict_fifo' });
    const [first, second] = await a.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
    expect((await b.fetch(name)).map((j) => j.id)).toEqual([first]);
    const before = await asleepSessions(f);
    const ran: string[] = [];
    await a.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ran.push(job.id));
    await untilAsleep(f, before, "a's first claim done (the key is held by b's fetch), a asleep");
    expect((await b.complete(name, first!)).updated).toBe(1);
    await until(() => ran.length === 1, "the key's next job run by a", 20_000, 25);
    expect(ran).toEqual([second]);
    await Promise.all([a.close(), b.close()]);
  });

  it.each(['fail', 'cancel', 'deleteJob'] as const)('%s() by hand on a key_strict_fifo queue sends a NOTIFY for it', async (call) => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = `wake.hand.${call}`;
    await q.createQueue(name, { policy: 'key_strict_fifo', retryLimit: 0 });
    const [id] = await q.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
    await q.fetch(name);
    const { heard, stop } = await listen(q.config.channel);
    try {
      expect((await q[call](name, id!)).updated).toBe(1);
      await until(() => heard.includes(name), `a NOTIFY for ${name}`);
      await q.close();
    } finally {
      await stop();
    }
  });
});
