import { InvalidOptionError } from '../../lib/core/errors.js';
import { parseWorkOptions } from '../../lib/core/config/options.js';

describe('group limits in work options', () => {
  it("reads pg-boss's { default, tiers } beside this package's flat { default, tier: n }", () => {
    const pgBoss = parseWorkOptions({ concurrency: 5, localGroupConcurrency: { default: 1, tiers: { enterprise: 3 } } });
    const flat = parseWorkOptions({ concurrency: 5, localGroupConcurrency: { default: 1, enterprise: 3 } });
    expect(pgBoss.localGroupConcurrency).toEqual({ default: 1, tiers: { enterprise: 3 } });
    expect(flat.localGroupConcurrency).toEqual(pgBoss.localGroupConcurrency);
    expect(parseWorkOptions({ groupConcurrency: { tiers: { pro: 9 } } }).groupConcurrency).toEqual({ default: null, tiers: { pro: 9 } });
    // a tier named "tiers" with a number is a tier like any other
    expect(parseWorkOptions({ groupConcurrency: { tiers: 2 } }).groupConcurrency).toEqual({ default: null, tiers: { tiers: 2 } });
  });

  it('names the field of a bad limit inside tiers', () => {
    expect(() => parseWorkOptions({ concurrency: 2, localGroupConcurrency: { tiers: { pro: 3 } } })).toThrow(InvalidOptionError);
    expect(() => parseWorkOptions({ concurrency: 2, localGroupConcurrency: { tiers: { pro: 3 } } })).toThrow(
      'options.localGroupConcurrency.tiers.pro',
    );
  });
});

describe('localGroupConcurrency with batch', () => {
  it('counts jobs, up to concurrency × batchSize', () => {
    expect(parseWorkOptions({ batch: true, concurrency: 2, batchSize: 5, localGroupConcurrency: 10 }).localGroupConcurrency).toEqual({
      default: 10,
      tiers: {},
    });
    expect(() => parseWorkOptions({ batch: true, concurrency: 2, batchSize: 5, localGroupConcurrency: 11 })).toThrow(
      'from 1 to 10, got 11',
    );
    expect(() => parseWorkOptions({ concurrency: 2, batchSize: 5, localGroupConcurrency: 3 })).toThrow('from 1 to 2, got 3');
  });
});
