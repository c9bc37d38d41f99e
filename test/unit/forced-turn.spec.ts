import { ForcedTurn } from '../../lib/core/passes/forced-turn.js';

/** A pass the test ends by hand, numbered in the order passes started. */
function passes() {
  const started: { n: number; end: (v: number) => void; fail: (e: Error) => void }[] = [];
  const pass = () =>
    new Promise<number>((end, fail) => {
      started.push({ n: started.length + 1, end, fail });
    });
  return { started, pass };
}

/** Lets settled promises run their callbacks (no timer: the microtask queue drains first). */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('a forced turn', () => {
  it('runs at once when none runs, and callers that come meanwhile share one pass queued behind it', async () => {
    const turn = new ForcedTurn<number>();
    const { started, pass } = passes();
    const first = turn.take(pass);
    const [second, third] = [turn.take(pass), turn.take(pass)];
    expect(started).toHaveLength(1);
    started[0]!.end(1);
    expect(await first).toBe(1);
    await settle();
    expect(started).toHaveLength(2);
    // a caller that comes while the queued pass runs gets a pass after it, not the one under way
    const fourth = turn.take(pass);
    started[1]!.end(2);
    expect(await Promise.all([second, third])).toEqual([2, 2]);
    await settle();
    expect(started).toHaveLength(3);
    started[2]!.end(3);
    expect(await fourth).toBe(3);
  });

  it('a pass that fails fails its own callers only; the one queued behind it runs', async () => {
    const turn = new ForcedTurn<number>();
    const { started, pass } = passes();
    const first = turn.take(pass);
    const second = turn.take(pass);
    started[0]!.fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    started[1]!.end(2);
    expect(await second).toBe(2);
    // idle again: the next caller starts a pass at once
    void turn.take(pass);
    expect(started).toHaveLength(3);
  });
});
