// expectSent's comparison of a job's data with what a test expects (lib/testing/match.ts): a partial deep match whose
// values may be tests of their own, and a message that says where the first difference lies.
import { mismatch, render } from '../../lib/testing/match.js';

describe("expectSent's data match", () => {
  it('matches an object on the keys it names, at any depth, and ignores the others', () => {
    const data = { userId: 'u1', plan: 'pro', address: { city: 'Lyon', zip: '69001' } };
    expect(mismatch(data, { userId: 'u1' })).toBeNull();
    expect(mismatch(data, { address: { city: 'Lyon' } })).toBeNull();
    expect(mismatch(data, {})).toBeNull();
  });

  it('names the path of the first difference, with what was expected and what was found', () => {
    const data = { user: { id: 'u2', 'first name': 'Ada' }, tags: ['a', 'b'] };
    expect(mismatch(data, { user: { id: 'u1' } })).toBe('data.user.id: expected "u1", received "u2"');
    expect(mismatch(data, { user: { 'first name': 'Grace' } })).toBe('data.user["first name"]: expected "Grace", received "Ada"');
    expect(mismatch(data, { tags: ['a', 'c'] })).toBe('data.tags[1]: expected "c", received "b"');
    expect(mismatch(data, { missing: 1 })).toBe('data.missing: expected 1, but the key is missing');
    expect(mismatch(data, { user: 'u2' })).toBe('data.user: expected "u2", received {"id":"u2","first name":"Ada"}');
  });

  it('compares arrays item by item and asks for the same length', () => {
    expect(mismatch([1, { a: 1, b: 2 }], [1, { a: 1 }])).toBeNull();
    expect(mismatch([1, 2, 3], [1, 2])).toBe('data: expected an array of 2 item(s), received [1,2,3]');
    expect(mismatch({ a: 1 }, [1])).toBe('data: expected [1], received {"a":1}');
  });

  it('compares other values by equality, types included', () => {
    expect(mismatch(1, 1)).toBeNull();
    expect(mismatch(null, null)).toBeNull();
    expect(mismatch('1', 1)).toBe('data: expected 1, received "1"');
    expect(mismatch({ n: null }, { n: 0 })).toBe('data.n: expected 0, received null');
    expect(mismatch(null, {})).toBe('data: expected {}, received null');
  });

  it('takes a key set to undefined as one that must be missing', () => {
    expect(mismatch({ a: 1 }, { b: undefined })).toBeNull();
    expect(mismatch({ a: 1, b: 2 }, { b: undefined })).toBe('data.b: expected no value, received 2');
  });

  it('runs the tests a shape may hold: functions, regular expressions, dates and asymmetric matchers', () => {
    const isEven = (v: unknown) => typeof v === 'number' && v % 2 === 0;
    expect(mismatch({ n: 4 }, { n: isEven })).toBeNull();
    expect(mismatch({ n: 3 }, { n: isEven })).toBe('data.n: 3 did not pass [Function isEven]');
    expect(
      mismatch(
        { n: 3 },
        {
          n: () => {
            throw new Error('boom');
          },
        },
      ),
    ).toBe('data.n: [Function n] threw boom on 3');
    expect(mismatch({ email: 'ada@example.com' }, { email: /@example\.com$/ })).toBeNull();
    expect(mismatch({ email: 'ada@example.org' }, { email: /@example\.com$/ })).toBe(
      'data.email: expected /@example\\.com$/, received "ada@example.org"',
    );
    expect(mismatch({ email: 42 }, { email: /42/ })).toBe('data.email: expected /42/, received 42');
    const at = new Date('2025-01-02T03:04:05.006Z');
    expect(mismatch({ at: '2025-01-02T03:04:05.006Z' }, { at })).toBeNull();
    expect(mismatch({ at: '2025-01-02' }, { at })).toBe('data.at: expected Date(2025-01-02T03:04:05.006Z), received "2025-01-02"');
    expect(mismatch({ id: 'u1', n: 1 }, { id: expect.any(String), n: expect.any(Number) })).toBeNull();
    expect(mismatch({ id: 1 }, { id: expect.any(String) })).toBe('data.id: expected Any<String>, received 1');
  });

  it('renders values and shapes on one line, cut at a length', () => {
    expect(render({ a: [1, 'x', null], re: /x/g, f: function named() {}, d: new Date(0) })).toBe(
      '{"a":[1,"x",null],"re":/x/g,"f":[Function named],"d":Date(1970-01-01T00:00:00.000Z)}',
    );
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(render(cyclic)).toBe('{"a":1,"self":[Circular]}');
    expect(render('x'.repeat(500), 20)).toBe(`"${'x'.repeat(18)}…`);
  });
});
