// A job that becomes claimable later (sent with startAfter, a retry waiting for its delay, a rate-limit window that
// opens) is claimed when it is due, not at the loop's next poll. The loops here poll once a minute: only a due-time
// wake-up can run these jobs within the tests' deadlines, which are generous (the tests assert no timings).
import { parseWake } from '../../lib/core/worker/notifier.js';
import { failArgs } from '../../lib/core/sql/index.js';
import { deferred, stateCounts, until } from '../helpers/db.js';
import { engineExec, engineStatements, queueFixture } from '../helpers/queue.js';
import { asleepSessions, listen, untilAsleep } from '../helpers/wake.js';

const f = queueFixture('due');
afterAll(() => f.cleanup());

const POLL_ONCE_A_MINUTE = 60;
const DEADLINE_MS = 20_000;

/** The wake-ups heard for `queue` that name a due time, as milliseconds. */
function dueTimes(heard: readonly string[], queue: string): number[] {
  return heard
    .map(parseWake)
    .filter((w) => w.queue === queue && w.dueInMs > 0)
    .map((w) => w.dueInMs);
}

describe('a deferred job wakes a loop when it is due', () => {
  it('sent by another engine while the loop sleeps: its NOTIFY names the due time, and the loop sets a timer', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = 'due.sent';
    await a.createQueue(name);
    const before = await asleepSessions(f);
    const ran: string[] = [];
    await b.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ran.push(job.id));
    // b has claimed nothing and read that nothing waits: it sleeps for a minute unless told otherwise.
    await untilAsleep(f, before, "b's loop asleep");
    const id = await a.send(name, {}, { startAfter: 1 });
    await until(() => ran.length === 1, 'the deferred job run by b', DEADLINE_MS, 25);
    expect(ran).toEqual([id]);
    const job = (await a.getJobById(name, id!))!;
    expect(job.startedOn!.getTime()).toBeGreaterThanOrEqual(job.startAfter!.getTime());
    await Promise.all([a.close(), b.close()]);
  });

  it('sent before the loop starts, with LISTEN off: the loop reads when it is due before it sleeps', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'due.read';
    await q.createQueue(name);
    const ids = [await q.send(name, { i: 0 }, { startAfter: 1 }), await q.send(name, { i: 1 }, { startAfter: 2 })];
    const ran: string[] = [];
    await q.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ran.push(job.id));
    await until(() => ran.length === 2, 'both deferred jobs run', DEADLINE_MS, 25);
    expect(ran).toEqual(ids);
    await q.close();
  });

  it('an announcement of an earlier job re-arms a loop that sleeps until a later one', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = 'due.rearm';
    await a.createQueue(name);
    const late = await a.send(name, {}, { startAfter: 3_600 });
    const before = await asleepSessions(f);
    const ran: string[] = [];
    await b.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ran.push(job.id));
    await untilAsleep(f, before, "b's loop asleep until its poll (the job it knows of is due in an hour)");
    const soon = await a.send(name, {}, { startAfter: 1 });
    await until(() => ran.length === 1, 'the earlier job run by b', DEADLINE_MS, 25);
    expect(ran).toEqual([soon]);
    expect((await a.getJobById(name, late!))!.state).toBe('created');
    await Promise.all([a.close(), b.close()]);
  });

  it('one insert of jobs due now and later sends a NOTIFY for each: the queue, and the queue with the delay', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'due.mixed';
    await q.createQueue(name);
    const { heard, stop } = await listen(q.config.channel);
    try {
      await q.insert(name, [{ data: {} }, { data: {}, startAfter: 30 }, { data: {}, startAfter: 60 }]);
      await until(() => heard.length === 2, 'two NOTIFYs');
      expect(heard).toContain(name);
      const [ms] = dueTimes(heard, name);
      expect(ms).toBeGreaterThan(25_000);
      expect(ms).toBeLessThanOrEqual(30_000);
      await q.close();
    } finally {
      await stop();
    }
  });
});

