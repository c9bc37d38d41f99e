import { isDataException, SQLSTATE, sqlState } from '../../lib/core/runtime/pg-errors.js';

describe('reading SQLSTATE from anything thrown', () => {
  it("reads a database error's code, and nothing from errors or values that carry none", () => {
    expect(sqlState(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(SQLSTATE.uniqueViolation);
    expect(sqlState(new Error('Connection terminated unexpectedly'))).toBeUndefined();
    expect(sqlState({ code: 42 })).toBeUndefined();
    for (const thrown of [null, undefined, 'a string', 7]) expect(sqlState(thrown)).toBeUndefined();
  });

  it('tells a data exception (class 22) from every other class', () => {
    expect(isDataException({ code: '22P05' })).toBe(true); // untranslatable character (a NUL in JSON)
    expect(isDataException({ code: '22003' })).toBe(true);
    expect(isDataException({ code: '23505' })).toBe(false);
    expect(isDataException({ code: '57P01' })).toBe(false);
    expect(isDataException(new Error('no code'))).toBe(false);
    expect(isDataException(null)).toBe(false);
  });
});
