// failUnworkedAfterSeconds (seed 002: a job whose queue nothing handles fails, visibly, instead of waiting unseen):
// the maintenance pass fails the ready jobs of a queue no live worker loop has worked for that long, as an attempt.
import { InvalidOptionError } from '../../lib/core/errors.js';
import type { QueueEvents } from '../../lib/core/events.js';
import { deferred, until } from '../helpers/db.js';
import { engineExec, engineStatements, queueFixture } from '../helpers/queue.js';

const f = queueFixture('unworked');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

const unworkedSince = async (queue: string) =>
  (await f.sql<{ t: Date | null }>('SELECT unworked_since AS t FROM $schema.queues WHERE name = $1', [queue]))[0]!.t;

/** Moves the queue's start of being unworked `seconds` back, as if the pass had found it so that long ago. */
const backdate = (queue: string, seconds: number) =>
  f.sql(`UPDATE $schema.queues SET unworked_since = unworked_since - $2 * interval '1 second' WHERE name = $1`, [queue, seconds]);

/** A forced maintenance pass: it runs once a supervising instance's pass under way lets go of the lock. */
const pass = async (q: ReturnType<typeof f.create>) => {
  const result = await q.maintain({ force: true });
  expect(result.ran).toBe(true);
  return result;
};

/** A forced maintenance pass; what it failed of queue `queue` (the queues of earlier tests, left unworked, fail too). */
const unworkedOf = async (q: ReturnType<typeof f.create>, queue: string) => (await pass(q)).unworked.filter((u) => u.queue === queue);

