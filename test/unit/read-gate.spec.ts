import { OperatorBusyError } from '../../lib/core/errors.js';
import { operatorGate, ReadGate } from '../../lib/core/http/read-gate.js';

/** A call that runs until `release()`. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { release, run: () => done };
}

describe('the operators’ gate', () => {
  it('runs at most max calls at once; the next ones run in turn as those end', async () => {
    const gate = new ReadGate(2, 5_000, 10);
    const a = held();
    const b = held();
    const order: string[] = [];
    const first = gate.run(() => a.run().then(() => order.push('a')));
    const second = gate.run(() => b.run().then(() => order.push('b')));
    let thirdRan = false;
    const third = gate.run(async () => {
      thirdRan = true;
      order.push('c');
    });
    await Promise.resolve();
    expect(thirdRan).toBe(false);
    b.release();
    await second;
    await third;
    expect(order).toEqual(['b', 'c']);
    a.release();
    await first;
  });

  it('a call that waits past the timeout, or finds too many waiting, is refused with OperatorBusyError (503)', async () => {
    const gate = new ReadGate(1, 50, 1);
    const a = held();
    const running = gate.run(a.run);
    const waiting = gate.run(async () => 'late');
    await expect(gate.run(async () => 'full')).rejects.toThrow(OperatorBusyError);
    await expect(waiting).rejects.toMatchObject({ code: 'OPERATOR_BUSY', running: 1 });
    a.release();
    await running;
    // the turn freed by the refused waiter is not lost
    expect(await gate.run(async () => 'next')).toBe('next');
  });

  it('a failing call frees its turn', async () => {
    const gate = new ReadGate(1, 1_000, 1);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 1)).toBe(1);
  });

  it('one gate per engine, a quarter of its pool rounded up', () => {
    const engine = {};
    expect(operatorGate(engine, 10)).toBe(operatorGate(engine, 10));
    expect(operatorGate(engine, 10).max).toBe(3);
    expect(operatorGate({}, 1).max).toBe(1);
    expect(operatorGate({}, 40).max).toBe(10);
  });
});
