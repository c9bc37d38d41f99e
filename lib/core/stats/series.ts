// getQueueStats' series, as pure functions of the snapshots read: downsampling into epoch-aligned buckets and the
// percentiles read from each point's histograms. No database here: test/unit/stats-series.spec.ts checks them
// against hand-computed series.
import { addBins, percentile } from './bins.js';
import type { QueueStats, QueueStatsAggregate } from '../types.js';

/** A snapshot as stored in queue_stats (or the cache on the queue's row), read into camelCase. */
export type Snapshot = Omit<QueueStats, 'percentiles'>;

const COUNTS = ['queuedCount', 'deferredCount', 'blockedCount', 'readyCount', 'activeCount', 'failedCount', 'totalCount'] as const;

/** The largest and the smallest of `values` (a loop: spreading 200,000 values into Math.max overflows the stack). */
function extremes(values: readonly number[]): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, max };
}

function aggregate(values: number[], how: QueueStatsAggregate): number {
  if (how === 'avg') return Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  return extremes(values)[how];
}

/** The index of the last of the sorted `keys` at or before `key`, or -1 when all are after it. */
function lastAtOrBefore(keys: readonly number[], key: number): number {
  let lo = 0;
  let hi = keys.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! <= key) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

const bucketOf = (d: Date, widthSeconds: number) => Math.floor(d.getTime() / 1000 / widthSeconds) * widthSeconds;

/** The sums of the deltas that land in one bucket. */
interface DeltaSum {
  createdDelta: number;
  completedDelta: number;
  failedDelta: number;
  deltaSeconds: number;
  deltaOn: Date;
  waitBins: number[] | null;
  runBins: number[] | null;
}

function addDelta(sum: DeltaSum | undefined, s: Snapshot | DeltaSum): DeltaSum {
  return {
    createdDelta: (sum?.createdDelta ?? 0) + (s.createdDelta ?? 0),
    completedDelta: (sum?.completedDelta ?? 0) + (s.completedDelta ?? 0),
    failedDelta: (sum?.failedDelta ?? 0) + (s.failedDelta ?? 0),
    deltaSeconds: (sum?.deltaSeconds ?? 0) + (s.deltaSeconds ?? 0),
    deltaOn: sum && sum.deltaOn > s.deltaOn! ? sum.deltaOn : s.deltaOn!,
    waitBins: addBins(sum?.waitBins ?? null, s.waitBins),
    runBins: addBins(sum?.runBins ?? null, s.runBins),
  };
}

/**
 * Downsamples `snapshots` (any order) into buckets `widthSeconds` wide, aligned to the Unix epoch; returns the
 * `limit` most recent buckets, most recent first. In each bucket the counts are aggregated as `how` says
 * (`avg` rounded), `readyOldestSeconds` is the largest; the deltas, `deltaSeconds` and the histograms are summed.
 * Counts are bucketed by when they were captured, deltas by the end of the window they cover (`deltaOn`), so both
 * line up with the time they describe. Deltas that fall in a bucket without a snapshot are folded into the
 * nearest earlier bucket that has one (or, when none is earlier, the nearest later one), so every bucket returned
 * has real counts. A bucket's `capturedOn` is its start; its `deltaOn` the latest folded into it; its deltas are
 * null when no measured window (one with `deltaSeconds`) landed in it.
 */
export function downsample(snapshots: readonly Snapshot[], widthSeconds: number, how: QueueStatsAggregate, limit: number): Snapshot[] {
  const groups = new Map<number, Snapshot[]>();
  for (const s of snapshots) {
    const key = bucketOf(s.capturedOn, widthSeconds);
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  const keys = [...groups.keys()].sort((a, b) => a - b);
  const deltas = new Map<number, DeltaSum>();
  for (const s of snapshots) {
    if (s.deltaSeconds === null || s.deltaOn === null) continue;
    const at = lastAtOrBefore(keys, bucketOf(s.deltaOn, widthSeconds));
    const key = keys[Math.max(0, at)]!;
    deltas.set(key, addDelta(deltas.get(key), s));
  }
  return keys
    .slice(-limit)
    .reverse()
    .map((key) => {
      const group = groups.get(key)!;
      const d = deltas.get(key);
      const counts = Object.fromEntries(
        COUNTS.map((c) => [
          c,
          aggregate(
            group.map((s) => s[c]),
            how,
          ),
        ]),
      ) as Pick<Snapshot, (typeof COUNTS)[number]>;
      return {
        name: group[0]!.name,
        ...counts,
        readyOldestSeconds: extremes(group.map((s) => s.readyOldestSeconds)).max,
        createdDelta: d?.createdDelta ?? null,
        completedDelta: d?.completedDelta ?? null,
        failedDelta: d?.failedDelta ?? null,
        deltaSeconds: d?.deltaSeconds ?? null,
        deltaOn: d?.deltaOn ?? null,
        waitBins: d?.waitBins ?? null,
        runBins: d?.runBins ?? null,
        capturedOn: new Date(key * 1000),
      };
    });
}

/**
 * The bucket width that fits the window into about `points` buckets: the window is [from, to] when given, else the
 * snapshots' own first and last capture. At least one second.
 */
export function widthFor(points: number, snapshots: readonly Snapshot[], from?: Date, to?: Date): number {
  const times = extremes(snapshots.map((s) => s.capturedOn.getTime()));
  const start = from?.getTime() ?? times.min;
  const end = to?.getTime() ?? times.max;
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return 1;
  return Math.max(1, Math.ceil((end - start) / 1000 / points));
}

/** Each snapshot with its percentiles read from its histograms, one entry per percent, in the order asked. */
export function withPercentiles(snapshots: readonly Snapshot[], percents: readonly number[]): QueueStats[] {
  return snapshots.map((s) => ({
    ...s,
    percentiles: percents.map((p) => ({ p, waitSeconds: percentile(s.waitBins, p), runSeconds: percentile(s.runBins, p) })),
  }));
}
