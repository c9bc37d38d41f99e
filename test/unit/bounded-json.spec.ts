import { boundedJson, Unrenderable } from '../../lib/dashboard/bounded-json.js';

describe('boundedJson', () => {
  it('writes what JSON.stringify(value, null, 2) writes when it fits', () => {
    const values: unknown[] = [
      null,
      1.5,
      'x"y\n',
      [],
      {},
      [1, 'a', null, [2, { b: [] }]],
      { a: 1, b: { c: [true, false] }, d: undefined, e: () => 1, f: new Date(0), g: [undefined, () => 1], h: NaN },
      { toJSON: () => ({ inner: 1 }) },
    ];
    for (const v of values) expect(boundedJson(v, 10_000)).toEqual({ text: JSON.stringify(v, null, 2), cut: false });
    expect(boundedJson(undefined, 100)).toEqual({ text: undefined, cut: false });
    expect(boundedJson(() => 1, 100)).toEqual({ text: undefined, cut: false });
  });

  it('stops at max characters, never converting a long string in full', () => {
    const big = { list: Array.from({ length: 100_000 }, (_, i) => ({ i, s: 'x'.repeat(100) })), tail: 'y'.repeat(50_000_000) };
    const { text, cut } = boundedJson(big, 1000);
    expect(cut).toBe(true);
    expect(text!.length).toBe(1000);
    expect(text).toBe(JSON.stringify(big, null, 2).slice(0, 1000));
    const long = boundedJson('z'.repeat(30_000_000), 64);
    expect(long).toEqual({ text: `"${'z'.repeat(63)}`, cut: true });
  });

  it('refuses what JSON.stringify refuses: cycles and BigInts', () => {
    const cycle: { self?: unknown } = {};
    cycle.self = cycle;
    expect(() => boundedJson(cycle, 100)).toThrow(Unrenderable);
    expect(() => boundedJson({ n: 1n }, 100)).toThrow('BigInt');
    // the same object twice, not inside itself, is no cycle
    const shared = { a: 1 };
    expect(boundedJson([shared, shared], 100).text).toBe(JSON.stringify([shared, shared], null, 2));
  });
});
