// nestjs-pgqueue/testing as an app's tests use it: drain() runs what is due through the app's own loops, expectSent()
// asserts what was sent, runJob() runs one job through the real pipeline (schema, guards, settle). The app holds its
// loops (startWorkers: false), so that jobs run only when a test says so; a plain PgQueue with loops that run on their
// own checks drain there. The test database part is in testing-database.e2e.spec.ts.
import { Injectable, Module, UseGuards, type CanActivate, type ExecutionContext, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  defineJob,
  InvalidOptionError,
  InvalidPayloadError,
  QueueHandler,
  QueueModule,
  QueueNotFoundError,
  QueueService,
  type Job,
} from 'nestjs-pgqueue';
import { drain, expectSent, JobNotSentError, JobsFailedError, NoWorkerError, runJob, WaitTimeoutError } from 'nestjs-pgqueue/testing';
import { dropSchema, recordingLogger, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_testing');
const pool = testPool(2);

type Mail = { to: string; fail?: boolean };
const Invoice = defineJob('t.invoice', {
  schema: {
    parse(d: unknown): { amount: number } {
      const amount = (d as { amount?: unknown } | null)?.amount;
      if (typeof amount !== 'number' || amount <= 0) throw new Error('amount: expected a positive number');
      return { amount };
    },
  },
});

/** Lets a job through when its data says so: the guard of a method, as an app's auth guard. */
class OnlyVip implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.getArgByIndex<Job<{ vip?: boolean }>>(0).data.vip === true;
  }
}

@Injectable()
class Handlers {
  readonly delivered: string[] = [];
  readonly attempts = new Map<string, number>();
  readonly vipRuns: string[] = [];

  @QueueHandler('t.mail', { retryLimit: 0, concurrency: 4 })
  mail(job: Job<Mail>) {
    this.attempts.set(job.id, (this.attempts.get(job.id) ?? 0) + 1);
    if (job.data.fail) throw new Error(`no mailbox for ${job.data.to}`);
    this.delivered.push(job.data.to);
    return { delivered: job.data.to };
  }

  @QueueHandler('t.vip')
  @UseGuards(OnlyVip)
  vip(job: Job<{ vip?: boolean }>) {
    this.vipRuns.push(job.id);
    return { welcomed: true };
  }

  constructor(private readonly queue: QueueService) {}

  @QueueHandler('t.removed', { removeOnComplete: true })
  removed() {
    return 'gone with the row';
  }

  /** Cancels its own job: the job ends cancelled, and what the method returns is discarded. */
  @QueueHandler('t.cancelled')
  async cancelled(job: Job) {
    await this.queue.cancel('t.cancelled', job.id);
    return 'discarded';
  }

  @QueueHandler('t.short', { policy: 'short' })
  short() {
    return 'ran';
  }

  @QueueHandler(Invoice)
  charge(job: Job<{ amount: number }>) {
    return { charged: job.data.amount };
  }
}

@Module({
  imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false, startWorkers: false, logger: recordingLogger() })],
  providers: [Handlers],
})
class App {}

let app: INestApplicationContext;
let queue: QueueService;
let handlers: Handlers;

beforeAll(async () => {
  app = await NestFactory.createApplicationContext(App, { logger: false });
  queue = app.get(QueueService);
  handlers = app.get(Handlers);
  await queue.createQueue('t.unworked');
});

afterAll(async () => {
  await app.close();
  await dropSchema(pool, schema);
  await pool.end();
});

const stateOf = async (name: string, id: string) => (await queue.getJobById(name, id))?.state;

