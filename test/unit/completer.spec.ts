// The completer's rules, against a fake executor that answers like the fenced statements do: it returns the
// attempts it still "holds" among those a statement names, or throws what the test tells it to.
import { jest } from '@jest/globals';
import { buildStatements } from '../../lib/core/sql/index.js';
import { attemptKey } from '../../lib/core/worker/attempt/attempt.js';
import { Completer, timingOf, type CompleterScope, type Finished } from '../../lib/core/worker/completer.js';
import { describeFailure } from '../../lib/core/worker/attempt/failure.js';

const statements = buildStatements('"s"');
const nameOf = new Map(Object.entries(statements).map(([name, text]) => [text, name]));

interface Call {
  statement: string;
  ids: string[];
  args: unknown[];
}

function attempt(id: string, kind: { parent?: boolean; remove?: boolean } = {}): Finished {
  const row = {
    id,
    claim_count: 1,
    stamp: `17000000${id}`,
    parent: kind.parent ?? false,
    remove: kind.remove ?? false,
    created_on: 1_700_000_000_000,
    start_after: 1_700_000_001_000,
    started_on: 1_700_000_001_250,
  };
  return { key: attemptKey(row), row, claimedAt: Date.now() };
}

/** A fake engine: `answer` gets each statement with the ids it names and returns the ids it writes (or throws). */
function harness(answer: (call: Call) => string[] | Promise<string[]>, logFailures = false) {
  const calls: Call[] = [];
  const warnings: string[] = [];
  const logged: string[] = [];
  const errors: { err: unknown; context: string }[] = [];
  const counted = { stale: 0 };
  const holding = { now: false };
  const listening = new Set<string>();
  const emitted: Record<string, unknown>[] = [];
  const scope: CompleterScope = {
    exec: {
      async query<R>(text: string, args: unknown[] = []): Promise<R[]> {
        // Settle statements take their ids as an array literal, releaseJobs as an array.
        const ids = typeof args[1] === 'string' ? args[1].slice(1, -1).split(',') : (args[1] as string[]);
        const call = { statement: nameOf.get(text) ?? text, ids, args };
        calls.push(call);
        const written = await answer(call);
        // A failure: job 1 goes back to retry in 30 s, any other fails for good into the dead-letter queue "dlq".
        const failure = (id: string) =>
          call.statement.startsWith('fail')
            ? id === '1'
              ? { state: 'retry', retry_in: 30 }
              : { state: 'failed', dead_letter: 'dlq' }
            : {};
        return written.map((id) => ({ id, claim_count: 1, stamp: `17000000${id}`, ...failure(id) })) as R[];
      },
    },
    statements,
    queue: 'q',
    workerId: 'w1',
    channel: 'ch',
    log: { log: () => undefined, warn: (m) => warnings.push(m), error: (m) => void logged.push(m) },
    logFailures,
    staleResult: () => void counted.stale++,
    holdsBack: () => holding.now,
    error: (err, context) => void errors.push({ err, context }),
    events: {
      warning: (w) => void warnings.push(typeof w === 'string' ? w : w.message),
      listens: (name) => listening.has(name),
      job: (name, payload) => void emitted.push({ name, ...payload }),
    },
  };
  return { completer: new Completer(scope), calls, warnings, errors, counted, holding, logged, emitted, listening };
}

const writesAll = (call: Call) => call.ids;
const pgError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

