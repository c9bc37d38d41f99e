import { jest } from '@jest/globals';
import type { QueueEvents, QueueWarning } from '../../lib/core/events.js';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('events');
afterAll(() => f.cleanup());

describe('job lifecycle events', () => {
  it('a worker emits completed, failed (with willRetry) and retrying for the jobs it settles', async () => {
    const q = f.create({ supervise: false, logJobFailures: false });
    await q.createQueue('ev.work', { retryLimit: 1 });
    const seen: { name: string; payload: Record<string, unknown> }[] = [];
    for (const name of ['completed', 'failed', 'retrying'] as const)
      q.on(name, (payload: QueueEvents[typeof name][0]) => seen.push({ name, payload: { ...payload } }));
    const ok = (await q.send('ev.work', { fail: false }))!;
    const bad = (await q.send('ev.work', { fail: true }))!;
    // taken before the UPDATE whose now() the wait starts from, so `elapsed` bounds the time after it
    const began = Date.now();
    // due 3 s ago (created 5 s ago): its wait is counted from when it became due
    await f.sql(`UPDATE $schema.jobs SET created_on = now() - interval '5 s', start_after = now() - interval '3 s' WHERE id = $1`, [ok]);
    await q.work<{ fail: boolean }>('ev.work', { pollingIntervalSeconds: 0.2 }, (job) => {
      if (job.data.fail) throw Object.assign(new Error('nope'), { code: 'E_NOPE' });
      return 'done';
    });
    await until(() => seen.filter((e) => e.name === 'failed').length === 2, 'both attempts of the bad job failed');
    const elapsed = (Date.now() - began) / 1000;
    await q.offWork('ev.work');
    const completed = seen.filter((e) => e.name === 'completed');
    expect(completed).toEqual([
      { name: 'completed', payload: { queue: 'ev.work', id: ok, waitSeconds: expect.any(Number), runSeconds: expect.any(Number) } },
    ]);
    const { waitSeconds, runSeconds } = completed[0]!.payload as { waitSeconds: number; runSeconds: number };
    expect(waitSeconds).toBeGreaterThanOrEqual(3);
    expect(waitSeconds).toBeLessThan(3 + elapsed);
    expect(runSeconds).toBeGreaterThanOrEqual(0);
    expect(runSeconds).toBeLessThanOrEqual(elapsed);
    const failed = seen.filter((e) => e.name === 'failed').map((e) => e.payload);
    expect(failed).toEqual([
      expect.objectContaining({ queue: 'ev.work', id: bad, willRetry: true, retryInSeconds: 0, deadLetter: null }),
      expect.objectContaining({ queue: 'ev.work', id: bad, willRetry: false, retryInSeconds: null }),
    ]);
    expect(failed[0]!.error).toMatchObject({ name: 'Error', message: 'nope', code: 'E_NOPE' });
    expect(seen.filter((e) => e.name === 'retrying').map((e) => e.payload)).toEqual([
      expect.objectContaining({ queue: 'ev.work', id: bad, retryInSeconds: 0 }),
    ]);
  });

  it('the instance whose maintenance expired a job emits expired; reaped attempts emit failed and retrying', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('ev.maint', { retryLimit: 1 });
    const expiredIds: string[] = [];
    const retrying: string[] = [];
    q.on('expired', (e) => expiredIds.push(e.id));
    q.on('retrying', (e) => retrying.push(e.id));
    const held = (await q.send('ev.maint', {}))!;
    await q.fetch('ev.maint');
    const waiting = (await q.send('ev.maint', {}))!;
    await f.sql(`UPDATE $schema.jobs SET keep_until = now() - interval '1 second' WHERE id = $1`, [waiting]);
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [held]);
    await q.maintain({ force: true });
    expect(expiredIds).toEqual([waiting]);
    expect(retrying).toEqual([held]);
  });

  it("a transactional handler's completion emits completed too", async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('ev.tx');
    const completed: string[] = [];
    q.on('completed', (e) => completed.push(e.id));
    const id = (await q.send('ev.tx', {}))!;
    await q.work('ev.tx', { transactional: true, pollingIntervalSeconds: 0.2 }, () => 'ok');
    await until(() => completed.length === 1, 'the completed event');
    expect(completed).toEqual([id]);
    await q.offWork('ev.tx');
  });

  it('a listener that throws is reported as an error and changes nothing', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('ev.throw');
    const errors: string[] = [];
    q.on('error', (err) => errors.push(err.context));
    q.on('completed', () => {
      throw new Error('listener bug');
    });
    const id = (await q.send('ev.throw', {}))!;
    await q.work('ev.throw', { pollingIntervalSeconds: 0.2 }, () => 'ok');
    await until(async () => (await q.getJobById('ev.throw', id))!.state === 'completed', 'completed');
    await until(() => errors.length > 0, 'the listener error reported');
    expect(errors[0]).toBe('a "completed" listener');
    await q.offWork('ev.throw');
  });
});

