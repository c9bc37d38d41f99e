// An option is never accepted and ignored: the pure checks, without a database. Each refusal names the field, what
// is accepted there and the value given (test/core/ignored-options.spec.ts runs the calls against PostgreSQL and
// shows that nothing is written).
import pg from 'pg';
import { resolveConfig } from '../../lib/core/config/config.js';
import { InvalidOptionError } from '../../lib/core/errors.js';
import { defineJob } from '../../lib/core/job-definition.js';
import { INSERT_JOB_OPTIONS } from '../../lib/core/config/option-keys.js';
import { parseSendOptions, parseWorkOptions, splitHandlerOptions } from '../../lib/core/config/options.js';
import { parseDeclaredSchedule, parseSchedule } from '../../lib/core/queues/schedules.js';
import { parseFlow } from '../../lib/core/jobs/flow-graph.js';
import { parseQueueEventOptions } from '../../lib/nest/decorators/on-queue-event.decorator.js';

const url = 'postgres://unused';
/** A pool that never connects: resolveConfig only looks at it. */
const pool = new pg.Pool({ connectionString: url });
const drizzleLike = { $client: pool };

function refusal(call: () => unknown): InvalidOptionError {
  try {
    call();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidOptionError);
    return err as InvalidOptionError;
  }
  throw new Error('not refused');
}