describe('failUnworkedAfterSeconds', () => {
  it('fails the ready jobs of a queue no worker has worked for that long: retried, then failed for good, dead-lettered', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('u.dlq');
    await q.createQueue('u.none', { failUnworkedAfterSeconds: 300, retryLimit: 1, retryDelay: 0, deadLetter: 'u.dlq' });
    const id = (await q.send('u.none', { n: 1 }))!;
    const deferredId = (await q.send('u.none', { n: 2 }, { startAfter: 3600 }))!;
    const failed: QueueEvents['failed'][0][] = [];
    q.on('failed', (e) => failed.push(e));
    // the first pass finds the queue unworked and starts counting; nothing fails before its setting has passed
    expect(await unworkedOf(q, 'u.none')).toEqual([]);
    expect(await unworkedSince('u.none')).toBeInstanceOf(Date);
    await backdate('u.none', 200);
    expect(await unworkedOf(q, 'u.none')).toEqual([]);
    expect((await q.getJobById('u.none', id))!.state).toBe('created');
    await backdate('u.none', 100);
    expect(await unworkedOf(q, 'u.none')).toEqual([{ queue: 'u.none', failed: 1 }]);
    const retried = (await q.getJobById('u.none', id))!;
    expect(retried).toMatchObject({ state: 'retry', retryCount: 1 });
    expect(retried.lastError).toMatchObject({ name: 'UnworkedQueueError', queue: 'u.none', attempt: 1 });
    expect(retried.lastError!.message).toMatch(
      /^queue "u\.none" has had no live worker for 30\d s \(its failUnworkedAfterSeconds is 300\): no worker loop of any instance takes its jobs$/,
    );
    expect(failed).toMatchObject([{ queue: 'u.none', id, willRetry: true, error: { name: 'UnworkedQueueError' } }]);
    // a job not yet due is no job a worker is missing for
    expect((await q.getJobById('u.none', deferredId))!).toMatchObject({ state: 'created', retryCount: 0 });
    expect(f.logger.lines.some((l) => l.level === 'warn' && l.message.includes('1 ready job(s) failed as an attempt (1 to retry'))).toBe(
      true,
    );
    // the next pass: its retries spent, it fails for good and goes to the dead-letter queue
    expect(await unworkedOf(q, 'u.none')).toEqual([{ queue: 'u.none', failed: 1 }]);
    expect((await q.getJobById('u.none', id))!).toMatchObject({ state: 'failed', retryCount: 1 });
    const copies = (await q.findJobs('u.dlq')).jobs;
    expect(copies.map((c) => c.sourceId)).toEqual([id]);
    expect(failed.at(-1)).toMatchObject({ id, willRetry: false, deadLetter: 'u.dlq' });
  });

  it('leaves a queue alone while a live worker loop works it, and while it is paused; counts again from when it is not', async () => {
    const worker = f.create();
    const q = f.create({ supervise: false });
    await q.createQueue('u.busy', { failUnworkedAfterSeconds: 60 });
    const gate = deferred();
    const started: string[] = [];
    await worker.work('u.busy', { concurrency: 1, pollingIntervalSeconds: 0.1 }, async (job) => {
      started.push(job.id);
      await gate.promise;
    });
    const [first, waiting] = await q.insert('u.busy', [{ data: 1 }, { data: 2 }]);
    await until(() => started.length === 1, 'the first job running');
    await until(async () => (await q.getWorkers()).some((w) => w.loops.some((l) => l.queue === 'u.busy')), 'the loop registered');
    // a job that waits for a busy loop is not unworked, however long
    for (let i = 0; i < 2; i++) {
      await f.sql(`UPDATE $schema.queues SET unworked_since = now() - interval '1 hour' WHERE name = 'u.busy'`);
      expect(await unworkedOf(q, 'u.busy')).toEqual([]);
      expect(await unworkedSince('u.busy')).toBeNull();
    }
    expect((await q.getJobById('u.busy', waiting!))!.state).toBe('created');
    gate.resolve();
    await until(async () => (await q.getJobById('u.busy', waiting!))!.state === 'completed', 'both worked');
    expect((await q.getJobById('u.busy', first!))!.state).toBe('completed');
    // paused: its jobs wait by an operator's choice
    await worker.offWork('u.busy');
    await q.pauseQueue('u.busy');
    const later = (await q.send('u.busy', {}))!;
    await pass(q);
    expect(await unworkedSince('u.busy')).toBeNull();
    await q.resumeQueue('u.busy');
    await until(async () => !(await q.getWorkers()).some((w) => w.loops.some((l) => l.queue === 'u.busy')), 'the loop gone');
    await pass(q);
    expect(await unworkedSince('u.busy')).toBeInstanceOf(Date);
    await backdate('u.busy', 61);
    expect(await unworkedOf(q, 'u.busy')).toEqual([{ queue: 'u.busy', failed: 1 }]);
    expect((await q.getJobById('u.busy', later))!.state).toBe('retry');
  });

  it('fails a large backlog in batches within a pass, each job once, and a changed setting counts from the next pass', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('u.many', { failUnworkedAfterSeconds: 30, retryLimit: 5, retryDelay: 0 });
    await q.insert(
      'u.many',
      Array.from({ length: 2500 }, (_, i) => ({ data: i })),
    );
    await pass(q);
    await backdate('u.many', 31);
    expect(await unworkedOf(q, 'u.many')).toEqual([{ queue: 'u.many', failed: 2500 }]);
    const [counts] = await f.sql<{ retried: number; once: number }>(
      `SELECT count(*) FILTER (WHERE state = 'retry')::int AS retried, count(*) FILTER (WHERE retry_count = 1)::int AS once
       FROM $schema.jobs WHERE queue = 'u.many'`,
    );
    expect(counts).toEqual({ retried: 2500, once: 2500 });
    await q.updateQueue('u.many', { failUnworkedAfterSeconds: 3600 });
    expect(await unworkedSince('u.many')).toBeNull();
    expect((await q.getQueue('u.many'))!.failUnworkedAfterSeconds).toBe(3600);
    await q.updateQueue('u.many', { failUnworkedAfterSeconds: null });
    expect(await unworkedOf(q, 'u.many')).toEqual([]);
    expect(await unworkedSince('u.many')).toBeNull();
  });

  it('a batch checks the queue again: paused since the pass found it unworked, nothing fails', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('u.recheck', { failUnworkedAfterSeconds: 30 });
    const id = (await q.send('u.recheck', {}))!;
    await pass(q);
    await backdate('u.recheck', 31);
    const st = await engineStatements(q, 'u.recheck');
    const exec = engineExec(q);
    const due = await exec.query<{ name: string; pass_began: Date }>(st.watchUnworkedQueues);
    const mine = due.find((d) => d.name === 'u.recheck')!;
    expect(mine).toBeDefined();
    await q.pauseQueue('u.recheck');
    const failed = await exec.query(st.failUnworkedJobs, ['u.recheck', 100, q.config.channel, 'no worker', mine.pass_began]);
    expect(failed).toEqual([]);
    expect((await q.getJobById('u.recheck', id))!.state).toBe('created');
  });

  it('is refused outside 1 to its range and on key_strict_fifo queues, naming the option', async () => {
    const q = f.create({ supervise: false });
    for (const value of [0, -5, 1.5, '60']) {
      const err = await q.createQueue('u.bad', { failUnworkedAfterSeconds: value as number }).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err.message).toContain('options.failUnworkedAfterSeconds');
    }
    const fifo = await q.createQueue('u.fifo', { policy: 'key_strict_fifo', failUnworkedAfterSeconds: 60 }).catch((e) => e);
    expect(fifo).toBeInstanceOf(InvalidOptionError);
    expect(fifo.message).toContain('on a key_strict_fifo queue (a failed job holds its key)');
    expect(await q.getQueue('u.fifo')).toBeNull();
    await q.createQueue('u.fifo', { policy: 'key_strict_fifo' });
    const later = await q.updateQueue('u.fifo', { failUnworkedAfterSeconds: 60 }).catch((e) => e);
    expect(later).toBeInstanceOf(InvalidOptionError);
    expect((await q.getQueue('u.fifo'))!.failUnworkedAfterSeconds).toBeNull();
  });
});
