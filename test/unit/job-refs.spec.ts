import { InvalidOptionError } from '../../lib/core/errors.js';
import { isJobId, parseRefs } from '../../lib/core/jobs/refs.js';

describe('job ids given to the calls by hand', () => {
  it('accepts positive bigints as strings of digits, up to the largest bigint', () => {
    expect(['1', '42', '9223372036854775807'].every(isJobId)).toBe(true);
    expect(['0', '01', '-1', '1.5', '', ' 1', '9223372036854775808', '99999999999999999999'].some(isJobId)).toBe(false);
    expect([1, 1n, null, undefined, {}].some(isJobId)).toBe(false);
  });

  it('parses one id, many, and { id, retryCount } attempts', () => {
    expect(parseRefs('7')).toEqual([{ id: '7', retryCount: null }]);
    expect(parseRefs(['7', { id: '8', retryCount: 2 }])).toEqual([
      { id: '7', retryCount: null },
      { id: '8', retryCount: 2 },
    ]);
  });

  it('names the field, the accepted range and the value of a bad id', () => {
    expect(() => parseRefs([])).toThrow(new InvalidOptionError('ids', 'at least one job id', []));
    expect(() => parseRefs(['7', 'x'])).toThrow(
      /^ids\[1\] must be a job id \(a string of digits from 1 to 9223372036854775807\) or \{ id, retryCount \}, got "x"$/,
    );
    expect(() => parseRefs(7 as unknown as string)).toThrow(/^id must be a job id/);
    expect(() => parseRefs([{ id: '8', retryCount: -1 }])).toThrow(/^ids\[0\]\.retryCount must be an integer >= 0, got -1$/);
  });
});
