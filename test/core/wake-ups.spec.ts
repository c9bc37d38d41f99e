// A job that a queue held back (behind its key, a singleton or concurrency slot, a group's turn) is claimed as
// soon as the job before it has finished in the same process, not at the loop's next poll. The loops here poll
// once a minute: only the wake-up can run the chain within the tests' deadlines.
import type { QueueOptions, WorkOptions } from '../../lib/core/types.js';
import { deferred, stateCounts, testPool, until } from '../helpers/db.js';
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

describe('wake-ups for held-back jobs, in another process', () => {
  it('a key_strict_fifo job finished by one engine wakes the loop of another for the next job of its key', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = 'wake.across';
    await a.createQueue(name, { policy: 'key_strict_fifo' });
    const [first, second] = await a.insert(name, [
      { data: { i: 0 }, singletonKey: 'k' },
      { data: { i: 1 }, singletonKey: 'k' },
    ]);
    const gate = deferred();
    let started = false;
    await a.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async () => {
      started = true;
      await gate.promise;
    });
    await until(() => started, 'the first job running in a');
    // Sessions whose last statement was a claim on this schema, now idle: a's one so far. (pg_stat_activity keeps
    // the first 1,024 bytes of a statement: the claim is known by its opening.)
    const claimsDone = async () =>
      (
        await f.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle' AND query LIKE '%WITH next AS MATERIALIZED%' AND query LIKE $1`,
          [`%"${f.schema}"%`],
        )
      )[0]!.n;
    const before = await claimsDone();
    const ranInB: string[] = [];
    await b.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ranInB.push(job.id));
    // b's first claim has found the key held by a's running job; b then sleeps for a minute.
    await until(async () => (await claimsDone()) > before, "b's first claim done");
    // a stops claiming (its running job drains), so only b can take the next job of the key.
    const aStopped = a.offWork(name);
    gate.resolve();
    await aStopped;
    await until(() => ranInB.length === 1, "the key's next job run by b", 20_000, 25);
    expect(ranInB).toEqual([second]);
    expect((await a.getJobById(name, first!))!.state).toBe('completed');
    await b.offWork(name);
  });

  it('outcomes on a queue that holds jobs back send a NOTIFY for it, beside the one of the insert', async () => {
    // (That a plain queue's outcomes send none is the completer's unit test: an absence has no moment to wait for.)
    const q = f.create({ supervise: false, useListenNotify: false });
    await q.createQueue('wake.notify.fifo', { policy: 'key_strict_fifo' });
    const listener = testPool(1);
    const client = await listener.connect();
    const heard: string[] = [];
    try {
      client.on('notification', (n) => heard.push(n.payload ?? ''));
      await client.query(`LISTEN "${q.config.channel}"`);
      await q.insert('wake.notify.fifo', [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
      await until(() => heard.length === 1, "the insert's NOTIFY");
      await q.work('wake.notify.fifo', { pollingIntervalSeconds: 0.05 }, async () => undefined);
      await until(() => heard.length >= 3, 'a NOTIFY after each of the two outcomes');
      expect(new Set(heard)).toEqual(new Set(['wake.notify.fifo']));
      await q.offWork('wake.notify.fifo');
    } finally {
      client.release();
      await listener.end();
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
    const claimsDone = async () =>
      (
        await f.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle' AND query LIKE '%WITH next AS MATERIALIZED%' AND query LIKE $1`,
          [`%"${f.schema}"%`],
        )
      )[0]!.n;
    const before = await claimsDone();
    const ran: string[] = [];
    await a.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ran.push(job.id));
    await until(async () => (await claimsDone()) > before, "a's first claim done (the key is held by b's fetch)");
    expect((await b.complete(name, first!)).updated).toBe(1);
    await until(() => ran.length === 1, "the key's next job run by a", 20_000, 25);
    expect(ran).toEqual([second]);
    await a.offWork(name);
  });

  it.each(['fail', 'cancel', 'deleteJob'] as const)('%s() by hand on a key_strict_fifo queue sends a NOTIFY for it', async (call) => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = `wake.hand.${call}`;
    await q.createQueue(name, { policy: 'key_strict_fifo', retryLimit: 0 });
    const [id] = await q.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
    await q.fetch(name);
    const listener = testPool(1);
    const client = await listener.connect();
    const heard: string[] = [];
    try {
      client.on('notification', (n) => heard.push(n.payload ?? ''));
      await client.query(`LISTEN "${q.config.channel}"`);
      expect((await q[call](name, id!)).updated).toBe(1);
      await until(() => heard.includes(name), `a NOTIFY for ${name}`);
    } finally {
      client.release();
      await listener.end();
    }
  });
});
