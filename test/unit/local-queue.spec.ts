// The local queue's modes and deadlines, on fake time: what starts, what is handed back, and how many jobs
// the loop may claim in each mode.
import { jest } from '@jest/globals';
import { LocalQueue, type LocalQueueOwner } from '../../lib/core/worker/intake/local-queue.js';
import { claimedRow } from './claimed-row.js';

const row = (id: string, expireSeconds = 10, heartbeatSeconds: number | null = null) =>
  claimedRow(id, { stamp: '1', expire_seconds: expireSeconds, heartbeat_seconds: heartbeatSeconds });

/** A worker as the local queue sees it: `busy` slots, and what it was asked to start and hand back. */
function owner(): LocalQueueOwner & { busy: number; started: string[]; handedBack: string[][] } {
  return {
    busy: 0,
    started: [],
    handedBack: [],
    start(r) {
      this.started.push(r.id);
      this.busy++;
    },
    expired(rows) {
      this.handedBack.push(rows.map((r) => r.id));
    },
  };
}

const options = { concurrency: 2, batchSize: 6, groupConcurrency: null };
const ids = (...n: number[]) => n.map(String);

/** A claim that goes out while a job waits and comes back full after the handlers ran the queue dry. */
function outrun(local: LocalQueue, o: ReturnType<typeof owner>, limit = 6): void {
  o.busy = 2; // both slots run: the pushed job waits
  local.push([row(`w${o.started.length}`)], Date.now());
  local.claimSent();
  o.busy = 0;
  local.dispatch(); // it starts on a freed slot: nothing waits
  local.claimReturned(limit, limit);
  o.busy = 0;
}

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

