// The dashboard's job view against a real database: each reason a waiting job gives for not running is made to
// hold, and the view is read as the dashboard reads it (readJobView, one READ ONLY transaction).
import { readJobView } from '../../lib/core/dashboard/job-view.js';
import { runtimeOf, type PgQueue } from '../../lib/core/pg-queue.js';
import type { Job } from '../../lib/core/types.js';
import { deferred, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('jobview');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

async function viewOf(q: PgQueue, id: string) {
  const rt = runtimeOf(q);
  return readJobView({ statements: rt.statements, connect: () => rt.connect(), prepared: rt.namesStatements }, id);
}

async function codesOf(q: PgQueue, id: string): Promise<string[]> {
  return (await viewOf(q, id))!.reasons.map((r) => r.code);
}

/** A worker of `name` whose handler holds every job until `release` resolves; `held` resolves at the first. */
async function holdingWorker(q: PgQueue, name: string, options: Record<string, unknown> = {}) {
  const release = deferred();
  const held = deferred();
  await q.work(name, { pollingIntervalSeconds: 0.1, ...options }, async function holdJob(_job: Job) {
    held.resolve();
    await release.promise;
  });
  return { release, held };
}

describe('the job view', () => {
  it('an id that names no job, or is no id, gives null; a job of any queue is found by its id alone', async () => {
    const q = f.create({ supervise: false });
    await q.start();
    await q.createQueue('jv.a');
    await q.createQueue('jv.b');
    await q.send('jv.a', { n: 1 });
    const id = (await q.send('jv.b', { n: 2 }, { priority: 3, singletonKey: 'k' }))!;
    expect(await viewOf(q, '999999999')).toBeNull();
    expect(await viewOf(q, 'x1')).toBeNull();
    const view = (await viewOf(q, id))!;
    expect(view.job).toMatchObject({ id, name: 'jv.b', data: { n: 2 }, priority: 3, singletonKey: 'k', state: 'created' });
    expect(view.policy).toBe('standard');
    expect(view.now).toBeGreaterThan(0);
    // no worker works jv.b
    expect(view.reasons.map((r) => r.code)).toEqual(['no_worker']);
  });

  it('deferred until its start, backing off after a failure, waiting for the jobs it depends on', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('jv.wait', { retryLimit: 3, retryDelay: 3600 });
    const later = new Date(Date.now() + 3_600_000);
    const deferredId = (await q.sendAfter('jv.wait', {}, {}, later))!;
    const view = (await viewOf(q, deferredId))!;
    expect(view.reasons[0]).toMatchObject({ code: 'deferred' });
    expect(Math.abs(view.reasons[0]!.until! - later.getTime())).toBeLessThan(1000);

    const failing = (await q.send('jv.wait', { fail: true }))!;
    const flow = await q.flow([
      { name: 'jv.wait', ref: 'parent', data: { fail: false }, startAfter: later },
      { name: 'jv.wait', ref: 'child', dependsOn: ['parent'] },
    ]);
    await q.work('jv.wait', { pollingIntervalSeconds: 0.1 }, async (job: Job<{ fail?: boolean }>) => {
      if (job.data.fail) throw new Error('smtp down');
    });
    await until(async () => (await q.getJobById('jv.wait', failing))?.state === 'retry', 'the job fails into retry');
    const backing = (await viewOf(q, failing))!;
    expect(backing.reasons.map((r) => r.code)).toEqual(['backing_off']);
    expect(backing.reasons[0]!.text).toContain('attempt 1 failed');
    expect(backing.job.lastError).toMatchObject({ message: 'smtp down', attempt: 1 });
    expect(await codesOf(q, flow.child!)).toEqual(['waiting_for_parents']);
    expect((await viewOf(q, flow.child!))!.job.startAfter).toBeNull();
  });

  it('paused queue; no live worker; workers that hold the queue stopped', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('jv.pause');
    const id = (await q.send('jv.pause', {}))!;
    await q.pauseQueue('jv.pause');
    expect(await codesOf(q, id)).toEqual(['paused', 'no_worker']);
    await q.resumeQueue('jv.pause');
    await q.work('jv.pause', { pollingIntervalSeconds: 0.1 }, async () => undefined);
    await q.stopWorking('jv.pause');
    // the registry shows the stop at the instance's next refresh
    await until(async () => (await codesOf(q, id)).includes('workers_stopped'), 'the stop shows');
    expect(await codesOf(q, id)).toEqual(['workers_stopped']);
  });

  it('key_strict_fifo: a key blocked by a failed job, and a job behind one of its key that runs or was sent first', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('jv.fifo', { policy: 'key_strict_fifo', retryLimit: 0 });
    const first = (await q.send('jv.fifo', { fail: true }, { singletonKey: 'acct-1' }))!;
    const second = (await q.send('jv.fifo', {}, { singletonKey: 'acct-1' }))!;
    const third = (await q.send('jv.fifo', {}, { singletonKey: 'acct-1' }))!;
    // before any worker: the second waits behind the first, sent before it
    const behind = (await viewOf(q, second))!;
    expect(behind.reasons.find((r) => r.code === 'key_earlier')).toMatchObject({ jobId: first });
    await q.work('jv.fifo', { pollingIntervalSeconds: 0.1 }, async (job: Job<{ fail?: boolean }>) => {
      if (job.data.fail) throw new Error('no');
    });
    await until(async () => (await q.getJobById('jv.fifo', first))?.state === 'failed', 'the head fails for good');
    const blocked = (await viewOf(q, third))!;
    expect(blocked.reasons.map((r) => r.code)).toEqual(['key_blocked']);
    expect(blocked.reasons[0]).toMatchObject({ jobId: first });
    expect(blocked.reasons[0]!.text).toContain('"acct-1"');
  });

  it("singleton: a job of its key runs; a queue at its concurrency limit; a group at its workers' groupConcurrency", async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('jv.single', { policy: 'singleton' });
    const one = await holdingWorker(q, 'jv.single', { concurrency: 2 });
    const running = (await q.send('jv.single', {}, { singletonKey: 'report' }))!;
    await one.held.promise;
    const waiting = (await q.send('jv.single', {}, { singletonKey: 'report' }))!;
    expect((await viewOf(q, waiting))!.reasons).toEqual([expect.objectContaining({ code: 'key_busy', jobId: running })]);
    one.release.resolve();

    await q.createQueue('jv.limit', { concurrencyLimit: 1 });
    const two = await holdingWorker(q, 'jv.limit', { concurrency: 3 });
    await q.send('jv.limit', {});
    await two.held.promise;
    const over = (await q.send('jv.limit', {}))!;
    const limited = (await viewOf(q, over))!;
    expect(limited.reasons.map((r) => r.code)).toEqual(['concurrency_limit']);
    expect(limited.reasons[0]!.text).toContain('1 running, limit 1');
    two.release.resolve();

    await q.createQueue('jv.group');
    const three = await holdingWorker(q, 'jv.group', { concurrency: 3, groupConcurrency: { pro: 2, default: 1 } });
    await q.send('jv.group', {}, { group: { id: 'tenant-a' } });
    await three.held.promise;
    const grouped = (await q.send('jv.group', {}, { group: { id: 'tenant-a' } }))!;
    // the registry lists the loop's group limits at its next refresh
    await until(async () => (await codesOf(q, grouped)).includes('group_limit'), 'the group limit shows');
    expect((await viewOf(q, grouped))!.group).toEqual({ id: 'tenant-a', tier: null });
    three.release.resolve();
  });

  it('a queue at its rate limit says when the next window opens', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('jv.rate', { rateLimit: { count: 1, perSeconds: 3600 } });
    await q.send('jv.rate', {});
    const done = deferred();
    await q.work('jv.rate', { pollingIntervalSeconds: 0.1 }, async () => done.resolve());
    await done.promise;
    const over = (await q.send('jv.rate', {}))!;
    const view = (await viewOf(q, over))!;
    expect(view.reasons.map((r) => r.code)).toEqual(['rate_limit']);
    expect(view.reasons[0]!.until! % 3_600_000).toBe(0);
    expect(view.reasons[0]!.until!).toBeGreaterThan(view.now);
  });

  it('a ready job that nothing holds back says how many ready jobs are ahead of it; a running job gives no reason', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('jv.ready');
    const w = await holdingWorker(q, 'jv.ready', { concurrency: 1 });
    try {
      const busy = (await q.send('jv.ready', { n: 0 }))!;
      await w.held.promise;
      const a = (await q.send('jv.ready', { n: 1 }))!;
      const b = (await q.send('jv.ready', { n: 2 }))!;
      const urgent = (await q.send('jv.ready', { n: 3 }, { priority: 5 }))!;
      expect((await viewOf(q, urgent))!.reasons).toEqual([
        expect.objectContaining({ code: 'ready', text: expect.stringContaining('no ready job of its queue is ahead of it') }),
      ]);
      // the urgent job (a higher priority) is ahead of a; it and a (sent earlier) are ahead of b
      expect((await viewOf(q, a))!.reasons[0]!.text).toContain('1 ready job of its queue is ahead of it');
      expect((await viewOf(q, b))!.reasons[0]!.text).toContain('2 ready jobs of its queue are ahead of it');
      // a deferred job of a higher priority is not ahead
      await q.sendAfter('jv.ready', { n: 4 }, { priority: 9 }, new Date(Date.now() + 3_600_000));
      expect((await viewOf(q, a))!.reasons[0]!.text).toContain('1 ready job of its queue is ahead of it');
      const active = (await viewOf(q, busy))!;
      expect(active.job.state).toBe('active');
      expect(active.reasons).toEqual([]);
    } finally {
      w.release.resolve();
    }
  });
});