describe('drain()', () => {
  it('runs every job that is due through the app’s handler, lists each one, and holds the loops again', async () => {
    const ids = await Promise.all(['a', 'b', 'c', 'd', 'e'].map(async (to) => (await queue.send('t.mail', { to }))!));
    // the loops are held: nothing runs until the drain
    for (const id of ids) expect(await stateOf('t.mail', id)).toBe('created');
    const result = await drain(queue, 't.mail');
    expect([...result.completed].sort()).toEqual([...ids].sort());
    expect(result).toMatchObject({ queue: 't.mail', failed: [], retrying: [], deferred: 0 });
    expect([...handlers.delivered].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const id of ids) expect(await stateOf('t.mail', id)).toBe('completed');
    expect(queue.workerCount).toBe(0);
  });

  it('returns a job that failed for good in `failed`, and throws JobsFailedError with throwOnFailure', async () => {
    const ok = (await queue.send('t.mail', { to: 'ok' }))!;
    const bad = (await queue.send('t.mail', { to: 'nobody', fail: true }))!;
    const result = await drain(queue, 't.mail');
    expect(result.completed).toEqual([ok]);
    expect(result.failed).toEqual([{ id: bad, error: expect.objectContaining({ name: 'Error', message: 'no mailbox for nobody' }) }]);
    expect(await stateOf('t.mail', bad)).toBe('failed');

    const again = (await queue.send('t.mail', { to: 'ghost', fail: true }))!;
    const thrown = await drain(queue, 't.mail', { throwOnFailure: true }).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(JobsFailedError);
    expect((thrown as JobsFailedError).code).toBe('JOBS_FAILED');
    expect((thrown as JobsFailedError).message).toBe(`drain("t.mail"): 1 job(s) failed for good: job ${again}: no mailbox for ghost`);
    expect((thrown as JobsFailedError).result.failed.map((f) => f.id)).toEqual([again]);
    // a drain that throws holds the loops again in the background, its error first
    await until(() => queue.workerCount === 0, 'the loops held again');
  });

  it('leaves a job deferred to later alone, and counts it', async () => {
    const later = (await queue.send('t.mail', { to: 'later' }, { startAfter: 3600 }))!;
    const now = (await queue.send('t.mail', { to: 'now' }))!;
    const result = await drain(queue, 't.mail');
    expect(result.completed).toEqual([now]);
    expect(result.deferred).toBe(1);
    expect(await stateOf('t.mail', later)).toBe('created');
    expect(handlers.delivered).not.toContain('later');
    await queue.deleteJob('t.mail', later);
  });

  it('runs a retry that is due at once in the same drain, and reports one that waits for its delay as retrying', async () => {
    const soon = (await queue.send('t.mail', { to: 'soon', fail: true }, { retryLimit: 2 }))!;
    const later = (await queue.send('t.mail', { to: 'later', fail: true }, { retryLimit: 1, retryDelay: 3600 }))!;
    const result = await drain(queue, 't.mail');
    // three attempts of the first job: the first and its two retries, each due at once
    expect(handlers.attempts.get(soon)).toBe(3);
    expect(result.failed.map((f) => f.id)).toEqual([soon]);
    expect(handlers.attempts.get(later)).toBe(1);
    expect(result.retrying).toEqual([
      { id: later, error: expect.objectContaining({ message: 'no mailbox for later' }), retryInSeconds: 3600 },
    ]);
    expect(result.deferred).toBe(1);
    expect(await stateOf('t.mail', later)).toBe('retry');
    await queue.deleteJob('t.mail', later);
  });

  it('shares held loops between calls at once, and holds them again when the last one ends', async () => {
    const ids = await Promise.all(['x', 'y', 'z'].map(async (to) => (await queue.send('t.mail', { to }))!));
    const [a, b, c] = await Promise.all([drain(queue, 't.mail'), drain(queue, 't.mail'), runJob(queue, 't.mail', { to: 'w' })]);
    expect(c.state).toBe('completed');
    expect(new Set([...a.completed, ...b.completed])).toEqual(new Set([...ids, c.job!.id]));
    for (const id of ids) expect(await stateOf('t.mail', id)).toBe('completed');
    expect(queue.workerCount).toBe(0);
  });

  it('throws NoWorkerError for a queue no loop of this process works, or one paused, and refuses a bad timeout', async () => {
    const thrown = await drain(queue, 't.unworked').catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(NoWorkerError);
    expect((thrown as NoWorkerError).code).toBe('NO_WORKER');
    expect((thrown as NoWorkerError).message).toBe(
      'drain("t.unworked"): no worker loop of this process will run the queue\'s jobs: none handles it here, or the app was not initialised (its loops start at bootstrap) (drain runs jobs through this process\'s own loops, those of @QueueHandler or work())',
    );
    await queue.pauseQueue('t.mail');
    try {
      await expect(drain(queue, 't.mail')).rejects.toThrow(/the queue is paused; resumeQueue\(\) lets the loops claim again/);
    } finally {
      await queue.resumeQueue('t.mail');
    }
    // a drain that throws holds the loops again without waiting for their stop (lib/testing/watch.ts, release)
    await until(() => queue.workerCount === 0, 'the loop the failed drain started held again');
    await expect(drain(queue, 't.mail', { timeoutMs: 0 })).rejects.toThrow('options.timeoutMs must be an integer >= 1, got 0');
    await expect(drain(queue, 't.mail', { wait: 1 } as never)).rejects.toThrow('options.wait must be one of the known options');
  });
});

