// Which loop a stop call comes from, read off its async stack (lib/core/worker/loop-frame.ts).
import { callingFrames, loopFrame } from '../../lib/core/worker/loop-frame.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

class Billing {
  async charge(): Promise<ReturnType<typeof callingFrames>> {
    await tick();
    return callingFrames();
  }
}

describe('callingFrames', () => {
  it('finds the loop whose frame the call runs under, across awaits, and the Class.method frames on the way', async () => {
    // as a loop runs a handler: awaiting it; the handler returns a promise it does not await itself
    const handler = async () => {
      await tick();
      return new Billing().charge();
    };
    const run = loopFrame('loop-a', async () => {
      const seen = await handler();
      return seen;
    });
    const seen = await run();
    expect(seen.loops).toEqual(['loop-a']);
    expect(seen.frames).toContain('Billing.charge');
  });

  it('finds no loop for a call made outside every loop frame', async () => {
    await tick();
    expect(callingFrames().loops).toEqual([]);
  });

  it('leaves Error as it found it', async () => {
    const limit = Error.stackTraceLimit;
    const prepare: unknown = Reflect.get(Error, 'prepareStackTrace');
    await loopFrame('loop-b', async () => callingFrames())();
    expect(Error.stackTraceLimit).toBe(limit);
    expect(Reflect.get(Error, 'prepareStackTrace')).toBe(prepare);
  });

  it('with Error read-only (frozen intrinsics), finds nothing and throws nothing', async () => {
    const prepare = Object.getOwnPropertyDescriptor(Error, 'prepareStackTrace');
    const limit = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
    Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: true });
    Object.defineProperty(Error, 'stackTraceLimit', { value: 10, writable: false, configurable: true });
    try {
      const seen = await loopFrame('loop-c', async () => {
        await tick();
        return callingFrames();
      })();
      expect(seen).toEqual({ loops: [], frames: [] });
    } finally {
      if (prepare) Object.defineProperty(Error, 'prepareStackTrace', prepare);
      else Reflect.deleteProperty(Error, 'prepareStackTrace');
      if (limit) Object.defineProperty(Error, 'stackTraceLimit', limit);
    }
  });
});