describe('warnings', () => {
  it('queue-size: once when the waiting jobs reach warningQueueSize, again only after they went below', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('ev.size', { warningQueueSize: 2 });
    const warnings: QueueWarning[] = [];
    q.on('warning', (w) => warnings.push(w));
    const sizes = () => warnings.filter((w) => w.type === 'queue-size' && w.queue === 'ev.size');
    await q.insert('ev.size', [{}, {}]);
    await q.monitor({ force: true });
    expect(sizes()).toEqual([
      {
        type: 'queue-size',
        queue: 'ev.size',
        queuedCount: 2,
        warningQueueSize: 2,
        message: 'queue "ev.size" has 2 waiting jobs, at or over its warningQueueSize of 2',
      },
    ]);
    await q.send('ev.size', {});
    await q.monitor({ force: true });
    expect(sizes()).toHaveLength(1);
    await q.purgeQueue('ev.size');
    await q.monitor({ force: true });
    await q.insert('ev.size', [{}, {}]);
    await q.monitor({ force: true });
    expect(sizes()).toHaveLength(2);
  });

  it("queue-size: the module's warningQueueSize for the queues that set none; a queue's own wins", async () => {
    const q = f.create({ supervise: false, warningQueueSize: 3 });
    await q.createQueue('ev.default');
    await q.createQueue('ev.own', { warningQueueSize: 5 });
    const warnings: QueueWarning[] = [];
    q.on('warning', (w) => warnings.push(w));
    const sizes = () => warnings.filter((w) => w.type === 'queue-size' && (w.queue === 'ev.default' || w.queue === 'ev.own'));
    await q.insert('ev.default', [{}, {}]);
    await q.insert('ev.own', [{}, {}, {}, {}]);
    await q.monitor({ force: true });
    expect(sizes()).toEqual([]);
    await q.send('ev.default', {});
    await q.monitor({ force: true });
    expect(sizes()).toEqual([
      {
        type: 'queue-size',
        queue: 'ev.default',
        queuedCount: 3,
        warningQueueSize: 3,
        message: 'queue "ev.default" has 3 waiting jobs, at or over the warningQueueSize of queues that set none of 3',
      },
    ]);
    // four waiting jobs were over the module's 3 and under the queue's own 5: the fifth reaches it
    await q.send('ev.own', {});
    await q.monitor({ force: true });
    expect(sizes().map((w) => (w.type === 'queue-size' ? w.queue : null))).toEqual(['ev.default', 'ev.own']);
    expect(sizes()[1]).toMatchObject({ queuedCount: 5, warningQueueSize: 5 });
  });

  it('slow-claim: a claim slower than warningSlowClaimMs, reported once', async () => {
    const q = f.create({ supervise: false, warningSlowClaimMs: 1 });
    await q.createQueue('ev.slow', { concurrencyLimit: 5 });
    const warnings: QueueWarning[] = [];
    q.on('warning', (w) => warnings.push(w));
    // a limited queue's claims take its lock: held here, the worker's claim waits for it
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(1885824375, hashtext($1 || '.' || $2))`, [f.schema, 'ev.slow']);
      await q.work('ev.slow', {}, () => undefined);
      await until(
        async () =>
          // this queue's claim lock only: other tests' claims may wait for theirs meanwhile
          (
            await f.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE l.locktype = 'advisory' AND NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND l.classid = 1885824375 AND l.objid = hashtext($1 || '.' || $2)::oid AND l.objsubid = 2
                 AND now() - a.query_start > interval '50 milliseconds'`,
              [f.schema, 'ev.slow'],
            )
          )[0]!.n > 0,
        'the claim has waited 50 ms',
      );
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    const slow = await until(() => warnings.find((w) => w.type === 'slow-claim'), 'the slow claim reported');
    expect(slow).toMatchObject({ type: 'slow-claim', queue: 'ev.slow', thresholdMs: 1 });
    expect((slow as { milliseconds: number }).milliseconds).toBeGreaterThan(50);
    await q.offWork('ev.slow');
  });

  it('a bare warning of the engine is typed `engine`', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('ev.reap', { retryLimit: 1 });
    const id = (await q.send('ev.reap', {}))!;
    await q.fetch('ev.reap');
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    const warnings: QueueWarning[] = [];
    q.on('warning', (w) => warnings.push(w));
    await q.maintain({ force: true });
    expect(warnings).toContainEqual({ type: 'engine', message: expect.stringContaining('lease or heartbeat ran out') });
  });
});

describe('clock-skew', () => {
  it('is reported when this process runs 10 s ahead of the database', async () => {
    const realNow = Date.now.bind(Date);
    const ahead = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 10_000);
    try {
      const q = f.create({ supervise: false });
      const warnings: QueueWarning[] = [];
      q.on('warning', (w) => warnings.push(w));
      await q.start();
      const skew = await until(() => warnings.find((w) => w.type === 'clock-skew'), 'the skew reported');
      expect(skew.message).toMatch(/^this process's clock is \d+ ms ahead of the database's$/);
      expect((skew as { skewMs: number }).skewMs).toBeLessThan(-9_000);
    } finally {
      ahead.mockRestore();
    }
  });
});
