// The bookkeeping of an engine's loops (lib/core/worker/loop-table.ts) against fake loops whose drains the test
// ends by hand: what is held, what may start again, and how long a stopping loop stays listed.
import { LoopTable, type TableDefinition, type TableLoop } from '../../lib/core/worker/loop-table.js';

/** A loop whose drain ends when the test says (`finish`), or fails (`fail`). */
class FakeLoop implements TableLoop {
  stoppedWith: number | null = null;
  finish!: () => void;
  fail!: (err: Error) => void;
  private readonly drain = new Promise<void>((resolve, reject) => {
    this.finish = resolve;
    this.fail = reject;
  });
  constructor(
    readonly id: string,
    readonly queue: string,
  ) {}
  stop(timeoutMs: number): Promise<void> {
    this.stoppedWith = timeoutMs;
    return this.drain;
  }
}

const def = (id: string, name: string): TableDefinition => ({ id, name });
const ids = (loops: Iterable<TableLoop>) => [...loops].map((l) => l.id);
/** Lets the drains' callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function table(holdAll = false) {
  const failures: string[] = [];
  let changes = 0;
  const t = new LoopTable<FakeLoop, TableDefinition>(
    holdAll,
    (err, loop) => failures.push(`${loop.id}: ${(err as Error).message}`),
    () => changes++,
  );
  return { t, failures, changes: () => changes };
}

describe('the loop table', () => {
  it('holds every queue when made holding all, and releases one queue or all', () => {
    const { t } = table(true);
    expect(t.isHeld('a')).toBe(true);
    const a = def('1', 'a');
    const b = def('2', 'b');
    t.keep(a);
    t.keep(b);
    expect(t.heldQueueNames()).toEqual(['a', 'b']);
    expect(t.release('a')).toEqual([a]);
    expect(t.isHeld('a')).toBe(false);
    expect(t.isHeld('b')).toBe(true);
    expect(t.release(undefined)).toEqual([a, b]);
    expect(t.isHeld('b')).toBe(false);
  });

  it('holding a queue holds the definitions of its running loops, not of its stopping ones or of other queues', () => {
    const { t } = table();
    const a1 = new FakeLoop('1', 'a');
    const a2 = new FakeLoop('2', 'a');
    const b = new FakeLoop('3', 'b');
    const defs = { a1: def('1', 'a'), a2: def('2', 'a'), b: def('3', 'b') };
    t.add(a1, defs.a1);
    t.add(a2, defs.a2);
    t.add(b, defs.b);
    t.halt((l) => l === a2, 100);
    t.hold('a');
    expect(t.release('a')).toEqual([defs.a1]);
  });

  it('a queue released while every queue is held stays released until all are held again', () => {
    const { t } = table(true);
    t.release('a');
    expect(t.isHeld('a')).toBe(false);
    t.hold(undefined);
    expect(t.isHeld('a')).toBe(true);
  });

  it('a definition is startable while held on a released queue, and no longer once started or forgotten', () => {
    const { t } = table();
    const a = def('1', 'a');
    t.hold('a');
    t.keep(a);
    expect(t.startable(a)).toBe(false);
    t.release('a');
    expect(t.startable(a)).toBe(true);
    t.unhold(a);
    expect(t.startable(a)).toBe(false);
    t.keep(a);
    t.forget((d) => d.name === 'a');
    expect(t.startable(a)).toBe(false);
    expect(t.heldQueueNames()).toEqual([]);
  });

  it('a stopping loop stays listed, with its drain, until the drain ends', async () => {
    const { t, changes } = table();
    const loop = new FakeLoop('1', 'a');
    const a = def('1', 'a');
    t.add(loop, a);
    expect(changes()).toBe(0); // reported by the owner once the loop has started
    t.halt(() => true, 250);
    expect(loop.stoppedWith).toBe(250);
    expect(ids(t.all())).toEqual(['1']);
    expect(ids(t.running())).toEqual([]);
    expect(t.drainsOf([a])).toHaveLength(1);
    expect(t.drains((l) => l.queue === 'b')).toHaveLength(0);
    expect(t.definitionOf('1')).toBe(a);
    loop.finish();
    await Promise.all(t.drains(() => true));
    await settle();
    expect(t.size).toBe(0);
    expect(t.definitionOf('1')).toBeUndefined();
    expect(t.drainsOf([a])).toHaveLength(0);
    expect(changes()).toBe(1);
  });

  it('halts a loop once however often it is asked', () => {
    const { t } = table();
    const loop = new FakeLoop('1', 'a');
    t.add(loop, def('1', 'a'));
    t.halt(() => true, 100);
    t.halt(() => true, 999);
    expect(loop.stoppedWith).toBe(100);
    expect(t.drains(() => true)).toHaveLength(1);
  });

  it('a drain that fails is reported and still ends: nobody awaiting it sees a rejection', async () => {
    const { t, failures } = table();
    const loop = new FakeLoop('1', 'a');
    t.add(loop, def('1', 'a'));
    t.halt(() => true, 100);
    const [drained] = t.drains(() => true);
    loop.fail(new Error('boom'));
    await expect(drained).resolves.toBeUndefined();
    await settle();
    expect(failures).toEqual(['1: boom']);
    expect(t.size).toBe(0);
  });

  it('lists a held definition by its queue once, sorted', () => {
    const { t } = table(true);
    t.keep(def('1', 'b'));
    t.keep(def('2', 'a'));
    t.keep(def('3', 'b'));
    expect(t.heldQueueNames()).toEqual(['a', 'b']);
  });

  it('tells of each change the cluster registry shows: a definition kept held, started again, a drain ended', async () => {
    const { t, changes } = table(true);
    const a = def('1', 'a');
    t.keep(a);
    expect(changes()).toBe(1);
    t.release('a');
    t.unhold(a);
    expect(changes()).toBe(2);
    expect(t.heldQueueNames()).toEqual([]);
    const loop = new FakeLoop('1', 'a');
    t.add(loop, a);
    t.halt(() => true, 10);
    expect(changes()).toBe(2);
    loop.finish();
    await Promise.all(t.drains(() => true));
    await settle();
    expect(changes()).toBe(3);
  });

  it('forgets every held definition when asked with no pick (stopWorkers, close)', () => {
    const { t } = table(true);
    t.keep(def('1', 'a'));
    t.keep(def('2', 'b'));
    t.forget();
    expect(t.heldQueueNames()).toEqual([]);
    expect(t.release(undefined)).toEqual([]);
  });
});
