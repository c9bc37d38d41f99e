// getQueueStats: a queue's series of monitor snapshots (with persistQueueStats), or the one snapshot the last pass
// cached on the queue's row (without), downsampled and read into percentiles by stats/series.ts.
import { QueueNotFoundError, InvalidOptionError } from '../errors.js';
import { countsOf, type QueueRow } from '../rows.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Executor } from '../runtime/db.js';
import { downsample, widthFor, withPercentiles, type Snapshot } from './series.js';
import type { QueueStats, QueueStatsAggregate, QueueStatsOptions } from '../types.js';
import { int, noUnknownKeys, oneOf, optBool, optInt, queueName, record } from '../config/validate.js';

/** Most snapshots a downsampled series reads: the most recent in its window (ten days of passes a minute apart × 20). */
export const MAX_SNAPSHOTS_READ = 200_000;

/**
 * getQueueStats' `force` counts a queue again at most this often (pg-boss's rule): a dashboard or a script that asks
 * for forced stats in a loop gets the counts of the last minute, not a scan of the queue's jobs per call.
 */
export const FORCE_AT_MOST_SECONDS = 60;

const KEYS = new Set(['from', 'to', 'limit', 'bucketSeconds', 'maxDataPoints', 'aggregate', 'percentiles', 'force']);
const AGGREGATES: readonly QueueStatsAggregate[] = ['max', 'min', 'avg'];

interface ParsedStatsOptions {
  from?: Date;
  to?: Date;
  limit: number;
  bucketSeconds?: number;
  maxDataPoints?: number;
  aggregate: QueueStatsAggregate;
  percentiles: number[] | null;
  force: boolean;
}

function optDate(field: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new InvalidOptionError(field, 'a valid Date', value);
  return value;
}

function parseStatsOptions(value: unknown): ParsedStatsOptions {
  const o = record('options', value ?? {});
  noUnknownKeys('options', o, KEYS);
  const from = optDate('options.from', o.from);
  const to = optDate('options.to', o.to);
  if (from && to && from > to) throw new InvalidOptionError('options.to', `a time at or after options.from (${from.toISOString()})`, to);
  const bucketSeconds = optInt('options.bucketSeconds', o.bucketSeconds, 1, 315_360_000);
  const maxDataPoints = optInt('options.maxDataPoints', o.maxDataPoints, 1, 100_000);
  if (bucketSeconds !== undefined && maxDataPoints !== undefined)
    throw new InvalidOptionError('options.maxDataPoints', 'left out when options.bucketSeconds is given', maxDataPoints);
  if (o.aggregate !== undefined && bucketSeconds === undefined && maxDataPoints === undefined)
    throw new InvalidOptionError('options.aggregate', 'given only with options.bucketSeconds or options.maxDataPoints', o.aggregate);
  let percentiles: number[] | null = null;
  if (o.percentiles !== undefined) {
    if (!Array.isArray(o.percentiles) || o.percentiles.length === 0 || o.percentiles.length > 100)
      throw new InvalidOptionError('options.percentiles', 'an array of 1 to 100 percents', o.percentiles);
    percentiles = [];
    for (const [i, p] of (o.percentiles as unknown[]).entries()) {
      if (typeof p !== 'number' || !(p > 0 && p <= 100))
        throw new InvalidOptionError(`options.percentiles[${i}]`, 'a number above 0 and at most 100', p);
      if (!percentiles.includes(p)) percentiles.push(p);
    }
  }
  return {
    from,
    to,
    limit: o.limit === undefined ? 1_000 : int('options.limit', o.limit, 1, 100_000),
    bucketSeconds,
    maxDataPoints,
    aggregate: o.aggregate === undefined ? 'max' : oneOf('options.aggregate', o.aggregate, AGGREGATES),
    percentiles,
    force: optBool('options.force', o.force) ?? false,
  };
}

/** A queue_stats row as readQueueStats selects it: the counts, and the deltas as the queue row holds them. */
interface SnapshotRow extends Pick<
  QueueRow,
  'created_delta' | 'completed_delta' | 'failed_delta' | 'delta_seconds' | 'delta_on' | 'wait_bins' | 'run_bins'
> {
  name: string;
  captured_on: Date;
  queued_count: number;
  deferred_count: number;
  blocked_count: number;
  ready_count: number;
  active_count: number;
  failed_count: number;
  total_count: number;
  ready_oldest_seconds: number;
}

