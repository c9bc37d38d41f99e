import { PermanentJobError } from '../../lib/core/errors.js';
import { describeFailure } from '../../lib/core/worker/index.js';

describe("what a failed attempt records about a handler's throw", () => {
  it('coerces anything thrown into an error, and retries it', () => {
    expect(describeFailure('plain text')).toMatchObject({
      error: { name: 'Error', message: 'plain text' },
      permanent: false,
      retryAfterSeconds: null,
    });
    expect(describeFailure({ reason: 'an object' }).error.message).toMatch(/^non-Error thrown: /);
    expect(describeFailure(undefined).error.message).toMatch(/^non-Error thrown: /);
    expect(describeFailure(new TypeError('typed'), 3).error).toMatchObject({ name: 'TypeError', message: 'typed', retryCount: 3 });
  });

  it('fails at once for PermanentJobError and for any error with retryable === false', () => {
    expect(describeFailure(new PermanentJobError('no')).permanent).toBe(true);
    expect(describeFailure(Object.assign(new Error('no'), { retryable: false })).permanent).toBe(true);
    expect(describeFailure(Object.assign(new Error('maybe'), { retryable: 'false' })).permanent).toBe(false);
  });

  it('takes retryAfterSeconds when it is a finite number from 0, rounded up and capped', () => {
    const after = (value: unknown) => describeFailure(Object.assign(new Error('later'), { retryAfterSeconds: value })).retryAfterSeconds;
    expect(after(2.1)).toBe(3);
    expect(after(0)).toBe(0);
    expect(after(1e12)).toBe(2_147_483_647);
    for (const ignored of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5', null]) expect(after(ignored)).toBeNull();
  });

  it('stores text jsonb accepts: NUL written out, lone surrogates replaced; at most 20 lines of stack', () => {
    const err = new Error('nul\u0000 and lone \ud800');
    err.stack = ['Error: x', ...Array.from({ length: 40 }, (_, i) => `    at frame${i}`)].join('\n');
    const { error } = describeFailure(err);
    expect(error.message).toBe('nul\\u0000 and lone \ufffd');
    expect(error.stack!.split('\n')).toHaveLength(20);
  });

  it("keeps an error's own fields and its cause, without letting a field replace the record's own", () => {
    const err = Object.assign(new Error('invalid order', { cause: new TypeError('bad total') }), {
      code: 'E_INVALID',
      statusCode: 422,
      details: [{ path: 'total', problem: 'negative' }],
      retryCount: 99,
    });
    const { error } = describeFailure(err, 2);
    expect(error).toMatchObject({
      name: 'Error',
      message: 'invalid order',
      retryCount: 2,
      code: 'E_INVALID',
      statusCode: 422,
      details: [{ path: 'total', problem: 'negative' }],
      cause: { name: 'TypeError', message: 'bad total' },
    });
    expect(error.thrown).toBeUndefined();
    expect(JSON.parse(JSON.stringify(error))).toEqual(error);
  });

  it('stores what is thrown when it is not an Error: a string and other values as they are, an object by its fields', () => {
    expect(describeFailure('plain text').error).toMatchObject({ message: 'plain text', thrown: 'string', value: 'plain text' });
    expect(describeFailure(42).error).toMatchObject({ message: 'non-Error thrown: 42', thrown: 'number', value: 42 });
    expect(describeFailure(undefined).error).toMatchObject({ thrown: 'undefined', value: null });
    expect(describeFailure([1, 'two']).error).toMatchObject({ thrown: 'array', value: [1, 'two'] });
    expect(describeFailure(new Map([['k', 1]])).error).toMatchObject({ thrown: 'object', value: [['k', 1]] });
    expect(describeFailure(Buffer.alloc(50_000_000)).error).toMatchObject({ value: '[Buffer of 50000000 bytes]' });
    const { error, permanent } = describeFailure({ name: 'OutOfStock', message: 'no stock left', sku: 'A-1', retryable: false });
    expect(error).toMatchObject({ name: 'OutOfStock', message: 'no stock left', sku: 'A-1', thrown: 'object' });
    expect(error.value).toBeUndefined();
    expect(permanent).toBe(true);
  });

  it('bounds what it keeps and makes it storable: long text, many fields, cycles, bigints, NaN, throwing getters', () => {
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    const many = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`f${i}`, 'x'.repeat(20)]));
    const err = Object.assign(new Error('bounded'), {
      long: 'y'.repeat(10_000),
      cyclic,
      big: 10n ** 30n,
      nan: Number.NaN,
      fn: () => undefined,
    });
    Object.defineProperty(err, 'trap', {
      enumerable: true,
      get: () => {
        throw new Error('no \u0000 \ud800');
      },
    });
    const { error } = describeFailure(Object.assign(err, many));
    expect((error.long as string).length).toBeLessThan(2_100);
    expect(error.cyclic).toEqual({ n: 1, self: '[Circular]' });
    expect(error.big).toBe('1000000000000000000000000000000');
    expect(error.nan).toBe('NaN');
    expect(error.fn).toBeUndefined();
    expect(error.trap).toBe('[could not be read: no \\u0000 \ufffd]');
    expect(error['…']).toMatch(/not stored/);
    expect(JSON.stringify(error).length).toBeLessThan(12_000);
  });

  it('never throws, whatever was thrown: throwing getters, Proxies, objects that only look like a Date', () => {
    const getter = (key: string) =>
      Object.defineProperty({}, key, {
        enumerable: true,
        get: () => {
          throw new Error(`${key} is a trap`);
        },
      });
    const errorWith = (key: string) =>
      Object.defineProperty(new Error('e'), key, {
        get: () => {
          throw new Error(`${key} is a trap`);
        },
      });
    const hostile: unknown[] = [
      ...['name', 'message', 'retryable', 'retryAfterSeconds'].map(getter),
      ...['name', 'message', 'stack', 'cause'].map(errorWith),
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('ownKeys');
          },
          get: () => {
            throw new Error('get');
          },
        },
      ),
      new Proxy([1, 2], {
        get: () => {
          throw new Error('index');
        },
      }),
      Object.create(Date.prototype),
      [errorWith('message')],
      new Error('with a bad cause', { cause: errorWith('name') }),
    ];
    for (const thrown of hostile) {
      const { error } = describeFailure(thrown, 1);
      expect(typeof error.message).toBe('string');
      expect(() => JSON.stringify(error)).not.toThrow();
    }
  });

  it('walks no more than it keeps: a 20 MB Buffer, a huge Map, a deep and wide cause, a long key, a long message', () => {
    let reads = 0;
    const wide = (depth: number): unknown =>
      depth === 0 ? 'z'.repeat(2_000) : Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, wide(depth - 1)]));
    const err = Object.assign(new Error('m'.repeat(100_000), { cause: wide(3) }), {
      body: Buffer.alloc(20 * 1024 * 1024),
      lookup: new Map(Array.from({ length: 100_000 }, (_, i) => [i, i])),
      ['q'.repeat(10_000)]: 1,
      small: 'kept',
      // counts what the walk reads of a 100,000-entry array
      counted: new Proxy(
        Array.from({ length: 100_000 }, (_, i) => i),
        {
          get: (target, key, receiver) => {
            reads++;
            return Reflect.get(target, key, receiver) as unknown;
          },
        },
      ),
    });
    // An own field named __proto__ (as JSON.parse makes one), which an assignment would take for the prototype.
    Object.defineProperty(err, '__proto__', { value: 'an own field of this name', enumerable: true });
    const { error } = describeFailure(err);
    expect(reads).toBeLessThan(200);
    expect((error.counted as unknown[]).length).toBe(51);
    expect(error.message.length).toBeLessThanOrEqual(8_001);
    expect(error.body).toBe('[Buffer of 20971520 bytes]');
    expect((error.lookup as unknown[]).length).toBe(51);
    expect(error.small).toBe('kept');
    expect(Object.getOwnPropertyDescriptor(error, '__proto__')?.value).toBe('an own field of this name');
    expect(Object.getPrototypeOf(error)).toBe(Object.prototype);
    expect(Object.keys(error).some((k) => k.startsWith('qqq') && k.length <= 201)).toBe(true);
    expect(JSON.stringify(error).length).toBeLessThan(40_000);
  });

  it('stores a value with toJSON as what it returns, and a Map or Set as its entries', () => {
    const amount = { toJSON: () => '12.50' };
    const { error } = describeFailure(Object.assign(new Error('x'), { amount, seen: new Set(['a']), byKey: new Map([['k', 1]]) }));
    expect(error).toMatchObject({ amount: '12.50', seen: ['a'], byKey: [['k', 1]] });
  });
});
