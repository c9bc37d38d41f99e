import { checkHealth, judge, parseThresholds } from '../../lib/core/stats/health.js';
import { InvalidOptionError } from '../../lib/core/errors.js';
import type { QueueResult, WorkerInfo } from '../../lib/core/types.js';

function queue(name: string, counts: Partial<QueueResult> = {}): QueueResult {
  return {
    name,
    queuedCount: 0,
    readyCount: 0,
    activeCount: 0,
    failedCount: 0,
    readyOldestSeconds: 0,
    unworked: false,
    paused: false,
    countedOn: new Date(0),
    ...counts,
  } as QueueResult;
}

const worker = (...queues: string[]): WorkerInfo =>
  ({
    id: 'w',
    host: 'h',
    pid: 1,
    version: '0',
    loops: [],
    queues: queues.map((name) => ({ name, concurrency: 1, active: 0 })),
  }) as unknown as WorkerInfo;

describe('judging health', () => {
  it('is healthy with no thresholds, whatever the counts', () => {
    expect(judge([queue('a', { queuedCount: 1e6, readyOldestSeconds: 1e6, unworked: true })], [], null, {})).toMatchObject({
      healthy: true,
      reasons: [],
    });
  });

  it('names every threshold breached, per queue', () => {
    const { healthy, reasons } = judge(
      [queue('a', { readyOldestSeconds: 120.4, queuedCount: 11 }), queue('b', { readyCount: 3, unworked: true })],
      [],
      new Map([['b', 6]]),
      { maxReadyAgeSeconds: 60, maxQueued: 10, maxFailedLastMinutes: { count: 5, minutes: 15 }, requireWorkers: true },
    );
    expect(healthy).toBe(false);
    expect(reasons).toEqual([
      'queue "a": its oldest ready job has waited 120 s (maxReadyAgeSeconds 60)',
      'queue "a": 11 jobs waiting (maxQueued 10)',
      'queue "b": 6 jobs failed in the last 15 min (maxFailedLastMinutes.count 5)',
      'queue "b": 3 ready jobs and no live worker works it',
    ]);
  });

  it("a paused queue's waiting jobs wait on purpose: neither their age nor no worker is a reason; its backlog still is", () => {
    const paused = queue('p', { readyOldestSeconds: 900, readyCount: 20, queuedCount: 20, unworked: true, paused: true });
    const t = { maxReadyAgeSeconds: 60, maxQueued: 10, requireWorkers: true };
    const { reasons, queues } = judge([paused], [], null, t);
    expect(reasons).toEqual(['queue "p": 20 jobs waiting (maxQueued 10)']);
    expect(queues.p).toMatchObject({ paused: true, unworked: true });
  });

  it('keeps a queue named __proto__ or constructor as an own entry of the report', () => {
    const { queues } = judge([queue('__proto__', { queuedCount: 2 }), queue('constructor')], [], null, {});
    expect(Object.keys(queues)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(queues)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(queues, '__proto__')?.value).toMatchObject({ queued: 2 });
    // JSON.parse defines keys as own properties, __proto__ included
    expect(Object.keys(JSON.parse(JSON.stringify(queues)) as object)).toEqual(['__proto__', 'constructor']);
  });

  it('with named queues, requireWorkers wants a live loop on each, ready jobs or not; an unknown name is a reason', () => {
    const t = { queues: ['a', 'b', 'gone'], requireWorkers: true };
    expect(judge([queue('a'), queue('b')], [worker('a')], null, t).reasons).toEqual([
      'queue "gone" does not exist',
      'queue "b": no live worker in the cluster works it',
    ]);
  });

  it('maxFailedLastMinutes without recorded stats is a reason, not a silent pass', () => {
    expect(judge([queue('a')], [], null, { maxFailedLastMinutes: { count: 0, minutes: 5 } }).reasons[0]).toMatch(/needs persistQueueStats/);
  });
});

describe('thresholds', () => {
  it('are validated, naming the field', () => {
    expect(() => parseThresholds({ maxQueued: -1 })).toThrow(InvalidOptionError);
    expect(() => parseThresholds({ maxFailedLastMinutes: { count: 1 } })).toThrow(/thresholds.maxFailedLastMinutes.minutes/);
    expect(() => parseThresholds({ queues: 'a' })).toThrow(/thresholds.queues/);
    expect(() => parseThresholds({ maxAge: 1 })).toThrow(/thresholds.maxAge/);
    expect(parseThresholds(undefined).timeoutMs).toBe(5_000);
  });
});

describe('checkHealth', () => {
  it('is down, never throwing, when the database does not answer in time or the thresholds are bad', async () => {
    const never = new Promise<never>(() => undefined);
    const hung = { getQueues: () => never, getWorkers: () => never, failedSince: () => never };
    await expect(checkHealth(hung, { timeoutMs: 20 })).resolves.toMatchObject({
      healthy: false,
      reasons: ['the database did not answer within 20 ms'],
    });
    const failing = {
      getQueues: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' })),
      getWorkers: () => Promise.resolve([]),
      failedSince: () => Promise.resolve(null),
    };
    // the driver's text names the server: the reason gives its code only (publicError)
    await expect(checkHealth(failing)).resolves.toMatchObject({
      healthy: false,
      reasons: ['the database cannot be reached (ECONNREFUSED)'],
    });
    await expect(checkHealth(failing, { maxQueued: 'ten' } as never)).resolves.toMatchObject({
      healthy: false,
      reasons: [expect.stringMatching(/thresholds.maxQueued/)],
    });
  });
});