/** A stored snapshot; its deltas are null when it measured no window (the first pass, a fresh start). */
function toSnapshot(r: SnapshotRow): Snapshot {
  const measured = r.delta_seconds !== null;
  return {
    name: r.name,
    queuedCount: r.queued_count,
    deferredCount: r.deferred_count,
    blockedCount: r.blocked_count,
    readyCount: r.ready_count,
    activeCount: r.active_count,
    failedCount: r.failed_count,
    totalCount: r.total_count,
    readyOldestSeconds: r.ready_oldest_seconds,
    createdDelta: measured ? r.created_delta : null,
    completedDelta: measured ? r.completed_delta : null,
    failedDelta: measured ? r.failed_delta : null,
    deltaSeconds: r.delta_seconds,
    deltaOn: measured ? r.delta_on : null,
    waitBins: r.wait_bins,
    runBins: r.run_bins,
    capturedOn: r.captured_on,
  };
}

/** The cache on the queue's row, as a snapshot (deltas null: recorded only with persistQueueStats). */
function cachedSnapshot(r: QueueRow): Snapshot {
  return {
    name: r.name,
    ...countsOf(r),
    createdDelta: null,
    completedDelta: null,
    failedDelta: null,
    deltaSeconds: null,
    deltaOn: null,
    waitBins: null,
    runBins: null,
    capturedOn: r.counted_on!,
  };
}

export class QueueStatsReader {
  constructor(private readonly rt: Runtime) {}

  /**
   * The series of queue `name`. `on`: the executor to read the recorded series with (the dashboard's read-only
   * transaction), else the engine's; a `force` or a series not recorded (persistQueueStats off) reads and counts
   * through the engine.
   */
  async getQueueStats(name: string, options?: QueueStatsOptions, on?: Executor): Promise<QueueStats[]> {
    queueName('name', name);
    const o = parseStatsOptions(options);
    const bucketing = o.bucketSeconds !== undefined || o.maxDataPoints !== undefined;
    const snapshots = this.rt.config.persistQueueStats ? await this.stored(name, o, bucketing, on) : await this.cached(name, o);
    let series = snapshots;
    if (bucketing) {
      const width = o.bucketSeconds ?? widthFor(o.maxDataPoints!, snapshots, o.from, o.to);
      series = downsample(snapshots, width, o.aggregate, o.limit);
    }
    return o.percentiles ? withPercentiles(series, o.percentiles) : series;
  }

  /**
   * Jobs failed for good per queue in the snapshots whose window ended in the last `minutes` (the health check's
   * maxFailedLastMinutes); null without persistQueueStats, which records them.
   */
  async failedSince(minutes: number, names: string[] | null): Promise<Map<string, number> | null> {
    if (!this.rt.config.persistQueueStats) return null;
    const rows = await (await this.rt.db()).query<{ queue: string; failed: number }>(this.rt.statements.failedSince, [minutes, names]);
    return new Map(rows.map((r) => [r.queue, r.failed]));
  }

  /**
   * The recorded series; `force` runs a monitor pass first, so that it ends with a snapshot of now, unless the queue's
   * newest snapshot is within FORCE_AT_MOST_SECONDS old (taken by any instance: a pass snapshots every queue).
   */
  private async stored(name: string, o: ParsedStatsOptions, bucketing: boolean, on?: Executor): Promise<Snapshot[]> {
    const exec = on && !o.force ? on : await this.rt.db();
    await this.rt.router.assertExists(exec, name);
    if (o.force) {
      const [counted] = await exec.query<{ seconds: number | null }>(this.rt.statements.snapshotSecondsAgo, [name]);
      if (counted?.seconds == null || counted.seconds > FORCE_AT_MOST_SECONDS) await this.rt.monitorPass(true);
    }
    const rows = await exec.query<SnapshotRow>(this.rt.statements.readQueueStats, [
      name,
      o.from ?? null,
      o.to ?? null,
      bucketing ? MAX_SNAPSHOTS_READ : o.limit,
    ]);
    return rows.map(toSnapshot);
  }

  /**
   * The queue row's cache, counted first when no pass has counted the queue yet, or with `force` when it was counted
   * longer than FORCE_AT_MOST_SECONDS ago (by any instance: the recount's statement checks the row's counted_on).
   */
  private async cached(name: string, o: ParsedStatsOptions): Promise<Snapshot[]> {
    const exec = await this.rt.db();
    const read = async () => (await exec.query<QueueRow>(this.rt.statements.getQueues, [[name]]))[0];
    let row = o.force ? undefined : await read();
    if (!row || row.counted_on === null) {
      await this.rt.recount([name], o.force ? FORCE_AT_MOST_SECONDS : null);
      row = await read();
    }
    if (!row) throw new QueueNotFoundError(name);
    const snapshot = cachedSnapshot(row);
    const inWindow = (!o.from || snapshot.capturedOn >= o.from) && (!o.to || snapshot.capturedOn <= o.to);
    return inWindow ? [snapshot] : [];
  }
}
