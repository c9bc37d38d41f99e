// The dashboard's figures from what the sampler keeps: the per-second series, the tiles read from it, the count
// of retries, the queues nobody works, the live feed.
import {
  HISTORY_SECONDS,
  mergeFeed,
  recentFailures,
  RetryTally,
  secondsSeries,
  throughputOf,
  unworkedQueues,
  type DashboardQueue,
  type FeedEvent,
} from '../../lib/core/dashboard/model.js';

const until = 1_000_000_000;
const sec = (back: number) => until - back * 1000;

describe('the per-second series', () => {
  it('covers the last two minutes oldest first, with seconds never read as null', () => {
    const known = new Map([
      [sec(1), { completed: 5, failed: 1 }],
      [sec(120), { completed: 2, failed: 0 }],
      [sec(121), { completed: 99, failed: 99 }],
    ]);
    const series = secondsSeries(known, until);
    expect(series).toHaveLength(HISTORY_SECONDS);
    expect(series[0]).toEqual({ at: sec(120), completed: 2, failed: 0 });
    expect(series[119]).toEqual({ at: sec(1), completed: 5, failed: 1 });
    expect(series[60]).toEqual({ at: sec(60), completed: null, failed: null });
  });

  it('throughput averages the last ten seconds read; failures count the last 60 s read', () => {
    const known = new Map<number, { completed: number; failed: number }>();
    for (let back = 1; back <= 90; back++) known.set(sec(back), { completed: back <= 10 ? 20 : 1, failed: back <= 60 ? 1 : 0 });
    const series = secondsSeries(known, until);
    expect(throughputOf(series)).toBe(21);
    expect(recentFailures(series)).toEqual({ failed: 60, seconds: 60 });
    // nothing read yet: no figure, rather than a zero that would look measured
    expect(throughputOf(secondsSeries(new Map(), until))).toBeNull();
    expect(recentFailures(secondsSeries(new Map([[sec(3), { completed: 0, failed: 2 }]]), until))).toEqual({ failed: 2, seconds: 1 });
  });
});

describe('the retry tally', () => {
  it('counts each retried failure once, whichever state it was seen in, and forgets it after 60 s', () => {
    const t = new RetryTally();
    const now = 500_000;
    t.add('1', now - 1000, now);
    t.add('1', now - 1000, now); // seen again, running its retry
    t.add('1', now - 30_000, now); // an earlier failure of the same job
    t.add('2', now - 59_000, now);
    t.add('3', null, now);
    t.add('4', now - 61_000, now); // too old to count
    expect(t.count(now)).toBe(3);
    expect(t.count(now + 2000)).toBe(2);
    expect(t.count(now + 60_000)).toBe(0);
  });

  it('at its cap, makes room by forgetting what is too old before it turns a new failure away', () => {
    const now = 500_000;
    const t = new RetryTally(2);
    t.add('a', now - 59_000, now);
    t.add('b', now - 1000, now);
    t.add('c', now - 500, now); // full, and nothing is old yet: not kept
    expect(t.count(now)).toBe(2);
    t.add('d', now + 1500, now + 2000); // 'a' is now older than 60 s: it makes room
    expect(t.count(now + 2000)).toBe(2);
  });
});

describe('unworked queues and the feed', () => {
  const queue = (name: string, ready: number, loops: number, paused = false): DashboardQueue => ({
    name,
    policy: 'standard',
    paused,
    waiting: ready,
    waitingOver: false,
    ready,
    readyOver: false,
    running: 0,
    oldestReadySeconds: null,
    loops,
    tasks: [],
  });

  it('a queue is unworked when it has ready jobs, no live loop, and is not paused', () => {
    expect(unworkedQueues([queue('a', 3, 0), queue('b', 3, 1), queue('c', 0, 0), queue('d', 3, 0, true)])).toEqual(['a']);
  });

  it('keeps the newest events, newest first, each kind of each job once', () => {
    const e = (kind: FeedEvent['kind'], id: string, at: number): FeedEvent => ({ kind, id, queue: 'q', at });
    const older = [e('sent', '1', 10)];
    const merged = mergeFeed(older, [e('completed', '1', 30), e('sent', '2', 20), e('sent', '1', 10)], 3);
    expect(merged.map((x) => `${x.kind}:${x.id}`)).toEqual(['completed:1', 'sent:2', 'sent:1']);
    expect(mergeFeed(merged, [e('failed', '3', 40)], 3).map((x) => x.id)).toEqual(['3', '1', '2']);
  });
});