describe('a retry that waits for its delay wakes a loop when it is due', () => {
  it('failed in one engine, retried by the loop of another that sleeps', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    const name = 'due.retry';
    await a.createQueue(name, { retryLimit: 1, retryDelay: 1 });
    const id = await a.send(name, {});
    const gate = deferred();
    let started = false;
    await a.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async () => {
      started = true;
      await gate.promise;
      throw new Error('the first attempt fails');
    });
    await until(() => started, 'the first attempt running in a');
    const before = await asleepSessions(f);
    const ran: number[] = [];
    await b.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async (job) => void ran.push(job.retryCount));
    // b found nothing to claim and nothing waiting (the job is active in a): it sleeps for a minute.
    await untilAsleep(f, before, "b's loop asleep");
    // a stops claiming once its attempt has failed, so only b can take the retry.
    const aStopped = a.offWork(name);
    gate.resolve();
    await aStopped;
    await until(() => ran.length === 1, 'the retry run by b', DEADLINE_MS, 25);
    expect(ran).toEqual([1]);
    await until(async () => (await a.getJobById(name, id!))!.state === 'completed', 'the retry completed');
    await Promise.all([a.close(), b.close()]);
  });

  it('one batch of failures with retries due now and later sends a NOTIFY for each', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'due.fail-batch';
    await q.createQueue(name, { retryLimit: 1 });
    await q.insert(name, [{ data: {} }, { data: {} }]);
    const ids = (await q.fetch(name, { batchSize: 2 })).map((j) => j.id);
    expect(ids).toHaveLength(2);
    const { heard, stop } = await listen(q.config.channel);
    try {
      const target = { queue: name, ids, retryCounts: null, workerId: null, claimCounts: null, stamps: null };
      const errors = ids.map(() => JSON.stringify({ name: 'Error', message: 'failed' }));
      const failures = { errors, permanent: [false, false], retryAfterSeconds: [null, 30] };
      const st = await engineStatements(q, name);
      expect(await engineExec(q).query(st.failJobs, failArgs(target, failures, q.config.channel, null))).toHaveLength(2);
      await until(() => heard.length === 2, 'two NOTIFYs');
      expect(heard).toContain(name);
      expect(dueTimes(heard, name)[0]).toBeGreaterThan(25_000);
      await q.close();
    } finally {
      await stop();
    }
  });

  it('an expired lease reaped into a delayed retry sends a NOTIFY with the delay', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'due.reaped';
    await q.createQueue(name, { retryLimit: 1, retryDelay: 30, expireInSeconds: 1 });
    await q.send(name, {});
    expect(await q.fetch(name)).toHaveLength(1);
    const { heard, stop } = await listen(q.config.channel);
    try {
      const supervisor = f.create({ workers: false, supervise: true, maintenanceIntervalSeconds: 1 });
      await supervisor.start();
      await until(() => dueTimes(heard, name).length === 1, 'a NOTIFY naming the delay of the retry', DEADLINE_MS);
      expect(dueTimes(heard, name)[0]).toBeGreaterThan(25_000);
      expect(dueTimes(heard, name)[0]).toBeLessThanOrEqual(30_000);
      await Promise.all([supervisor.close(), q.close()]);
    } finally {
      await stop();
    }
  });
});

describe('a rate-limit window that opens wakes a loop', () => {
  it('three jobs under one start per second run in three windows, with no poll and no NOTIFY', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'due.window';
    await q.createQueue(name, { rateLimit: { count: 1, perSeconds: 1 } });
    await q.insert(name, [{ data: {} }, { data: {} }, { data: {} }]);
    await q.work(name, { pollingIntervalSeconds: POLL_ONCE_A_MINUTE }, async () => undefined);
    await until(async () => (await stateCounts(f.pool, f.schema, name)).completed === 3, 'three jobs completed', DEADLINE_MS, 25);
    const rows = await f.sql<{ n: number }>(
      `SELECT count(DISTINCT date_trunc('second', started_on))::int AS n FROM $schema.jobs WHERE queue = $1`,
      [name],
    );
    expect(rows[0]!.n).toBe(3);
    await q.close();
  });
});

describe('a resumed job that waits for its start time', () => {
  it('resume() sends a NOTIFY with the time the job becomes due', async () => {
    const q = f.create({ supervise: false, useListenNotify: false });
    const name = 'due.resumed';
    await q.createQueue(name);
    const id = await q.send(name, {}, { startAfter: 30 });
    await q.cancel(name, id!);
    const { heard, stop } = await listen(q.config.channel);
    try {
      await q.resume(name, id!);
      await until(() => heard.length === 1, 'the NOTIFY of the resume');
      expect(dueTimes(heard, name)).toHaveLength(1);
      expect(dueTimes(heard, name)[0]).toBeLessThanOrEqual(30_000);
      await q.close();
    } finally {
      await stop();
    }
  });
});