describe('the local queue', () => {
  it('starts a long run of handlers that return inside start() without nesting a call per job', () => {
    const o = owner();
    const local = new LocalQueue({ concurrency: 1, batchSize: 20_000, groupConcurrency: null }, o);
    let depth = 0;
    let deepest = 0;
    const start = o.start.bind(o);
    o.start = (r, claimedAt) => {
      depth++;
      deepest = Math.max(deepest, depth);
      start(r, claimedAt);
      o.busy--; // every handler throws synchronously: its slot frees and the worker dispatches again, inside start()
      local.dispatch();
      depth--;
    };
    local.push(
      Array.from({ length: 20_000 }, (_, i) => row(String(i))),
      Date.now(),
    );
    local.dispatch();
    expect(o.started).toHaveLength(20_000);
    expect(deepest).toBe(1);
    expect(local.length).toBe(0);
  });

  it('never starts more than `concurrency`, even when a handler returns inside start() and dispatch() re-enters', () => {
    const o = owner();
    const local = new LocalQueue(options, o);
    let most = 0;
    const start = o.start.bind(o);
    o.start = (r, claimedAt) => {
      start(r, claimedAt);
      most = Math.max(most, o.busy);
      if (r.id === '1') {
        // job 1's handler throws synchronously: its slot frees and the worker dispatches again, inside start()
        o.busy--;
        local.dispatch();
      }
    };
    local.push(
      ['1', '2', '3', '4', '5'].map((id) => row(id)),
      Date.now(),
    );
    local.dispatch();
    expect(most).toBe(2);
    expect(o.started).toEqual(ids(1, 2, 3));
    expect(local.length).toBe(2);
  });

  it('starts waiting jobs in claim order while slots are free, and more as slots free', () => {
    const o = owner();
    const local = new LocalQueue(options, o);
    local.push(
      ['1', '2', '3', '4'].map((id) => row(id)),
      Date.now(),
    );
    local.dispatch();
    expect(o.started).toEqual(ids(1, 2));
    expect(local.length).toBe(2);
    o.busy = 1;
    local.dispatch();
    expect(o.started).toEqual(ids(1, 2, 3));
    expect(local.mode).toBe('ahead');
  });

  it('lets the loop claim a batch ahead on a queue without limits, and only free slots on one with limits', () => {
    const local = new LocalQueue(options, owner());
    expect(local.room(false, 0, 0)).toBe(6);
    expect(local.room(false, 2, 3)).toBe(4);
    // Results waiting to be written count too: no more than the slots.
    expect(local.room(false, 0, 12)).toBe(0);
    expect(local.room(true, 0, 0)).toBe(2);
    expect(new LocalQueue({ ...options, groupConcurrency: { default: 1, tiers: {} } }, owner()).room(false, 0, 0)).toBe(2);
  });

  it('holds two claims once its handlers outran a full claim, and one again after a deadline hand-back', () => {
    const o = owner();
    const local = new LocalQueue(options, o);
    expect(local.room(false, 0, 0)).toBe(6);
    outrun(local, o);
    expect(local.room(false, 0, 0)).toBe(12);
    expect(local.room(false, 2, 3)).toBe(10);
    // results being written take room beyond one batch: two claims plus a batch of them in all
    expect(local.room(false, 0, 12)).toBe(6);
    expect(local.room(false, 0, 18)).toBe(0);
    expect(local.room(true, 0, 0)).toBe(2);
    o.busy = 2;
    local.push([row('late', 10)], Date.now());
    local.dispatch();
    jest.advanceTimersByTime(5_000);
    expect(o.handedBack).toEqual([['late']]);
    local.resume();
    expect(local.mode).toBe('ahead');
    expect(local.room(false, 0, 0)).toBe(6);
  });

  it('holds one claim when the claim came back short, found jobs still waiting, or met a hand-back on its way', () => {
    const o = owner();
    const local = new LocalQueue(options, o);
    outrun(local, o);
    local.claimSent();
    local.claimReturned(2, 6); // the queue is drained: nothing to hold ahead
    expect(local.room(false, 0, 0)).toBe(6);
    // jobs still wait when it returns: the handlers did not run dry
    o.busy = 2;
    local.push([row('a', 100), row('b', 100)], Date.now());
    local.claimSent();
    local.claimReturned(6, 6);
    expect(local.room(false, 0, 0)).toBe(4);
    // a hand-back empties the queue while the next claim is out: the handlers were slow, not fast
    local.claimSent();
    local.dispatch();
    jest.advanceTimersByTime(50_000);
    expect(o.handedBack).toEqual([['a', 'b']]);
    local.resume();
    o.busy = 0;
    local.claimReturned(6, 6);
    expect(local.room(false, 0, 0)).toBe(6);
  });

  it('never holds two claims where a batch fits the slots, or while paused', () => {
    const o = owner();
    const even = new LocalQueue({ ...options, batchSize: 2 }, o);
    outrun(even, o, 2);
    expect(even.room(false, 0, 0)).toBe(2);
    const p = owner();
    p.busy = 2;
    const local = new LocalQueue(options, p);
    local.push([row('1', 10)], Date.now());
    local.claimSent();
    local.dispatch();
    jest.advanceTimersByTime(5_000);
    expect(local.mode).toBe('paused');
    p.busy = 0;
    local.claimReturned(6, 6);
    local.resume();
    expect(local.room(false, 0, 0)).toBe(6);
  });

  it('hands back the jobs that waited half their lease and pauses claiming ahead until a handler returns', () => {
    const o = owner();
    const local = new LocalQueue({ ...options, concurrency: 1 }, o);
    local.push(
      ['1', '2', '3'].map((id) => row(id, 10)),
      Date.now(),
    );
    local.dispatch();
    expect(o.started).toEqual(ids(1));
    jest.advanceTimersByTime(4_999);
    expect(o.handedBack).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(o.handedBack).toEqual([ids(2, 3)]);
    expect(local.mode).toBe('paused');
    expect(local.length).toBe(0);
    expect(local.room(false, 1, 1)).toBe(0);
    local.resume();
    expect(local.mode).toBe('ahead');
    expect(local.room(false, 1, 1)).toBe(5);
  });

  it('holds each job to its own deadline: half its heartbeat interval when that is shorter than its lease', () => {
    const o = owner();
    o.busy = 2;
    const local = new LocalQueue(options, o);
    local.push([row('slow', 60), row('beating', 60, 4)], Date.now());
    local.dispatch();
    jest.advanceTimersByTime(2_000);
    expect(o.handedBack).toEqual([['beating']]);
    expect(local.length).toBe(1);
    jest.advanceTimersByTime(27_999);
    expect(o.handedBack).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(o.handedBack).toEqual([['beating'], ['slow']]);
  });

  it('arms a timer again for a job whose deadline falls where an earlier, cleared one was', () => {
    const o = owner();
    o.busy = 2;
    const local = new LocalQueue(options, o);
    local.push([row('1')], Date.now());
    local.dispatch();
    o.busy = 1;
    local.dispatch();
    expect(o.started).toEqual(ids(1));
    local.push([row('2')], Date.now());
    local.dispatch();
    jest.advanceTimersByTime(5_000);
    expect(o.handedBack).toEqual([ids(2)]);
  });

  it('gives every waiting job back at stop, and then starts nothing, takes nothing and hands nothing back', () => {
    const o = owner();
    o.busy = 2;
    const local = new LocalQueue(options, o);
    local.push(
      ['1', '2'].map((id) => row(id)),
      Date.now(),
    );
    local.dispatch();
    expect(local.stop().map((r) => r.id)).toEqual(ids(1, 2));
    expect(local.mode).toBe('stopped');
    o.busy = 0;
    local.dispatch();
    local.resume();
    jest.advanceTimersByTime(60_000);
    expect(o.started).toEqual([]);
    expect(o.handedBack).toEqual([]);
    expect(local.mode).toBe('stopped');
    expect(() => local.push([row('3')], Date.now())).toThrow(/stopped/);
  });
});
