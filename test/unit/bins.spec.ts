import { InvalidOptionError } from '../../lib/core/errors.js';
import { addBins, BIN_COUNT, BIN_RATIO, binLowerEdge, binOf, percentile } from '../../lib/core/stats/bins.js';

/** A histogram with `counts` at the given bins and zeros elsewhere. */
function histogram(counts: Record<number, number>): number[] {
  return Array.from({ length: BIN_COUNT }, (_, k) => counts[k] ?? 0);
}

describe('the 48 bins', () => {
  it('start under 10 ms, grow about 1.4 times each, and end beyond a day', () => {
    expect(binLowerEdge(0)).toBe(0);
    expect(binLowerEdge(1)).toBe(0.01);
    expect(binLowerEdge(BIN_COUNT - 1)).toBeCloseTo(86_400, 6);
    expect(BIN_RATIO).toBeGreaterThan(1.41);
    expect(BIN_RATIO).toBeLessThan(1.42);
    for (let k = 2; k < BIN_COUNT - 1; k++) expect(binLowerEdge(k + 1) / binLowerEdge(k)).toBeCloseTo(BIN_RATIO, 9);
  });

  it('put a duration in the bin whose edges hold it', () => {
    expect(binOf(0)).toBe(0);
    expect(binOf(0.0099)).toBe(0);
    expect(binOf(0.01)).toBe(1);
    expect(binOf(0.014)).toBe(1); // below 0.01 × 1.415
    expect(binOf(0.015)).toBe(2);
    expect(binOf(1)).toBe(14); // 0.01 × 1.415^13 = 0.905, × 1.415 = 1.28
    expect(binOf(86_399)).toBe(BIN_COUNT - 2);
    expect(binOf(86_400)).toBe(BIN_COUNT - 1); // a day, exactly: the last bin's lower edge
    expect(binOf(86_401)).toBe(BIN_COUNT - 1);
    expect(binOf(10 * 86_400)).toBe(BIN_COUNT - 1);
    // a negative or unreadable duration (clocks, a job with no start) lands in the first bin, never outside
    expect(binOf(-3)).toBe(0);
    expect(binOf(Number.NaN)).toBe(0);
    for (let k = 1; k < BIN_COUNT; k++) {
      expect(binOf(binLowerEdge(k))).toBe(k);
      expect(binOf(binLowerEdge(k) * 1.0001)).toBe(k);
      expect(binOf(binLowerEdge(k) * 0.9999)).toBe(k - 1);
    }
  });
});

describe('addBins', () => {
  it('adds bin by bin, a null bin or histogram counting as empty', () => {
    expect(addBins([1, null, 3], [4, 5, null])).toEqual([5, 5, 3]);
    expect(addBins(null, [1, 2])).toEqual([1, 2]);
    expect(addBins([1, 2], null)).toEqual([1, 2]);
    expect(addBins(null, null)).toBeNull();
  });

  it('refuses histograms of different lengths', () => {
    expect(() => addBins([1], [1, 2])).toThrow(InvalidOptionError);
  });
});

describe('percentile', () => {
  it('interpolates within the bin that holds the rank', () => {
    // 10 durations: 4 in bin 1 [0.01, 0.01415), 6 in bin 3
    const bins = histogram({ 1: 4, 3: 6 });
    const [b1, b2, b3, b4] = [binLowerEdge(1), binLowerEdge(2), binLowerEdge(3), binLowerEdge(4)];
    // p20: rank 2 of 4 in bin 1: halfway through it
    expect(percentile(bins, 20)).toBeCloseTo(b1 + 0.5 * (b2 - b1), 12);
    // p40: rank 4, the top of bin 1
    expect(percentile(bins, 40)).toBeCloseTo(b2, 12);
    // p50: rank 5, the first of 6 in bin 3
    expect(percentile(bins, 50)).toBeCloseTo(b3 + (1 / 6) * (b4 - b3), 12);
    expect(percentile(bins, 100)).toBeCloseTo(b4, 12);
  });

  it('reads the first bin from zero, and the last as its lower edge, a day', () => {
    expect(percentile(histogram({ 0: 2 }), 50)).toBeCloseTo(0.005, 12);
    expect(percentile(histogram({ [BIN_COUNT - 1]: 3 }), 99.9)).toBeCloseTo(86_400, 6);
  });

  it('is null for an empty or missing histogram, and refuses a percent outside (0, 100]', () => {
    expect(percentile(histogram({}), 50)).toBeNull();
    expect(percentile(null, 50)).toBeNull();
    for (const p of [0, -1, 100.1, Number.NaN]) expect(() => percentile(histogram({ 1: 1 }), p)).toThrow(InvalidOptionError);
  });

  it('of added histograms is the percentile of all their durations together', () => {
    const a = histogram({ 5: 10 });
    const b = histogram({ 20: 10 });
    expect(percentile(addBins(a, b), 50)).toBeCloseTo(binLowerEdge(6), 12);
    expect(percentile(addBins(a, b), 51)).toBeGreaterThan(binLowerEdge(20));
  });
});
