import { InvalidOptionError } from '../../lib/core/errors.js';
import { parseFindOptions } from '../../lib/core/jobs/finder.js';

describe("findJobs' options", () => {
  it('defaults: any state, no key, 100 jobs, from the newest', () => {
    expect(parseFindOptions(undefined)).toEqual({
      states: null,
      singletonKey: null,
      dedupeKey: null,
      limit: 100,
      after: null,
      maxBytes: 1024 * 1024,
      data: null,
    });
  });

  it('takes one state or several, the keys, a limit and the cursor of a page', () => {
    expect(parseFindOptions({ state: 'failed', singletonKey: 'k', dedupeKey: 'd', limit: 1000, after: '9223372036854775807' })).toEqual({
      states: ['failed'],
      singletonKey: 'k',
      dedupeKey: 'd',
      limit: 1000,
      after: '9223372036854775807',
      maxBytes: 1024 * 1024,
      data: null,
    });
    expect(parseFindOptions({ data: { type: 'email', to: { region: 'eu' } } }).data).toBe('{"type":"email","to":{"region":"eu"}}');
    expect(parseFindOptions({ state: ['created', 'retry'] }).states).toEqual(['created', 'retry']);
  });

  it.each([
    [{ state: 'done' }, 'options.state must be one of created, retry, active, completed, cancelled, failed, got "done"'],
    [{ state: ['failed', 7] }, 'options.state[1] must be one of'],
    [{ state: [] }, 'options.state must be a state or a non-empty array of states'],
    [{ limit: 0 }, 'options.limit'],
    [{ limit: 1001 }, 'options.limit'],
    [{ limit: 2.5 }, 'options.limit'],
    [{ maxBytes: 1000 }, 'options.maxBytes must be an integer'],
    [{ after: '0' }, 'options.after'],
    [{ after: '9223372036854775808' }, 'options.after'],
    [{ after: 12 }, 'options.after'],
    [{ singletonKey: '' }, 'options.singletonKey'],
    [{ order: 'asc' }, 'options.order'],
    [{ data: 'email' }, 'options.data must be a JSON object'],
    [{ data: [1] }, 'options.data must be a JSON object'],
    ['failed', 'options'],
  ])('refuses %j, naming the field', (options, message) => {
    expect(() => parseFindOptions(options)).toThrow(InvalidOptionError);
    expect(() => parseFindOptions(options)).toThrow(message);
  });
});