describe('expectSent()', () => {
  it('returns the jobs whose data matches, by shape or by predicate', async () => {
    const since = new Date();
    const id = (await queue.send('t.unworked', { to: 'ada@example.com', plan: 'pro' }))!;
    await queue.send('t.unworked', { to: 'grace@example.com', plan: 'free' });
    const jobs = await expectSent(queue, 't.unworked', { to: 'ada@example.com' }, { since });
    expect(jobs.map((j) => j.id)).toEqual([id]);
    expect(jobs[0]!.data).toEqual({ to: 'ada@example.com', plan: 'pro' });
    expect(await expectSent(queue, 't.unworked', { to: /@example\.com$/ }, { since, times: 2 })).toHaveLength(2);
    const byPredicate = await expectSent<{ plan: string }>(
      queue,
      't.unworked',
      (data, job) => data.plan === 'pro' && job.state === 'created',
      {
        since,
      },
    );
    expect(byPredicate.map((j) => j.id)).toEqual([id]);
    expect(await expectSent(queue, 't.unworked', { plan: 'enterprise' }, { since, times: 0 })).toEqual([]);
  });

  it('never lets an async matcher pass: a promise is no answer', async () => {
    await queue.send('t.mail', { to: 'async' }, { startAfter: 3600 });
    await expect(expectSent(queue, 't.mail', async () => true)).rejects.toThrow(/matcher must be a matcher that answers at once/);
    await expect(expectSent(queue, 't.mail', async () => false, { times: 0 })).rejects.toThrow(InvalidOptionError);
    await expect(expectSent(queue, 't.mail', { to: async () => true } as never)).rejects.toThrow(
      /data\.to must be a matcher that answers at once/,
    );
  });

  it('throws an Error that lists what was sent and where each job differs', async () => {
    const since = new Date();
    const a = (await queue.send('t.unworked', { to: 'ada@example.com', plan: 'pro' }))!;
    const b = (await queue.send('t.unworked', { to: 'grace@example.com', plan: 'free' }))!;
    const thrown = await expectSent(queue, 't.unworked', { to: 'linus@example.com' }, { since }).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(Error);
    const lines = (thrown as Error).message.split('\n');
    expect(lines[0]).toBe(
      `expectSent: no job with data matching {"to":"linus@example.com"} was sent to queue "t.unworked" since ${since.toISOString()}. 2 job(s) were sent to it since ${since.toISOString()}, newest first:`,
    );
    expect(lines[1]).toMatch(new RegExp(`^  job ${b} \\(created, .+\\): \\{"to":"grace@example.com","plan":"free"\\}$`));
    expect(lines[2]).toBe('    data.to: expected "linus@example.com", received "grace@example.com"');
    expect(lines[3]).toMatch(new RegExp(`^  job ${a} \\(created, `));
    expect(lines[4]).toBe('    data.to: expected "linus@example.com", received "ada@example.com"');

    const counted = await expectSent(queue, 't.unworked', { plan: 'pro' }, { since, times: 2 }).catch((err: unknown) => err);
    expect((counted as Error).message).toMatch(
      /^expectSent: expected 2 job\(s\) with data matching \{"plan":"pro"\} sent to queue "t.unworked" since .+, found 1\./,
    );
    const predicate = await expectSent(
      queue,
      't.unworked',
      function isVip() {
        return false;
      },
      { since },
    ).catch((err: unknown) => err);
    expect((predicate as Error).message).toContain('did not pass [Function isVip]');
    const future = new Date(Date.now() + 60_000);
    await expect(expectSent(queue, 't.unworked', undefined, { since: future })).rejects.toThrow(
      `expectSent: no job with any data was sent to queue "t.unworked" since ${future.toISOString()}; no job at all was sent to it since ${future.toISOString()}.`,
    );
  });

  it('refuses a queue that does not exist and options it does not know', async () => {
    await expect(expectSent(queue, 't.nowhere')).rejects.toBeInstanceOf(QueueNotFoundError);
    await expect(expectSent(queue, 't.unworked', {}, { times: -1 })).rejects.toThrow('options.times must be an integer >= 0, got -1');
    await expect(expectSent(queue, 't.unworked', {}, { after: 1 } as never)).rejects.toThrow(
      'options.after must be one of the known options',
    );
  });
});

