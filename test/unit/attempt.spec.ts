// An attempt's states and the moves between them, and the table that counts the slots attempts hold.
import { Attempt, Attempts } from '../../lib/core/worker/attempt/attempt.js';
import { claimedRow } from './claimed-row.js';

const row = (id: string, claimCount = 1) => claimedRow(id, { claim_count: claimCount });

describe('an attempt', () => {
  it('runs, then settles and is done; or is released and done; or is done at once', () => {
    const settled = new Attempt(row('1'), 0);
    expect(settled.state).toBe('running');
    settled.settle();
    expect(settled.state).toBe('settling');
    settled.finish();
    expect(settled.state).toBe('done');

    const released = new Attempt(row('2'), 0);
    released.release();
    expect([released.state, released.released]).toEqual(['released', true]);
    released.finish();
    expect([released.state, released.released]).toEqual(['done', false]);

    const broken = new Attempt(row('3'), 0);
    broken.finish();
    expect(broken.state).toBe('done');
  });

  it.each([
    ['settle twice', (a: Attempt) => (a.settle(), a.settle()), /from settling to settling/],
    ['release what is settling', (a: Attempt) => (a.settle(), a.release()), /from settling to released/],
    ['settle what was released', (a: Attempt) => (a.release(), a.settle()), /from released to settling/],
    ['release twice', (a: Attempt) => (a.release(), a.release()), /from released to released/],
    ['finish twice', (a: Attempt) => (a.finish(), a.finish()), /from done to done/],
    ['settle once done', (a: Attempt) => (a.finish(), a.settle()), /from done to settling/],
  ])('refuses to %s', (_, move, message) => {
    const attempt = new Attempt(row('7', 2), 0);
    expect(() => move(attempt)).toThrow(message);
    expect(() => move(new Attempt(row('7', 2), 0))).toThrow(/^attempt 7:2:1700000000000000 cannot go/);
  });

  it('keeps its lease from the claim, not from when it started', () => {
    expect(new Attempt(row('1'), 5_000).leaseEnd).toBe(35_000);
  });
});

describe("a worker's table of attempts", () => {
  it('counts the slots of running attempts as they settle, are released and finish', () => {
    const table = new Attempts();
    const [a, b, c] = ['1', '2', '3'].map((id) => table.begin(row(id), 0)) as [Attempt, Attempt, Attempt];
    expect([table.busy, table.size]).toEqual([3, 3]);
    table.settle(a);
    expect([table.busy, table.size]).toEqual([2, 3]);
    table.release(b);
    expect([table.busy, table.size, table.holds(b)]).toEqual([1, 2, false]);
    table.finish(a);
    table.finish(b);
    expect([table.busy, table.size]).toEqual([1, 1]);
    table.finish(c);
    expect([table.busy, table.size]).toEqual([0, 0]);
    expect([...table.values()]).toEqual([]);
  });

  it('leaves a newer attempt under the same key in place when the older one finishes', () => {
    const table = new Attempts();
    const older = table.begin(row('1'), 0);
    const newer = table.begin(row('1'), 0);
    expect(table.holds(older)).toBe(false);
    table.settle(older);
    table.finish(older);
    expect([table.busy, table.size, table.holds(newer)]).toEqual([1, 1, true]);
  });

  it('waits for every attempt in the table to finish', async () => {
    const table = new Attempts();
    const a = table.begin(row('1'), 0);
    let finish!: () => void;
    a.finished = new Promise((resolve) => (finish = resolve));
    let all = false;
    const waiting = table.allFinished().then(() => (all = true));
    await Promise.resolve();
    expect(all).toBe(false);
    finish();
    await waiting;
    expect(all).toBe(true);
  });
});
