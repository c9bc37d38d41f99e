// The wait and run histograms of the monitor pass: 48 bins on a logarithmic scale. Bin 0 holds durations under
// 10 ms; bin k (1 to 46) holds [10 ms × r^(k-1), 10 ms × r^k); bin 47 holds a day and more. r is the ratio that puts
// the lower edge of bin 47 at exactly one day: about 1.415, so each bin is about 1.4 times as wide as the one
// before it, and every duration is known to within that ratio. sql/monitor.ts computes the same bin in SQL (BIN).

import { InvalidOptionError } from '../errors.js';

/** How many bins a histogram has. */
export const BIN_COUNT = 48;

/** The upper edge of bin 0, in seconds. */
export const FIRST_EDGE_SECONDS = 0.01;

/** The lower edge of the last bin, in seconds: one day. */
export const LAST_EDGE_SECONDS = 86_400;

/** The ratio of each bin's edges. */
export const BIN_RATIO = (LAST_EDGE_SECONDS / FIRST_EDGE_SECONDS) ** (1 / (BIN_COUNT - 2));

/** The lower edge of bin `k`, in seconds (0 for bin 0). */
export function binLowerEdge(k: number): number {
  return k === 0 ? 0 : FIRST_EDGE_SECONDS * BIN_RATIO ** (k - 1);
}

/**
 * Added to the bin's fractional index before it is floored: the logarithms put a duration that is exactly an edge
 * (a day: 45.99999999999999) a hair below it. SQL's BIN adds the same, so both put every duration in one bin.
 */
export const BIN_EPSILON = 1e-9;

/** The bin a duration of `seconds` falls in. */
export function binOf(seconds: number): number {
  if (!(seconds >= FIRST_EDGE_SECONDS)) return 0;
  return Math.min(BIN_COUNT - 1, 1 + Math.floor(Math.log(seconds / FIRST_EDGE_SECONDS) / Math.log(BIN_RATIO) + BIN_EPSILON));
}

/** A histogram as stored: a count per bin, null entries counting as 0; or null when it holds nothing. */
export type Bins = readonly (number | null)[] | null;

/**
 * Adds two histograms bin by bin (a null histogram, or a null bin, counts as empty). Null when both are null.
 * Throws an InvalidOptionError when both are given and their lengths differ.
 */
export function addBins(a: Bins, b: Bins): number[] | null {
  if (!a && !b) return null;
  if (a && b && a.length !== b.length) throw new InvalidOptionError('b', `a histogram of ${a.length} bins, as a is`, `${b.length} bins`);
  const length = (a ?? b)!.length;
  return Array.from({ length }, (_, i) => (a?.[i] ?? 0) + (b?.[i] ?? 0));
}

/**
 * The `p`-th percentile (0 < p ≤ 100) of the durations a histogram counts, in seconds; null when it counts none.
 * Within its bin the value is interpolated linearly between the bin's edges by rank, so it is exact to within
 * the bin's width (about 40%); a percentile in the last bin is its lower edge, one day.
 */
export function percentile(bins: Bins, p: number): number | null {
  if (!(typeof p === 'number' && p > 0 && p <= 100)) throw new InvalidOptionError('p', 'a number above 0 and at most 100', p);
  if (!bins) return null;
  const total = bins.reduce<number>((sum, n) => sum + (n ?? 0), 0);
  if (total === 0) return null;
  const rank = (p / 100) * total;
  let below = 0;
  for (let k = 0; k < bins.length; k++) {
    const n = bins[k] ?? 0;
    if (n > 0 && below + n >= rank) {
      if (k === bins.length - 1) return binLowerEdge(k);
      const lower = binLowerEdge(k);
      return lower + ((rank - below) / n) * (binLowerEdge(k + 1) - lower);
    }
    below += n;
  }
  return binLowerEdge(bins.length - 1);
}
