import { PermanentJobError } from '../../lib/core/errors.js';
import { describeFailure } from '../../lib/core/worker.js';

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
});