/** Lets the event loop turn until `condition` holds; fails after `turns` turns instead of hanging. */
async function until(condition: () => boolean, turns = 1000): Promise<void> {
  for (let i = 0; i < turns && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

afterEach(() => jest.useRealTimers());

describe('the completer wakes the workers of a queue that holds jobs back', () => {
  it('has each write on such a queue send the NOTIFY (its last argument, the channel), and none on a plain queue', async () => {
    const h = harness(writesAll);
    await Promise.all([h.completer.settle(attempt('1'), null, null), h.completer.settle(attempt('2'), null, null)]);
    expect(h.calls.map((c) => [c.statement, c.args.at(-1)])).toEqual([['completeLeafJobs', null]]);
    h.holding.now = true;
    await Promise.all([
      h.completer.settle(attempt('3'), null, null),
      h.completer.settle(attempt('4'), null, describeFailure(new Error('x'), 0)),
      h.completer.settle(attempt('5', { parent: true }), null, null),
      h.completer.settle(attempt('6', { remove: true }), null, null),
    ]);
    expect(h.calls.slice(1).map((c) => [c.statement, c.args.at(-1)])).toEqual(
      expect.arrayContaining([
        ['completeLeafJobs', 'ch'],
        ['completeJobs', 'ch'],
        ['removeLeafJobs', 'ch'],
        ['failLeafJobs', 'ch'],
      ]),
    );
    // No statement of its own: the wake-up commits with the outcomes.
    expect(h.calls).toHaveLength(5);
  });
});

describe('the completer logs the failures it writes', () => {
  it('warns of an attempt that will be retried, and logs an error for a job that failed for good', async () => {
    const h = harness(writesAll, true);
    await Promise.all([
      h.completer.settle(attempt('1'), null, describeFailure(new Error('flaky\r\nupstream\u001b[31m'), 0)),
      h.completer.settle(attempt('2'), null, describeFailure(new Error('bad input'), 2)),
      h.completer.settle(attempt('3'), null, null),
    ]);
    expect(h.warnings).toEqual(['job 1 of queue "q" failed (attempt 1): flaky upstream [31m; it will be retried in 30 s']);
    expect(h.logged).toEqual([
      'job 2 of queue "q" failed (attempt 3): bad input; it failed for good (the queue\'s dead-letter queue: "dlq")',
    ]);
  });

  it('a logger that throws is reported as an error, and the outcomes still settle', async () => {
    const h = harness(writesAll, true);
    const scope = (h.completer as unknown as { scope: { log: { warn: () => void } } }).scope;
    scope.log.warn = () => {
      throw new Error('the logger broke');
    };
    await h.completer.settle(attempt('1'), null, describeFailure(new Error('x'), 0));
    expect(h.errors.map((e) => e.context)).toEqual(['reporting the outcomes of queue "q"']);
  });

  it('logs nothing with logJobFailures off, nor for a failure the fence refused', async () => {
    const quiet = harness(writesAll, false);
    await quiet.completer.settle(attempt('2'), null, describeFailure(new Error('x'), 0));
    expect([...quiet.warnings, ...quiet.logged]).toEqual([]);
    const refused = harness(() => [], true);
    await refused.completer.settle(attempt('2'), null, describeFailure(new Error('x'), 0));
    expect(refused.logged).toEqual([]);
  });
});

describe('the completer batches outcomes', () => {
  it('writes the outcomes of one turn in one statement, with their outputs', async () => {
    const h = harness(writesAll);
    await Promise.all([
      h.completer.settle(attempt('1'), '"a"', null),
      h.completer.settle(attempt('2'), null, null),
      h.completer.settle(attempt('3'), null, null),
    ]);
    expect(h.calls.map((c) => [c.statement, c.ids])).toEqual([['completeLeafJobs', ['1', '2', '3']]]);
    // queue, ids, retry counts (none: the fence is the claim), outputs, worker, claim counts, stamps, no wake-up
    expect(h.calls[0]!.args).toEqual(['q', '{1,2,3}', null, ['"a"', null, null], 'w1', '{1,1,1}', '{170000001,170000002,170000003}', null]);
    expect(h.counted.stale).toBe(0);
  });

  it('sends one null for the outputs when no outcome has one', async () => {
    const h = harness(writesAll);
    await Promise.all([h.completer.settle(attempt('1'), null, null), h.completer.settle(attempt('2'), null, null)]);
    expect(h.calls[0]!.args[3]).toBeNull();
  });

  it('holds outcomes that arrive during a write for the next statement, all together', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const h = harness(async (call) => {
      if (call.ids.includes('1')) await gate;
      return call.ids;
    });
    const first = h.completer.settle(attempt('1'), null, null);
    await until(() => h.calls.length === 1);
    const later = [h.completer.settle(attempt('2'), null, null), h.completer.settle(attempt('3'), null, null)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.calls).toHaveLength(1);
    open();
    await Promise.all([first, ...later]);
    expect(h.calls.map((c) => c.ids)).toEqual([['1'], ['2', '3']]);
  });

  it('writes failures apart from completions, with what each failure records', async () => {
    const h = harness(writesAll);
    const failure = describeFailure(Object.assign(new Error('later'), { retryAfterSeconds: 7 }), 0);
    await Promise.all([h.completer.settle(attempt('1'), null, failure), h.completer.settle(attempt('2'), '1', null)]);
    expect(h.calls.map((c) => [c.statement, c.ids]).sort()).toEqual([
      ['completeLeafJobs', ['2']],
      ['failLeafJobs', ['1']],
    ]);
    const fail = h.calls.find((c) => c.statement === 'failLeafJobs')!;
    expect(JSON.parse((fail.args[3] as string[])[0]!)).toMatchObject({ name: 'Error', message: 'later', retryCount: 0 });
    expect(fail.args.slice(4, 6)).toEqual([[false], [7]]);
  });
});

describe('the completer fences every write to its attempt', () => {
  it('counts and names each attempt the statements did not change, and keeps the others', async () => {
    const h = harness((call) => call.ids.filter((id) => id !== '2'));
    await Promise.all(['1', '2', '3'].map((id) => h.completer.settle(attempt(id), null, null)));
    // What the leaf statement left may be a flow parent: it goes through the full statement before it counts.
    expect(h.calls.map((c) => [c.statement, c.ids])).toEqual([
      ['completeLeafJobs', ['1', '2', '3']],
      ['completeJobs', ['2']],
    ]);
    expect(h.counted.stale).toBe(1);
    expect(h.warnings).toEqual(['job 2 of queue "q" (claim 1) was no longer held by this worker; its result was discarded']);
  });

  it('writes a job the claim took for a leaf but that is a flow parent with the full statement, not as stale', async () => {
    const h = harness((call) => (call.statement === 'failLeafJobs' ? [] : call.ids));
    await h.completer.settle(attempt('5'), null, describeFailure(new Error('x')));
    expect(h.calls.map((c) => c.statement)).toEqual(['failLeafJobs', 'failJobs']);
    expect(h.counted.stale).toBe(0);
  });

  it("sends a flow parent's outcome straight to the full statement", async () => {
    const h = harness(writesAll);
    await h.completer.settle(attempt('9', { parent: true }), null, null);
    expect(h.calls.map((c) => c.statement)).toEqual(['completeJobs']);
  });

  it('writes a batch of mixed kinds one kind at a time: parents, removed, kept', async () => {
    const h = harness(writesAll);
    await Promise.all([
      h.completer.settle(attempt('1'), null, null),
      h.completer.settle(attempt('2', { remove: true }), null, null),
      h.completer.settle(attempt('3', { parent: true }), null, null),
    ]);
    expect(h.calls.map((c) => [c.statement, c.ids])).toEqual([
      ['completeJobs', ['3']],
      ['removeLeafJobs', ['2']],
      ['completeLeafJobs', ['1']],
    ]);
  });
});

describe('the completer falls back and retries', () => {
  it('writes a batch one by one when the database refuses a value, and reports only the refused one', async () => {
    const h = harness((call) => {
      if (call.ids.includes('2')) throw pgError('22P05');
      return call.ids;
    });
    await Promise.all(['1', '2', '3'].map((id) => h.completer.settle(attempt(id), null, null)));
    expect(h.calls.map((c) => c.ids)).toEqual([['1', '2', '3'], ['1'], ['2'], ['3']]);
    expect(h.errors.map((e) => e.context)).toEqual(['settling 1 job(s) of queue "q" (refused by the database)']);
    expect(h.counted.stale).toBe(0);
  });

  it('retries a write the database could not take after a backoff, writing only what is not yet written', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    // The leaf statement writes 1 and leaves 2; the full statement, for 2, finds the connection gone.
    const h = harness((call) => {
      if (call.statement === 'completeJobs') throw pgError('08006');
      return call.ids.length > 1 ? ['1'] : call.ids;
    });
    let settled = false;
    const done = Promise.all([h.completer.settle(attempt('1'), null, null), h.completer.settle(attempt('2'), null, null)]).then(
      () => (settled = true),
    );
    await until(() => h.calls.length === 2);
    expect(h.calls.map((c) => [c.statement, c.ids])).toEqual([
      ['completeLeafJobs', ['1', '2']],
      ['completeJobs', ['2']],
    ]);
    await jest.advanceTimersByTimeAsync(199);
    expect(h.calls).toHaveLength(2);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await done;
    expect(h.calls.slice(2).map((c) => [c.statement, c.ids])).toEqual([['completeLeafJobs', ['2']]]);
    expect(h.errors).toEqual([]);
    expect(h.counted.stale).toBe(0);
  });

  it('gives up after five tries, reports it, and never throws', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const h = harness(() => {
      throw pgError('57P01');
    });
    let settled = false;
    const done = h.completer.settle(attempt('1'), null, null).then(() => (settled = true));
    await until(() => h.calls.length === 1);
    // Backoffs of 200, 400, 800 and 1600 ms between the five tries.
    await jest.advanceTimersByTimeAsync(2999);
    expect(h.calls).toHaveLength(4);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await done;
    expect(h.calls).toHaveLength(5);
    expect(h.errors.map((e) => e.context)).toEqual(['settling 1 job(s) of queue "q" (gave up after 5 tries)']);
  });
});

