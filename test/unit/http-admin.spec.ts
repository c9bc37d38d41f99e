// The admin API's request parsing and its one table of errors to HTTP answers, without a server or a database.
import {
  InvalidOptionError,
  InvalidPayloadError,
  JobNotFoundError,
  JobStateError,
  PayloadTooLargeError,
  QueueError,
  QueueExistsError,
  QueueNotFoundError,
} from '../../lib/core/errors.js';
import { adminJob, jobIdOf, parseEnqueueBody, parseFindQuery, referenceStatus } from '../../lib/core/http/admin.js';
import type { JobWithMetadata } from '../../lib/core/types.js';
import { httpErrorOf } from '../../lib/core/http/errors.js';

describe('the admin API’s error answers', () => {
  it('maps each typed error to its status, naming the field where the error has one', () => {
    expect(httpErrorOf(new InvalidOptionError('options.priority', 'an integer', 'x'))).toEqual({
      status: 400,
      body: { statusCode: 400, code: 'INVALID_OPTION', message: 'options.priority must be an integer, got "x"', field: 'options.priority' },
    });
    expect(httpErrorOf(new InvalidPayloadError('data', 'a function'))).toMatchObject({ status: 400, body: { field: 'data' } });
    expect(httpErrorOf(new PayloadTooLargeError('data', 10, 20))).toMatchObject({ status: 413, body: { field: 'data' } });
    expect(httpErrorOf(new QueueNotFoundError('q'))?.status).toBe(404);
    expect(httpErrorOf(new JobNotFoundError(null, '7'))).toMatchObject({ status: 404, body: { message: 'job 7 does not exist' } });
    expect(httpErrorOf(new JobStateError('q', '7', 'active', 'failed'))?.status).toBe(409);
    // the admin API answers 400 there, as the API it follows does
    expect(httpErrorOf(new JobStateError('q', '7', 'active', 'failed'), { JOB_STATE: 400 })?.status).toBe(400);
    expect(httpErrorOf(new QueueExistsError('q', ['policy']))?.status).toBe(409);
    expect(httpErrorOf(new QueueError('closing', 'QUEUE_CLOSED'))?.status).toBe(503);
  });

  it('a database that cannot be reached is 503; anything else is left to the server (500)', () => {
    expect(httpErrorOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))?.status).toBe(503);
    expect(httpErrorOf(Object.assign(new Error('terminating connection'), { code: '57P01' }))?.status).toBe(503);
    expect(httpErrorOf(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))?.status).toBe(503);
    expect(httpErrorOf(new Error('Connection terminated unexpectedly'))?.body.code).toBe('DATABASE_UNAVAILABLE');
    expect(httpErrorOf(new TypeError('x is undefined'))).toBeNull();
    expect(httpErrorOf(Object.assign(new Error('syntax'), { code: '42601' }))).toBeNull();
    expect(httpErrorOf(new QueueError('a bug', 'SOMETHING_ELSE'))).toBeNull();
  });
});

describe('the admin API’s answers', () => {
  const base = {
    id: '1',
    name: 'q',
    data: { a: 1 },
    output: null,
    sourceOutput: { error: { message: 'source secret' } },
    retryCount: 0,
    retryBase: 0,
    retryLimit: 4,
    startAfter: new Date(0),
    startedOn: null,
    lastError: null,
  } as unknown as JobWithMetadata;
  const job = (over: Partial<JobWithMetadata>) => ({ ...base, ...over }) as JobWithMetadata;
  const failure = (name: string, on: number) => ({ name, message: 'm', on: new Date(on), attempt: 1 });

  it('count the attempts begun in the current budget, whatever the state', () => {
    const attempts = (over: Partial<JobWithMetadata>) => {
      const a = adminJob(job(over), undefined);
      return [a.attempts, a.maxAttempts];
    };
    expect(attempts({ state: 'created' })).toEqual([0, 5]);
    expect(attempts({ state: 'active', startedOn: new Date(5) })).toEqual([1, 5]);
    expect(attempts({ state: 'retry', retryCount: 1, lastError: failure('Error', 9) })).toEqual([1, 5]);
    expect(attempts({ state: 'active', retryCount: 1, startedOn: new Date(20), lastError: failure('Error', 9) })).toEqual([2, 5]);
    expect(attempts({ state: 'failed', retryCount: 4, lastError: failure('Error', 9) })).toEqual([5, 5]);
    // failed while it waited: its last attempt never began
    expect(attempts({ state: 'failed', retryCount: 1, lastError: failure('RetentionExpiredError', 30) })).toEqual([1, 5]);
    expect(attempts({ state: 'failed', lastError: failure('ParentFailedError', 30) })).toEqual([0, 5]);
    // cancelled while running, or while waiting for its retry
    expect(attempts({ state: 'cancelled', startedOn: new Date(5) })).toEqual([1, 5]);
    expect(attempts({ state: 'cancelled', retryCount: 1, startedOn: new Date(5), lastError: failure('Error', 9) })).toEqual([1, 5]);
    // retry() gave a fresh budget of 5 from retryCount 5
    expect(attempts({ state: 'retry', retryCount: 5, retryBase: 5, retryLimit: 9 })).toEqual([0, 5]);
  });

  it('carry the reference’s fields, and only what redact lets out, the dead-letter source’s output too', () => {
    const shown = adminJob(job({ state: 'failed', retryCount: 4, lastError: failure('Error', 9) }), undefined);
    expect(shown).toMatchObject({ payload: { a: 1 }, data: { a: 1 }, status: 'failed', lastError: 'm', runAfter: new Date(0) });
    expect(shown.lastErrorDetail).toMatchObject({ name: 'Error', attempt: 1 });
    const hidden = adminJob(job({ state: 'failed', lastError: failure('Error', 9) }), () => ({ data: 'x', lastError: null }));
    expect(hidden).toMatchObject({ data: 'x', payload: 'x', lastError: null, lastErrorDetail: null });
    for (const key of ['output', 'sourceOutput']) expect(hidden).not.toHaveProperty(key);
    expect(JSON.stringify(hidden)).not.toContain('source secret');
  });

  it('name a state as seed 002 does: pending, in_progress, completed, failed (a cancelled job too)', () => {
    expect((['created', 'retry', 'active', 'completed', 'failed', 'cancelled'] as const).map(referenceStatus)).toEqual([
      'pending',
      'pending',
      'in_progress',
      'completed',
      'failed',
      'failed',
    ]);
  });
});

