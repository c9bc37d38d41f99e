// publish/subscribe: a publish makes one job in every queue subscribed to the event, in one statement, each under
// its own queue's settings and policy; inside the caller's transaction when it gives one, so a rollback sends
// nothing and wakes nobody.
import { drizzle } from 'drizzle-orm/node-postgres';
import { InvalidOptionError, QueueNotFoundError } from '../../lib/core/errors.js';
import { asleepSessions, listen, untilAsleep } from '../helpers/wake.js';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('pubsub');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
/** A fresh event name per test, so one test's subscriptions never reach another's. */
const fresh = (what: string) => `${what}.${++n}`;

/** Makes queue `${event}.${suffix}` with its options for each entry, and subscribes it to `event`. */
async function subscribed(event: string, queues: Record<string, Parameters<typeof q.createQueue>[1]>): Promise<void> {
  for (const [suffix, options] of Object.entries(queues)) {
    await q.createQueue(`${event}.${suffix}`, options);
    await q.subscribe(event, `${event}.${suffix}`);
  }
}

const jobsOf = (queue: string) =>
  f.sql<{ id: string; data: unknown; priority: number; retry_limit: number; policy: string; table: string }>(
    `SELECT id::text, data, priority, retry_limit, policy, tableoid::regclass::text AS table FROM $schema.jobs WHERE queue = $1 ORDER BY id`,
    [queue],
  );

describe('subscribe and unsubscribe', () => {
  it('subscribe is idempotent and says whether the subscription is new; unsubscribe says whether there was one', async () => {
    const event = fresh('idem');
    await q.createQueue(`${event}.q`);
    expect(await q.subscribe(event, `${event}.q`)).toBe(true);
    expect(await q.subscribe(event, `${event}.q`)).toBe(false);
    expect(await f.sql('SELECT queue FROM $schema.subscriptions WHERE event = $1', [event])).toEqual([{ queue: `${event}.q` }]);
    expect(await q.unsubscribe(event, `${event}.q`)).toBe(true);
    expect(await q.unsubscribe(event, `${event}.q`)).toBe(false);
    // a queue that does not exist has no subscription to end: not an error
    expect(await q.unsubscribe(event, 'no.such.queue')).toBe(false);
    expect(await q.publish(event, {})).toEqual([]);
  });

  it('subscribing a queue that does not exist throws QueueNotFoundError and writes nothing', async () => {
    const event = fresh('missing');
    await expect(q.subscribe(event, 'no.such.queue')).rejects.toThrow(QueueNotFoundError);
    await expect(q.subscribe(event, 'no.such.queue')).rejects.toMatchObject({ queue: 'no.such.queue' });
    expect(await f.sql('SELECT 1 FROM $schema.subscriptions WHERE event = $1', [event])).toEqual([]);
  });

  it('a subscribe that meets a deletion of its queue committing meanwhile throws QueueNotFoundError', async () => {
    const event = fresh('race');
    const queue = `${event}.q`;
    await q.createQueue(queue);
    const deleter = await f.pool.connect();
    try {
      // the queue's row stays visible to the subscribe's read, but its foreign key check waits for this lock
      await deleter.query('BEGIN');
      await deleter.query(`DELETE FROM "${f.schema}".queues WHERE name = $1`, [queue]);
      const subscribing = q.subscribe(event, queue).then(
        () => null,
        (err: unknown) => err,
      );
      await until(
        async () =>
          (
            await f.sql(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO%subscriptions%' AND query LIKE $1`,
              [`%"${f.schema}"%`],
            )
          ).length > 0,
        'the subscribe waits for the deleting transaction',
      );
      await deleter.query('COMMIT');
      expect(await subscribing).toBeInstanceOf(QueueNotFoundError);
    } finally {
      deleter.release();
    }
    expect(await f.sql('SELECT 1 FROM $schema.subscriptions WHERE event = $1', [event])).toEqual([]);
  });

  it('bad event and queue names get InvalidOptionError naming the field', async () => {
    for (const call of [
      () => q.subscribe('has space', 'x'),
      () => q.unsubscribe('', 'x'),
      () => q.publish('a'.repeat(101)),
      () => q.publish(42 as unknown as string),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'event' });
    }
    await expect(q.subscribe('ok', 'bad queue')).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'queue' });
    await expect(q.unsubscribe('ok', 'bad queue')).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('deleteQueue removes its subscriptions: a later publish makes nothing for it', async () => {
    const event = fresh('deleted');
    await subscribed(event, { gone: {}, stays: {} });
    await q.deleteQueue(`${event}.gone`);
    expect(await f.sql('SELECT queue FROM $schema.subscriptions WHERE event = $1', [event])).toEqual([{ queue: `${event}.stays` }]);
    const made = await q.publish(event, { after: 'delete' });
    expect(made.map((j) => j.name)).toEqual([`${event}.stays`]);
    // made again with the same name, the queue is not subscribed
    await q.createQueue(`${event}.gone`);
    expect((await q.publish(event, {})).map((j) => j.name)).toEqual([`${event}.stays`]);
  });
});

