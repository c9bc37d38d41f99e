// toJson and optKey, without a database: what PostgreSQL's text and jsonb cannot take is refused before it is sent.
// (test/security/bad-input.spec.ts sends the same through the engine and checks that nothing was written.)
import { InvalidOptionError, InvalidPayloadError, PayloadTooLargeError } from '../../lib/core/errors.js';
import { MAX_PAYLOAD_DEPTH, optKey, toJson } from '../../lib/core/config/validate.js';

function nested(levels: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

const refusal = (f: () => unknown): Error => {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing was thrown');
};

describe('toJson', () => {
  it(`accepts ${MAX_PAYLOAD_DEPTH} levels of arrays and objects, and refuses one more, naming the field, the limit and where`, () => {
    expect(JSON.parse(toJson('data', nested(MAX_PAYLOAD_DEPTH))!)).toEqual(nested(MAX_PAYLOAD_DEPTH));
    const err = refusal(() => toJson('data', { a: nested(MAX_PAYLOAD_DEPTH) }));
    expect(err).toBeInstanceOf(InvalidPayloadError);
    expect(err).toMatchObject({ field: 'data' });
    expect(err.message).toBe(
      `data must be JSON nested at most ${MAX_PAYLOAD_DEPTH} levels deep (arrays and objects), got deeper nesting at a.k.0.k.0.k.0.k… (999 keys down)`,
    );
  });

  it('refuses a payload far too deep for the stack with the same typed error, not a RangeError', () => {
    expect(refusal(() => toJson('data', nested(200_000)))).toBeInstanceOf(InvalidPayloadError);
    expect(refusal(() => toJson('data', { toJSON: () => nested(200_000) }))).toBeInstanceOf(InvalidPayloadError);
  });

  it('a NaN at the deepest level allowed is named as a NaN, not as depth', () => {
    expect(refusal(() => toJson('data', nested(MAX_PAYLOAD_DEPTH, Number.NaN))).message).toMatch(/got NaN at /);
  });

  it('refuses a NUL or a lone surrogate that a toJSON returns, and not a backslash followed by u0000 as text', () => {
    expect(refusal(() => toJson('data', { d: { toJSON: () => 'x\u0000' } })).message).toMatch(/NUL character .* toJSON\(\)/);
    expect(refusal(() => toJson('data', { d: { toJSON: () => ({ s: '\udc00' }) } }))).toBeInstanceOf(InvalidPayloadError);
    expect(toJson('data', { d: { toJSON: () => 'a\\u0000 and \\ud800' } })).toBe('{"d":"a\\\\u0000 and \\\\ud800"}');
    expect(toJson('data', { d: { toJSON: () => '😀' } })).toBe('{"d":"😀"}');
    expect(toJson('data', { when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}');
  });

  it('turns a toJSON that throws or returns a BigInt into a typed error', () => {
    expect(refusal(() => toJson('data', { d: { toJSON: () => 10n } }))).toBeInstanceOf(InvalidPayloadError);
    expect(
      refusal(() =>
        toJson('data', {
          d: {
            toJSON: () => {
              throw new Error('no');
            },
          },
        }),
      ).message,
    ).toMatch(/JSON.stringify refused \(no\)/);
  });

  it('still measures the bytes once, after the checks', () => {
    expect(refusal(() => toJson('data', 'é'.repeat(10), 20))).toBeInstanceOf(PayloadTooLargeError);
  });
});

describe('optKey', () => {
  it('refuses a NUL and a lone surrogate, naming the field and the value', () => {
    const err = refusal(() => optKey('options.singletonKey', 'a\u0000b'));
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.message).toBe(
      'options.singletonKey must be text without NUL characters (\\u0000) or lone UTF-16 surrogates, got "a\\u0000b"',
    );
    expect(refusal(() => optKey('k', '\ud800'))).toBeInstanceOf(InvalidOptionError);
    expect(optKey('k', 'ok 😀')).toBe('ok 😀');
  });
});