describe('the admin API’s requests', () => {
  it('an enqueue body is seed 002’s { queue, payload, maxAttempts, runAt, delay, dedupeKey, priority } or { queue, data, options }, each checked by name', () => {
    expect(parseEnqueueBody({ queue: 'q', data: { a: 1 }, options: { priority: 1 } })).toEqual({
      queue: 'q',
      data: { a: 1 },
      options: { priority: 1 },
    });
    expect(parseEnqueueBody({ queue: 'q' })).toEqual({ queue: 'q', data: undefined, options: {} });
    expect(parseEnqueueBody({ queue: 'q', payload: { u: 1 }, maxAttempts: 5, delay: 1500, dedupeKey: 'd', priority: 2 })).toEqual({
      queue: 'q',
      data: { u: 1 },
      options: { retryLimit: 4, startAfter: 2, dedupeKey: 'd', priority: 2 },
    });
    // runAt wins over delay; a whole second of delay is that second
    expect(parseEnqueueBody({ queue: 'q', payload: null, runAt: '2030-01-02T03:04:05Z', delay: 1000 }).options).toEqual({
      startAfter: new Date('2030-01-02T03:04:05Z'),
    });
    expect(parseEnqueueBody({ queue: 'q', delay: 1000 }).options).toEqual({ startAfter: 1 });
    expect(parseEnqueueBody({ queue: 'q', runAt: '2030-01-02 03:04:05.250+02:00' }).options).toEqual({
      startAfter: new Date('2030-01-02T01:04:05.250Z'),
    });
    // null is "not given", as a JSON client may write an option it leaves out
    expect(parseEnqueueBody({ queue: 'q', payload: 1, maxAttempts: null, runAt: null, delay: null, dedupeKey: null }).options).toEqual({});
    const fieldOf = (body: unknown) => {
      try {
        parseEnqueueBody(body);
      } catch (err) {
        return (err as InvalidOptionError).field;
      }
      return null;
    };
    expect(
      [
        null,
        'x',
        [],
        { queue: 1 },
        { queue: 'q', data: {}, payload: {} },
        { queue: 'q', options: [] },
        { queue: 'q', options: { db: 1 } },
        { queue: 'q', maxAttempts: 0 },
        { queue: 'q', maxAttempts: '5' },
        { queue: 'q', runAt: 'soon' },
        { queue: 'q', runAt: '2030-01-02T03:04:05' },
        { queue: 'q', runAt: '2028-02-30T03:04:05Z' },
        { queue: 'q', runAt: '2028-13-01T03:04:05Z' },
        { queue: 'q', priority: 1.5 },
        { queue: 'q', dedupeKey: '' },
        { queue: 'q', delay: -1 },
        { queue: 'q', extra: 1 },
      ].map(fieldOf),
    ).toEqual([
      'body',
      'body',
      'body',
      'queue',
      'payload',
      'options',
      'options.db',
      'maxAttempts',
      'maxAttempts',
      'runAt',
      'runAt',
      'runAt',
      'runAt',
      'priority',
      'dedupeKey',
      'delay',
      'extra',
    ]);
  });

  it('a find query becomes findJobs’ options: states repeated or comma-separated, numbers from text, unknown keys refused', () => {
    expect(parseFindQuery({ state: 'failed', limit: '20', after: '15' })).toEqual({ state: 'failed', limit: 20, after: '15' });
    expect(parseFindQuery({ state: ['failed', 'retry,created'] })).toEqual({ state: ['failed', 'retry', 'created'] });
    expect(parseFindQuery({ limit: 'many' })).toEqual({ limit: 'many' });
    expect(() => parseFindQuery({ order: 'asc' })).toThrow(/^order must be absent/);
    expect(() => parseFindQuery({ after: ['1', '2'] })).toThrow(/^after must be given once/);
    expect(jobIdOf('42')).toBe('42');
    expect(() => jobIdOf('042')).toThrow(/^id must be a job id/);
  });
});