describe('runJob()', () => {
  it('sends one job, runs it through the handler and returns its output', async () => {
    const result = await runJob(queue, 't.mail', { to: 'runjob' });
    expect(result).toMatchObject({ state: 'completed', output: { delivered: 'runjob' }, error: null });
    expect(result.job).toMatchObject({ name: 't.mail', state: 'completed', data: { to: 'runjob' } });
    expect(handlers.delivered).toContain('runjob');
    // the held loops were started for the run, and held again after it
    expect(queue.workerCount).toBe(0);
  });

  it('returns a failure with its error, after one attempt', async () => {
    const result = await runJob(queue, 't.mail', { to: 'nobody', fail: true }, { send: { priority: 5 } });
    expect(result.state).toBe('failed');
    expect(result.output).toBeNull();
    expect(result.error).toMatchObject({ name: 'Error', message: 'no mailbox for nobody', attempt: 1 });
    expect(result.job).toMatchObject({ retryLimit: 0, retryCount: 0, priority: 5 });
    expect(handlers.attempts.get(result.job!.id)).toBe(1);
  });

  it('runs the method’s guards: a guard that refuses fails the job, and the method never runs', async () => {
    const refused = await runJob(queue, 't.vip', { vip: false });
    expect(refused.state).toBe('failed');
    expect(refused.error).toMatchObject({ name: 'ForbiddenException', message: 'Forbidden resource' });
    const admitted = await runJob(queue, 't.vip', { vip: true });
    expect(admitted).toMatchObject({ state: 'completed', output: { welcomed: true } });
    expect(handlers.vipRuns).toEqual([admitted.job!.id]);
  });

  it('checks a typed job’s payload with its schema, at the send', async () => {
    expect((await runJob(queue, Invoice, { amount: 12 })).output).toEqual({ charged: 12 });
    const sentBefore = (await queue.findJobs(Invoice.name)).jobs.length;
    await expect(runJob(queue, Invoice, { amount: -1 })).rejects.toBeInstanceOf(InvalidPayloadError);
    expect((await queue.findJobs(Invoice.name)).jobs.length).toBe(sentBefore);
  });

  it('throws JobNotSentError when the queue’s policy suppresses the job, and WaitTimeoutError when it does not end in time', async () => {
    // a `short` queue holds one created job per key: this one, deferred, keeps it while runJob runs the loops
    const holder = (await queue.send('t.short', {}, { singletonKey: 'k', startAfter: 3600 }))!;
    const suppressed = await runJob(queue, 't.short', {}, { send: { singletonKey: 'k' } }).catch((err: unknown) => err);
    expect(suppressed).toBeInstanceOf(JobNotSentError);
    expect((suppressed as JobNotSentError).code).toBe('JOB_NOT_SENT');
    await queue.deleteJob('t.short', holder);

    // a dedupeKey held by another job answers that job's id: its outcome is not this run's
    const waiting = (await queue.send('t.mail', { to: 'first' }, { dedupeKey: 'once', startAfter: 3600 }))!;
    const deduped = await runJob(queue, 't.mail', { to: 'second' }, { send: { dedupeKey: 'once' } }).catch((err: unknown) => err);
    expect(deduped).toBeInstanceOf(JobNotSentError);
    expect((deduped as Error).message).toContain(`its dedupeKey is held by job ${waiting}`);
    await queue.deleteJob('t.mail', waiting);
    // in a caller's transaction the job would stay invisible until a commit that never comes
    await expect(runJob(queue, 't.mail', { to: 'tx' }, { send: { db: {} } })).rejects.toThrow(/options\.send\.db/);

    const late = await runJob(queue, 't.mail', { to: 'late' }, { send: { startAfter: 3600 }, timeoutMs: 200 }).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(WaitTimeoutError);
    expect((late as WaitTimeoutError).message).toMatch(/^runJob\("t\.mail"\) timed out after 200 ms: job (\d+) is created, due at \S+Z$/);
    const id = /job (\d+)/.exec((late as WaitTimeoutError).message)![1]!;
    expect(await stateOf('t.mail', id)).toBe('created');
    await queue.deleteJob('t.mail', id);
    expect(queue.workerCount).toBe(0);
  });

  it('returns a job cancelled while it ran, and a completion whose row removeOnComplete deleted', async () => {
    const cancelled = await runJob(queue, 't.cancelled', {});
    expect(cancelled).toMatchObject({ state: 'cancelled', output: null, error: null, job: { state: 'cancelled' } });
    const removed = await runJob(queue, 't.removed', {});
    expect(removed).toEqual({ state: 'completed', output: null, error: null, job: null });
    expect((await queue.findJobs('t.removed')).jobs).toEqual([]);
  });

  it('throws NoWorkerError, sending nothing, for a queue no loop of this process works', async () => {
    const before = (await queue.findJobs('t.unworked')).jobs.length;
    await expect(runJob(queue, 't.unworked', {})).rejects.toThrow(NoWorkerError);
    expect((await queue.findJobs('t.unworked')).jobs.length).toBe(before);
  });
});
