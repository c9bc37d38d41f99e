// update()/upsert() options: which jobs they name, and which fields change, as the statement is told them.
import { InvalidOptionError } from '../../lib/core/errors.js';
import { parseUpdateOptions } from '../../lib/core/jobs/update.js';

describe('update options', () => {
  it('names one job by id, or the jobs of a key with match newest by default', () => {
    expect(parseUpdateOptions({ id: '42' }, false)).toMatchObject({ id: '42', key: undefined, given: [] });
    expect(parseUpdateOptions({ singletonKey: 'k' }, false)).toMatchObject({ key: 'k', match: 'newest' });
    expect(parseUpdateOptions({ singletonKey: 'k', match: 'all' }, true)).toMatchObject({ key: 'k', match: 'all' });
  });

  it('lists only the fields given, by their send option names, with the values send() would bind', () => {
    const at = new Date('2030-01-01T00:00:00Z');
    const p = parseUpdateOptions(
      { id: '1', priority: 3, startAfter: at, retryDelayMax: null, group: { id: 'g' }, retryLimit: undefined },
      false,
    );
    expect(p.given.sort()).toEqual(['group', 'priority', 'retryDelayMax', 'startAfter']);
    expect(p.values).toMatchObject({ priority: 3, startAt: at, retryDelayMax: null, groupId: 'g' });
    expect(p.values.retryLimit).toBeUndefined();
    // startAfter in seconds; null starts now, as send() takes it
    expect(parseUpdateOptions({ id: '1', startAfter: 30 }, false).values).toMatchObject({ startIn: 30 });
    const now = parseUpdateOptions({ id: '1', startAfter: null }, false);
    expect(now.given).toEqual(['startAfter']);
    expect(now.values.startAt ?? now.values.startIn).toBeUndefined();
  });

  it("upsert keeps the options send() takes for its insert, and leaves the target's out of the change", () => {
    const p = parseUpdateOptions({ singletonKey: 'k', dedupeKey: 'd', match: 'oldest', priority: 1 }, true);
    expect(p.sendOptions).toEqual({ singletonKey: 'k', dedupeKey: 'd', priority: 1 });
    expect(p.given).toEqual(['priority']);
  });

  it.each<[unknown, boolean, string]>([
    [{}, false, 'options.id'],
    [{ id: '1', singletonKey: 'k' }, false, 'options'],
    [{ id: '01' }, false, 'options.id'],
    [{ id: '1', match: 'newest' }, false, 'options.match'],
    [{ id: '1', dedupeKey: 'd' }, false, 'options.dedupeKey'],
    [{ id: '1', singletonKey: 'k' }, true, 'options'],
    [{}, true, 'options.id'],
    [{ id: 'x1' }, true, 'options.id'],
    [{ id: '1', match: 'all' }, true, 'options.match'],
    [{ singletonKey: 'k', retentionSeconds: 0 }, true, 'options.retentionSeconds'],
    [[], false, 'options'],
  ])('%j (upsert %s) is refused naming %s', (options, upsert, field) => {
    let err: unknown;
    try {
      parseUpdateOptions(options, upsert);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as InvalidOptionError).field).toBe(field);
  });
});
