import { parseWake } from '../../lib/core/worker/notifier.js';
import { DueClock } from '../../lib/core/worker/due-clock.js';
import type { Statements } from '../../lib/core/sql/index.js';

describe('a wake-up payload', () => {
  it('is a queue name for a job that may run now, or a name, a space and the milliseconds until one is due', () => {
    expect(parseWake('mail')).toEqual({ queue: 'mail', dueInMs: 0 });
    expect(parseWake('a/b:c.d-e_f 1500')).toEqual({ queue: 'a/b:c.d-e_f', dueInMs: 1500 });
  });

  it('reads a time it cannot use as now: the worker claims, which costs one statement and loses nothing', () => {
    for (const odd of ['q -5', 'q 0', 'q x', 'q ']) expect(parseWake(odd)).toEqual({ queue: 'q', dueInMs: 0 });
  });
});

describe('what a due clock knows without reading', () => {
  // Never read here: the executor is not called by announce, expire and sleepFor.
  const clock = () =>
    new DueClock({
      exec: {
        query: () => {
          throw new Error('not read in these tests');
        },
      },
      statements: {} as Statements,
      queue: 'q',
    });

  it('sleeps for the polling interval when nothing is known, and until the earliest announced time otherwise', () => {
    const c = clock();
    expect(c.sleepFor(2_000)).toBe(2_000);
    expect(c.announce(60_000)).toBe(true);
    expect(c.sleepFor(2_000)).toBe(2_000);
    expect(c.announce(500)).toBe(true);
    expect(c.sleepFor(2_000)).toBeLessThanOrEqual(500);
  });

  it('keeps the earliest time: a later announcement changes nothing and does not re-arm a sleeping loop', () => {
    const c = clock();
    expect(c.announce(500)).toBe(true);
    expect(c.announce(900)).toBe(false);
    expect(c.sleepFor(2_000)).toBeLessThanOrEqual(500);
  });
});