describe('the completer hands jobs back', () => {
  it('counts a hand-back the fence refused as stale, and one it took as nothing', async () => {
    const h = harness((call) => call.ids.filter((id) => id === '1'));
    await h.completer.handBack(attempt('1'));
    await h.completer.handBack(attempt('2'));
    expect(h.calls.map((c) => [c.statement, c.ids])).toEqual([
      ['releaseJobs', ['1']],
      ['releaseJobs', ['2']],
    ]);
    expect(h.calls[0]!.args).toEqual(['q', ['1'], [1], 'w1', 'ch', ['170000001']]);
    expect(h.counted.stale).toBe(1);
  });

  it('sends nothing to hand back no jobs', async () => {
    const h = harness(writesAll);
    expect(await h.completer.release([])).toEqual([]);
    expect(h.calls).toEqual([]);
  });
});

describe('lifecycle events', () => {
  it('emits completed, failed and retrying for the outcomes written, only for the events someone listens to', async () => {
    const h = harness(writesAll);
    await h.completer.settle(attempt('5'), null, null);
    expect(h.emitted).toEqual([]); // nobody listens: nothing is built
    h.listening.add('completed');
    h.listening.add('failed');
    h.listening.add('retrying');
    await h.completer.settle(attempt('6'), null, null);
    const failure = (message: string) => ({ error: { name: 'Error', message }, permanent: false, retryAfterSeconds: null });
    await Promise.all([h.completer.settle(attempt('1'), null, failure('again')), h.completer.settle(attempt('2'), null, failure('done'))]);
    // waited from the later of creation and startAfter to the claim (0.25 s); ran from the claim's answer on
    const timing = { waitSeconds: 0.25, runSeconds: expect.any(Number) };
    expect(h.emitted).toEqual([
      { name: 'completed', queue: 'q', id: '6', ...timing },
      {
        name: 'failed',
        queue: 'q',
        id: '1',
        ...timing,
        error: { name: 'Error', message: 'again' },
        willRetry: true,
        retryInSeconds: 30,
        deadLetter: null,
      },
      { name: 'retrying', queue: 'q', id: '1', error: { name: 'Error', message: 'again' }, retryInSeconds: 30 },
      {
        name: 'failed',
        queue: 'q',
        id: '2',
        ...timing,
        error: { name: 'Error', message: 'done' },
        willRetry: false,
        retryInSeconds: null,
        deadLetter: 'dlq',
      },
    ]);
  });

  it("times an attempt's wait by the database's stamps and its run from the claim's answer", () => {
    const entry = attempt('8');
    const row = { ...entry.row, created_on: 10_000, start_after: 4_000, started_on: 12_500 };
    expect(timingOf({ ...entry, row, claimedAt: 50_000 }, 53_250)).toEqual({ waitSeconds: 2.5, runSeconds: 3.25 });
    // a deferred job waits from its startAfter; clocks a hair apart never give a negative duration
    const deferred = { ...row, start_after: 13_000 };
    expect(timingOf({ ...entry, row: deferred, claimedAt: 50_000 }, 49_990)).toEqual({ waitSeconds: 0, runSeconds: 0 });
  });

  it('emits nothing for an outcome the fence refused', async () => {
    const h = harness(() => []);
    h.listening.add('completed');
    await h.completer.settle(attempt('7'), null, null);
    expect(h.emitted).toEqual([]);
    expect(h.counted.stale).toBe(1);
  });
});