describe('module options that would do nothing beside the others', () => {
  it.each([
    [
      'poolSize beside a pool',
      { pool, poolSize: 5 },
      'poolSize',
      /^poolSize must be left out with pool: the pool handed in keeps its own size/,
    ],
    ['poolSize beside a db', { db: drizzleLike, poolSize: 5 }, 'poolSize', /^poolSize must be left out with db/],
    ['preparedStatements: true beside a pool', { pool, preparedStatements: true }, 'preparedStatements', /false or left out with pool/],
    ['preparedStatements: true beside a db', { db: drizzleLike, preparedStatements: true }, 'preparedStatements', /with db: on a pool/],
    [
      'queueStatRetentionDays without persistQueueStats',
      { connectionString: url, queueStatRetentionDays: 30 },
      'queueStatRetentionDays',
      /unless persistQueueStats is true/,
    ],
    [
      'startWorkers: true with workers: false',
      { connectionString: url, workers: false, startWorkers: true },
      'startWorkers',
      /false or left out with workers: false \(there are no loops to start/,
    ],
    [
      'useListenNotify: true with workers: false',
      { connectionString: url, workers: false, useListenNotify: true },
      'useListenNotify',
      /wakes worker loops, and this instance runs none/,
    ],
    [
      'logJobFailures: true with workers: false',
      { connectionString: url, workers: false, logJobFailures: true },
      'logJobFailures',
      /^logJobFailures must be false or left out/,
    ],
    [
      'warningSlowClaimMs with workers: false',
      { connectionString: url, workers: false, warningSlowClaimMs: 500 },
      'warningSlowClaimMs',
      /^warningSlowClaimMs must be 0 or left out with workers: false/,
    ],
    [
      'listen with useListenNotify: false',
      { connectionString: url, useListenNotify: false, listen: { connectionString: url } },
      'listen',
      /^listen must be left out with useListenNotify: false/,
    ],
    [
      'listen with workers: false',
      { connectionString: url, workers: false, useListenNotify: false, listen: { connectionString: url } },
      'listen',
      /left out with/,
    ],
    [
      'listen with workers: false (LISTEN left on)',
      { connectionString: url, workers: false, listen: { connectionString: url } },
      'listen',
      /^listen must be left out with workers: false \(the LISTEN connection wakes worker loops/,
    ],
    ['listen that says nowhere to go', { connectionString: url, listen: { user: 'x' } }, 'listen', /with a connectionString or a host/],
    ['listen as a string', { connectionString: url, listen: url }, 'listen', /^listen must be a pg.ClientConfig/],
    [
      'listen with a misspelt key',
      { connectionString: url, listen: { connectionString: url, passwrod: 'x' } },
      'listen.passwrod',
      /did you mean password\?/,
    ],
    [
      'listen with an empty connectionString',
      { connectionString: url, listen: { connectionString: '' } },
      'listen.connectionString',
      /non-empty/,
    ],
  ])('%s is refused', (_what, options, field, message) => {
    const err = refusal(() => resolveConfig(options));
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });

  it('accepts what says what happens anyway', () => {
    expect(resolveConfig({ pool, preparedStatements: false })).toMatchObject({ pool, preparedStatements: false });
    expect(resolveConfig({ db: drizzleLike })).toMatchObject({ poolSize: 10 });
    const api = {
      connectionString: url,
      workers: false,
      startWorkers: false,
      useListenNotify: false,
      logJobFailures: false,
      warningSlowClaimMs: 0,
    };
    expect(resolveConfig(api)).toMatchObject({ workers: false, useListenNotify: false });
    expect(resolveConfig({ connectionString: url, listen: { connectionString: url } }).listen).toEqual({ connectionString: url });
    expect(resolveConfig({ connectionString: url, listen: { host: 'db', port: 5433 } }).listen).toEqual({ host: 'db', port: 5433 });
    expect(resolveConfig({ connectionString: url }).listen).toBeNull();
    expect(resolveConfig({ connectionString: url, warningQueueSize: 1000 }).warningQueueSize).toBe(1000);
    expect(resolveConfig({ connectionString: url }).warningQueueSize).toBeNull();
    expect(refusal(() => resolveConfig({ connectionString: url, warningQueueSize: 0 })).field).toBe('warningQueueSize');
    // left out: prepared unless a pooler is found at start (null); said: as said
    expect(resolveConfig({ connectionString: url }).preparedStatements).toBeNull();
    expect(resolveConfig({ connectionString: url, preparedStatements: true }).preparedStatements).toBe(true);
    expect(resolveConfig({ connectionString: url, persistQueueStats: true, queueStatRetentionDays: 30 })).toMatchObject({
      queueStatRetentionDays: 30,
    });
  });

  it("names pg-boss's constructor options", () => {
    expect(refusal(() => resolveConfig({ connectionString: url, max: 5 })).message).toContain("pg-boss's max is poolSize here");
    expect(refusal(() => resolveConfig({ connectionString: url, host: 'db' })).message).toContain('put it in connectionString');
  });
});

describe('send options: what an argument gives is refused among the options', () => {
  it('send options take no data, a job of insert or flow no db', () => {
    expect(refusal(() => parseSendOptions({ data: { a: 1 } })).field).toBe('options.data');
    expect(refusal(() => parseSendOptions({ data: 1, db: {} }, 'jobs[2]', INSERT_JOB_OPTIONS)).field).toBe('jobs[2].db');
    expect(parseSendOptions({ data: 1, priority: 3 }, 'jobs[0]', INSERT_JOB_OPTIONS)).toMatchObject({ priority: 3 });
    const flow = refusal(() =>
      parseFlow(
        [
          { name: 'a', ref: 'a' },
          { name: 'b', ref: 'b', db: {} },
        ],
        1000,
      ),
    );
    expect(flow.field).toBe('jobs[1].db');
    expect(flow.message).toContain('flow(jobs, { db })');
    expect(refusal(() => parseFlow([{ name: 'a', ref: 'a', options: { retryLimit: 1 } }], 1000)).field).toBe('jobs[0].options');
  });

  it("pg-boss's job options get what to write instead", () => {
    expect(refusal(() => parseSendOptions({ singletonSeconds: 60 })).message).toContain('sendThrottled(name, data, options, seconds)');
    expect(refusal(() => parseSendOptions({ id: 'x' })).message).toContain('ids come from a sequence');
  });

  it('schedule() refuses data among its options (its third argument), and a declared schedule an unknown key', () => {
    const err = refusal(() => parseSchedule('reports', '* * * * *', null, { data: { full: true } }));
    expect(err).toMatchObject({ field: 'options.data', value: { full: true } });
    expect(err.message).toContain("schedule()'s third argument");
    expect(parseDeclaredSchedule('h.schedule', { cron: '* * * * *', data: { a: 1 }, priority: 2 })).toMatchObject({ data: { a: 1 } });
    expect(refusal(() => parseDeclaredSchedule('h.schedule', { cron: '* * * * *', every: 5 })).field).toBe('h.schedule.every');
    expect(refusal(() => parseDeclaredSchedule('h.schedule', { cron: '* * * * *', db: {} })).field).toBe('h.schedule.db');
  });
});

describe('worker loop options', () => {
  it("refuses a name it does not know, pg-boss's with what to write instead", () => {
    const err = refusal(() => parseWorkOptions({ localConcurrency: 4 }));
    expect(err).toMatchObject({ field: 'options.localConcurrency', value: 4 });
    expect(err.message).toContain("pg-boss 12's localConcurrency is concurrency here");
    expect(refusal(() => parseWorkOptions({ concurency: 4 })).message).toContain('did you mean concurrency?');
    expect(parseWorkOptions({ concurrency: 4 })).toMatchObject({ concurrency: 4 });
  });

  it("splits a @QueueHandler's options after refusing a key that is neither the queue's nor the loop's", () => {
    const field = "@QueueHandler('q') on A.b";
    expect(splitHandlerOptions({ retryLimit: 1, concurrency: 2 }, field)).toEqual({ queue: { retryLimit: 1 }, work: { concurrency: 2 } });
    const err = refusal(() => splitHandlerOptions({ teamSize: 2 }, field));
    expect(err.field).toBe(`${field}.teamSize`);
    expect(err.message).toContain('is concurrency here');
    expect(err.message).toContain('schedule');
  });
});

describe('defineJob', () => {
  it('checks its queue options where they are written', () => {
    expect(refusal(() => defineJob('dj.a', { retryLimt: 1 } as never)).message).toContain('did you mean retryLimit?');
    expect(refusal(() => defineJob('dj.b', { retryLimit: -1 })).field).toBe('options.retryLimit');
    expect(refusal(() => defineJob('dj.c', { concurrency: 3 } as never)).message).toContain('@QueueHandler(job, { concurrency })');
    expect(defineJob('dj.d', { retryLimit: 1, schema: { parse: (d: unknown) => d } }).options).toEqual({ retryLimit: 1 });
  });
});

describe('@OnQueueEvent options, as its explorer checks them at bootstrap', () => {
  const at = (event: unknown, options: unknown) => parseQueueEventOptions('Audit.onDone', { event, options });

  it('reads the event and the queue, named or given as a job', () => {
    expect(at('completed', {})).toEqual({ event: 'completed', queue: null });
    expect(at('failed', { queue: 'mail' })).toEqual({ event: 'failed', queue: 'mail' });
    expect(at('expired', { queue: defineJob('mail.job') })).toEqual({ event: 'expired', queue: 'mail.job' });
  });

  it.each([
    [
      'an unknown event',
      'done',
      {},
      "@OnQueueEvent('done') on Audit.onDone event",
      /must be one of completed, failed, retrying, expired, got "done"/,
    ],
    [
      'an unknown option',
      'completed',
      { queues: ['a'] },
      "@OnQueueEvent('completed') on Audit.onDone options.queues",
      /did you mean queue\?/,
    ],
    [
      'options that are no object',
      'completed',
      'mail',
      "@OnQueueEvent('completed') on Audit.onDone options",
      /must be an object, got "mail"/,
    ],
    [
      'a queue of the wrong type',
      'failed',
      { queue: 5 },
      "@OnQueueEvent('failed') on Audit.onDone options.queue",
      /a queue name or a job of defineJob\(\), got 5/,
    ],
    ['a bad queue name', 'failed', { queue: 'no spaces' }, "@OnQueueEvent('failed') on Audit.onDone options.queue", /1 to 100 characters/],
  ])('refuses %s, naming the method and the field', (_what, event, options, field, message) => {
    const err = refusal(() => at(event, options));
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });
});
