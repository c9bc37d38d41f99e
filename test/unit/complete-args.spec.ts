import { completeOutputAndOptions } from '../../lib/core/jobs/control.js';

describe("complete's output and options", () => {
  it("reads pg-boss's four arguments as they are", () => {
    expect(completeOutputAndOptions({ a: 1 }, { includeQueued: true })).toEqual({ output: { a: 1 }, options: { includeQueued: true } });
    expect(completeOutputAndOptions({ includeQueued: true }, {})).toEqual({ output: { includeQueued: true }, options: {} });
    expect(completeOutputAndOptions(undefined, undefined)).toEqual({ output: undefined, options: undefined });
  });

  it('reads a third argument with includeQueued as its only key, and no fourth, as the options', () => {
    expect(completeOutputAndOptions({ includeQueued: true }, undefined)).toEqual({ output: undefined, options: { includeQueued: true } });
    // a bad value still reaches the options' check, which names options.includeQueued
    expect(completeOutputAndOptions({ includeQueued: 'yes' }, undefined)).toEqual({ output: undefined, options: { includeQueued: 'yes' } });
    const bare = Object.assign(Object.create(null) as object, { includeQueued: false });
    expect(completeOutputAndOptions(bare, undefined).options).toBe(bare);
  });

  it('keeps as output anything else given third', () => {
    for (const output of [
      null,
      'includeQueued',
      ['includeQueued'],
      {},
      { includeQueued: true, other: 1 },
      { [Symbol('s')]: 1, includeQueued: true },
      Object.defineProperty({}, 'includeQueued', { value: true, enumerable: false }),
      new (class Out {
        includeQueued = true;
      })(),
    ])
      expect(completeOutputAndOptions(output, undefined)).toEqual({ output, options: undefined });
  });
});
