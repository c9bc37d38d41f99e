// The lease clock on fake time: one sweep timer for the soonest lease, and one heartbeat statement per tick
// for every running attempt that has a heartbeat.
import { jest } from '@jest/globals';
import { buildStatements } from '../../lib/core/sql/index.js';
import { Attempts, type Attempt } from '../../lib/core/worker/attempt/attempt.js';
import { LeaseClock } from '../../lib/core/worker/lease-clock.js';
import type { ClaimedRow } from '../../lib/core/worker/intake/claim.js';
import { claimedRow } from './claimed-row.js';

const statements = buildStatements('"s"');

const row = (id: string, expireSeconds: number, heartbeatSeconds: number | null = null) =>
  claimedRow(id, { stamp: `17${id}`, expire_seconds: expireSeconds, heartbeat_seconds: heartbeatSeconds });

/** A clock over a table of attempts; the fake database holds the attempts whose ids are in `held`. */
function harness(held: Set<string>, refreshSeconds: number | null = null) {
  const attempts = new Attempts();
  const expired: string[] = [];
  const beats: string[][] = [];
  const clock = new LeaseClock(
    {
      exec: {
        async query<R>(text: string, args: unknown[] = []): Promise<R[]> {
          expect(text).toBe(statements.heartbeatJobs);
          const ids = args[1] as string[];
          beats.push(ids);
          return ids.filter((id) => held.has(id)).map((id) => ({ id, claim_count: 1, stamp: `17${id}` })) as R[];
        },
      },
      statements,
      queue: 'q',
      workerId: 'w1',
      error: (err) => {
        throw err;
      },
    },
    attempts,
    (attempt) => {
      expired.push(attempt.row.id);
      attempts.release(attempt);
    },
    refreshSeconds,
  );
  const begin = (r: ClaimedRow): Attempt => {
    const attempt = attempts.begin(r, Date.now());
    clock.track(attempt);
    return attempt;
  };
  return { attempts, clock, expired, beats, begin };
}

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

describe('the lease clock', () => {
  it('expires each running attempt when its lease runs out, and skips one whose handler returned', async () => {
    const h = harness(new Set());
    h.begin(row('short', 1));
    const returned = h.begin(row('returned', 2));
    h.begin(row('long', 5));
    h.attempts.settle(returned);
    jest.advanceTimersByTime(999);
    expect(h.expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(h.expired).toEqual(['short']);
    jest.advanceTimersByTime(4_000);
    expect(h.expired).toEqual(['short', 'long']);
    await h.clock.stop();
  });

  it('brings the sweep forward for an attempt with a shorter lease than the armed one', async () => {
    const h = harness(new Set());
    h.begin(row('long', 10));
    h.begin(row('short', 1));
    jest.advanceTimersByTime(1_000);
    expect(h.expired).toEqual(['short']);
    await h.clock.stop();
  });

  it('sends one heartbeat for all running attempts every third of the shortest interval, and aborts those no longer held', async () => {
    const h = harness(new Set(['a']));
    const a = h.begin(row('a', 60, 30));
    const b = h.begin(row('b', 60, 6));
    h.begin(row('none', 60));
    await jest.advanceTimersByTimeAsync(1_999);
    expect(h.beats).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.beats).toEqual([['a', 'b']]);
    expect([a.abort.aborted, b.abort.aborted]).toEqual([false, true]);
    await h.clock.stop();
  });

  it('with heartbeatRefreshSeconds ticks that often, but at least every half of the shortest heartbeat interval', async () => {
    const h = harness(new Set(['a', 'b']), 5);
    h.begin(row('a', 600, 300));
    await jest.advanceTimersByTimeAsync(4_999);
    expect(h.beats).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.beats).toEqual([['a']]);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(h.beats).toHaveLength(2);
    // a job whose heartbeat is shorter than twice the refresh is kept at half its interval: its contract wins
    h.begin(row('b', 600, 6));
    await jest.advanceTimersByTimeAsync(2_999);
    expect(h.beats).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.beats[2]).toEqual(['a', 'b']);
    await h.clock.stop();
  });

  it('stops both timers at stop', async () => {
    const h = harness(new Set(['a']));
    h.begin(row('a', 1, 3));
    await h.clock.stop();
    await jest.advanceTimersByTimeAsync(10_000);
    expect([h.expired, h.beats]).toEqual([[], []]);
  });
});
