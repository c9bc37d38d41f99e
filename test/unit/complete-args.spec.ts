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

  it('reads a third argument with a db that is a client or database as the options; a db of another kind is output', () => {
    const client = { query: () => undefined };
    const drizzle = { execute: () => undefined };
    expect(completeOutputAndOptions({ db: client }, undefined)).toEqual({ output: undefined, options: { db: client } });
    expect(completeOutputAndOptions({ db: drizzle, includeQueued: true }, undefined).options).toEqual({ db: drizzle, includeQueued: true });
    // pg-boss stores such an object as the job's output
    expect(completeOutputAndOptions({ db: 'orders' }, undefined)).toEqual({ output: { db: 'orders' }, options: undefined });
    expect(completeOutputAndOptions({ db: {} }, undefined)).toEqual({ output: { db: {} }, options: undefined });
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