describe('publish', () => {
  it('makes one job in every subscribed queue, a partitioned one in its own partition, each under its own settings', async () => {
    const event = fresh('fan');
    await subscribed(event, { plain: { retryLimit: 7 }, part: { partition: true, retryLimit: 3 }, short: { policy: 'short' } });
    await q.createQueue(`${event}.unsubscribed`);

    const made = await q.publish(event, { order: 1 }, { priority: 5 });
    expect(made.map((j) => j.name)).toEqual([`${event}.part`, `${event}.plain`, `${event}.short`]);
    for (const { name, id } of made) {
      expect(await q.getJobById(name, id)).toMatchObject({ id, name, data: { order: 1 }, priority: 5, state: 'created' });
    }
    const [plain] = await jobsOf(`${event}.plain`);
    const [part] = await jobsOf(`${event}.part`);
    const [short] = await jobsOf(`${event}.short`);
    expect(plain).toMatchObject({ retry_limit: 7, policy: 'standard', table: expect.stringContaining('jobs_default') });
    expect(part).toMatchObject({ retry_limit: 3, policy: 'standard', table: expect.stringMatching(/jobs_q_[0-9a-f]{16}/) });
    expect(short).toMatchObject({ policy: 'short' });
    expect(await jobsOf(`${event}.unsubscribed`)).toEqual([]);
    // a job option given overrides every queue's default, as in send
    const [again] = await q.publish(event, null, { retryLimit: 1 }).then((jobs) => jobs.filter((j) => j.name === `${event}.plain`));
    expect((await q.getJobById(`${event}.plain`, again!.id))!.retryLimit).toBe(1);
  });

  it("applies each queue's policy and the dedupe key per queue: a queue that refuses is left out of the answer", async () => {
    const event = fresh('policy');
    await subscribed(event, { short: { policy: 'short' }, plain: {} });
    const first = await q.publish(event, {}, { singletonKey: 'k' });
    expect(first.map((j) => j.name)).toEqual([`${event}.plain`, `${event}.short`]);
    // short holds one queued job per key: the second publish makes a job in the plain queue only
    expect((await q.publish(event, {}, { singletonKey: 'k' })).map((j) => j.name)).toEqual([`${event}.plain`]);

    const deduped = fresh('dedupe');
    await subscribed(deduped, { a: {}, b: { partition: true } });
    expect(await q.publish(deduped, {}, { dedupeKey: 'd' })).toHaveLength(2);
    expect(await q.publish(deduped, {}, { dedupeKey: 'd' })).toEqual([]);
    // the key is held per queue: once a's job is gone, a takes a new one and b still refuses
    await q.deleteJob(`${deduped}.a`, (await jobsOf(`${deduped}.a`))[0]!.id);
    expect((await q.publish(deduped, {}, { dedupeKey: 'd' })).map((j) => j.name)).toEqual([`${deduped}.a`]);
  });

  it('makes nothing when no queue subscribes', async () => {
    const before = await f.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs');
    expect(await q.publish(fresh('nobody'), { lost: true })).toEqual([]);
    expect(await f.sql('SELECT count(*)::int AS n FROM $schema.jobs')).toEqual(before);
  });

  it('a key_strict_fifo subscriber without a singletonKey refuses the whole publish; with one, it takes its job', async () => {
    const event = fresh('fifo');
    await subscribed(event, { fifo: { policy: 'key_strict_fifo' }, plain: {} });
    const refused = q.publish(event, {});
    await expect(refused).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(q.publish(event, {})).rejects.toMatchObject({
      field: 'options.singletonKey',
      message: expect.stringContaining(`${event}.fifo`),
    });
    expect(await jobsOf(`${event}.plain`)).toEqual([]);
    expect(await q.publish(event, {}, { singletonKey: 'k' })).toHaveLength(2);
  });

  it('validates its options as send does, and refuses options.data', async () => {
    const event = fresh('opts');
    await subscribed(event, { q: {} });
    await expect(q.publish(event, {}, { priority: 1.5 })).rejects.toMatchObject({ field: 'options.priority' });
    await expect(q.publish(event, {}, { startAfter: 'tomorrow' })).rejects.toMatchObject({ field: 'options.startAfter' });
    await expect(q.publish(event, {}, { retryLimit: -1 })).rejects.toMatchObject({ field: 'options.retryLimit' });
    await expect(q.publish(event, {}, { nope: 1 } as never)).rejects.toMatchObject({ field: 'options.nope' });
    await expect(q.publish(event, {}, { data: { x: 1 } } as never)).rejects.toMatchObject({ field: 'options.data' });
    await expect(q.publish(event, { big: 1n })).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    expect(await jobsOf(`${event}.q`)).toEqual([]);
    // a deferred publish: every job waits until then
    const [job] = await q.publish(event, {}, { startAfter: 3600 });
    const stored = (await q.getJobById(`${event}.q`, job!.id))!;
    expect(stored.startAfter!.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it("inside the caller's transaction: the jobs exist only if it commits, and only a commit wakes the workers", async () => {
    const event = fresh('tx');
    await subscribed(event, { a: {}, b: { partition: true } });
    const heard = await listen(`pgqueue_${f.schema}`);
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      const dropped = await q.publish(event, { tx: 'rolled back' }, { db: client });
      expect(dropped).toHaveLength(2);
      await client.query('ROLLBACK');
      for (const { name, id } of dropped) expect(await q.getJobById(name, id)).toBeNull();

      await client.query('BEGIN');
      const kept = await q.publish(event, { tx: 'committed' }, { db: client });
      // not visible outside the transaction before its commit
      expect(await jobsOf(`${event}.a`)).toEqual([]);
      await client.query('COMMIT');
      for (const { name, id } of kept) expect(await q.getJobById(name, id)).toMatchObject({ data: { tx: 'committed' } });
      await until(() => heard.heard.includes(`${event}.a`) && heard.heard.includes(`${event}.b`), 'a wake-up for each queue');
      // the rolled-back publish woke nobody: one NOTIFY per queue, the committed one's
      expect(heard.heard.filter((p) => p.startsWith(`${event}.`)).sort()).toEqual([`${event}.a`, `${event}.b`]);
    } finally {
      client.release();
      await heard.stop();
    }
    // a Drizzle transaction that throws takes the publish with it
    await expect(
      drizzle(f.pool).transaction(async (tx) => {
        await q.publish(event, { tx: 'drizzle' }, { db: tx });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect((await jobsOf(`${event}.a`)).map((j) => j.data)).toEqual([{ tx: 'committed' }]);
  });

  it('an idle worker of each subscribed queue gets its published job at once, not at its next poll', async () => {
    const event = fresh('wake');
    const got: string[] = [];
    const workers = [];
    // an engine per queue, so that each loop's sleep is seen on a connection of its own
    for (const queue of [`${event}.plain`, `${event}.part`]) {
      await q.createQueue(queue, { partition: queue.endsWith('part') });
      await q.subscribe(event, queue);
      const before = await asleepSessions(f);
      const worker = f.create({ supervise: false });
      workers.push(worker);
      await worker.work(queue, { pollingIntervalSeconds: 60 }, async (job) => void got.push(job.name));
      await untilAsleep(f, before, `the loop of ${queue} claimed nothing and sleeps for a minute`);
    }
    await q.publish(event, {});
    await until(() => got.length === 2, 'both jobs ran well before the 60 s poll', 10_000);
    expect(got.sort()).toEqual([`${event}.part`, `${event}.plain`]);
    await Promise.all(workers.map((w) => w.close()));
  });
});
