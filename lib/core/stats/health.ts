// The health check behind QueueHealthIndicator (lib/nest/terminus.ts), free of Nest: it reads what the monitor
// pass cached on the queue rows and the cluster registry (so a probe costs a few small reads, whatever the jobs
// table holds), bounded by a timeout, and says down, with every reason, when a threshold is breached. It never
// throws: bad thresholds and an unreachable database are reasons too, the database's said without its text
// (publicError: a probe's answer is often public).
import { InvalidOptionError } from '../errors.js';
import { withDeadline } from '../runtime/deadline.js';
import { publicError } from '../http/public-error.js';
import { put } from '../worker/attempt/storable.js';
import type { QueueResult, WorkerInfo } from '../types.js';
import { int, noUnknownKeys, optBool, optInt, queueName, record } from '../config/validate.js';

/** What may make the check say down. */
export interface HealthThresholds {
  /** Only these queues (default: all). */
  queues?: string[];
  /** Down when a queue's oldest ready job has waited longer than this many seconds. */
  maxReadyAgeSeconds?: number;
  /** Down when a queue has more waiting jobs (created and retry) than this. */
  maxQueued?: number;
  /** Down when more than `count` jobs of a queue failed for good in the last `minutes` minutes (needs persistQueueStats). */
  maxFailedLastMinutes?: { count: number; minutes: number };
  /**
   * Down when a queue is not worked: with `queues`, when a named queue has no live worker loop in the cluster;
   * without, when a queue with ready jobs has none (`unworked`).
   */
  requireWorkers?: boolean;
  /** Down when the database does not answer within this many milliseconds (default 5000). */
  timeoutMs?: number;
}

/** A queue as the check reports it. */
export interface QueueHealth {
  queued: number;
  ready: number;
  active: number;
  failed: number;
  readyOldestSeconds: number;
  /** Failed for good in the last maxFailedLastMinutes.minutes, when that threshold is given. */
  failedRecently?: number;
  unworked: boolean;
  /** pauseQueue() stopped its claims: its ready jobs wait on purpose, and neither their age nor no worker is a reason. */
  paused: boolean;
  /** When the monitor pass counted the queue (null: not yet). */
  countedOn: Date | null;
}

/** The check's answer. */
export interface HealthReport {
  healthy: boolean;
  /** Why it is down, one sentence each (empty when healthy). */
  reasons: string[];
  /** By queue name: own properties whatever the name (a queue may be named `__proto__` or `constructor`). */
  queues: Record<string, QueueHealth>;
  /** The live instances of the cluster. */
  workers: { id: string; host: string; pid: number; version: string; queues: WorkerInfo['queues']; heartbeatOn: Date }[];
}

/** What the check reads. */
export interface HealthSource {
  getQueues(names?: string[]): Promise<QueueResult[]>;
  getWorkers(): Promise<WorkerInfo[]>;
  /** Jobs failed for good per queue in the last `minutes`, from the recorded stats; null without persistQueueStats. */
  failedSince(minutes: number, names: string[] | null): Promise<Map<string, number> | null>;
}

const KEYS = new Set(['queues', 'maxReadyAgeSeconds', 'maxQueued', 'maxFailedLastMinutes', 'requireWorkers', 'timeoutMs']);

/** Validates thresholds (InvalidOptionError naming the field). */
export function parseThresholds(value: unknown): Required<Pick<HealthThresholds, 'timeoutMs'>> & HealthThresholds {
  const o = record('thresholds', value ?? {});
  noUnknownKeys('thresholds', o, KEYS);
  let queues: string[] | undefined;
  if (o.queues !== undefined) {
    if (!Array.isArray(o.queues)) throw new InvalidOptionError('thresholds.queues', 'an array of queue names', o.queues);
    queues = (o.queues as unknown[]).map((q, i) => queueName(`thresholds.queues[${i}]`, q));
  }
  let failed: HealthThresholds['maxFailedLastMinutes'];
  if (o.maxFailedLastMinutes !== undefined) {
    const f = record('thresholds.maxFailedLastMinutes', o.maxFailedLastMinutes);
    noUnknownKeys('thresholds.maxFailedLastMinutes', f, new Set(['count', 'minutes']));
    failed = {
      count: int('thresholds.maxFailedLastMinutes.count', f.count, 0),
      minutes: int('thresholds.maxFailedLastMinutes.minutes', f.minutes, 1, 10_080),
    };
  }
  return {
    queues,
    maxReadyAgeSeconds: optInt('thresholds.maxReadyAgeSeconds', o.maxReadyAgeSeconds, 0),
    maxQueued: optInt('thresholds.maxQueued', o.maxQueued, 0),
    maxFailedLastMinutes: failed,
    requireWorkers: optBool('thresholds.requireWorkers', o.requireWorkers),
    timeoutMs: optInt('thresholds.timeoutMs', o.timeoutMs, 1, 600_000) ?? 5_000,
  };
}

/** Judges what was read against the thresholds: pure, so its rules are unit-tested (test/unit/health.spec.ts). */
export function judge(
  queues: readonly QueueResult[],
  workers: readonly WorkerInfo[],
  failed: Map<string, number> | null,
  t: HealthThresholds,
): Omit<HealthReport, 'workers'> {
  const reasons: string[] = [];
  const report: Record<string, QueueHealth> = {};
  const worked = new Set(workers.flatMap((w) => w.queues.map((q) => q.name)));
  if (t.maxFailedLastMinutes && failed === null)
    reasons.push('maxFailedLastMinutes needs persistQueueStats: the failures of the last minutes are read from the recorded stats');
  for (const name of t.queues ?? []) if (!queues.some((q) => q.name === name)) reasons.push(`queue "${name}" does not exist`);
  for (const q of queues) {
    const failedRecently = t.maxFailedLastMinutes && failed ? (failed.get(q.name) ?? 0) : undefined;
    // defined, not assigned: an assignment to `__proto__` would set the report's prototype and drop the queue
    put(report, q.name, {
      queued: q.queuedCount,
      ready: q.readyCount,
      active: q.activeCount,
      failed: q.failedCount,
      readyOldestSeconds: q.readyOldestSeconds,
      ...(failedRecently === undefined ? {} : { failedRecently }),
      unworked: q.unworked,
      paused: q.paused,
      countedOn: q.countedOn,
    } satisfies QueueHealth);
    if (t.maxReadyAgeSeconds !== undefined && q.readyOldestSeconds > t.maxReadyAgeSeconds && !q.paused)
      reasons.push(
        `queue "${q.name}": its oldest ready job has waited ${Math.round(q.readyOldestSeconds)} s (maxReadyAgeSeconds ${t.maxReadyAgeSeconds})`,
      );
    if (t.maxQueued !== undefined && q.queuedCount > t.maxQueued)
      reasons.push(`queue "${q.name}": ${q.queuedCount} jobs waiting (maxQueued ${t.maxQueued})`);
    if (t.maxFailedLastMinutes && failedRecently !== undefined && failedRecently > t.maxFailedLastMinutes.count)
      reasons.push(
        `queue "${q.name}": ${failedRecently} jobs failed in the last ${t.maxFailedLastMinutes.minutes} min (maxFailedLastMinutes.count ${t.maxFailedLastMinutes.count})`,
      );
    if (t.requireWorkers && !q.paused) {
      if (t.queues && !worked.has(q.name)) reasons.push(`queue "${q.name}": no live worker in the cluster works it`);
      else if (!t.queues && q.unworked) reasons.push(`queue "${q.name}": ${q.readyCount} ready jobs and no live worker works it`);
    }
  }
  return { healthy: reasons.length === 0, reasons, queues: report };
}

/** Reads and judges, within `timeoutMs`; never throws. */
export async function checkHealth(source: HealthSource, thresholds?: HealthThresholds): Promise<HealthReport> {
  let t: ReturnType<typeof parseThresholds>;
  try {
    t = parseThresholds(thresholds);
  } catch (err) {
    return { healthy: false, reasons: [(err as Error).message], queues: {}, workers: [] };
  }
  try {
    const read = Promise.all([
      source.getQueues(t.queues),
      source.getWorkers(),
      t.maxFailedLastMinutes ? source.failedSince(t.maxFailedLastMinutes.minutes, t.queues ?? null) : Promise.resolve(null),
    ]);
    const [queues, workers, failed] = await withDeadline(read, t.timeoutMs, `the database did not answer within ${t.timeoutMs} ms`);
    const judged = judge(queues, workers, failed, t);
    return {
      ...judged,
      workers: workers.map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        version: w.version,
        queues: w.queues,
        heartbeatOn: w.heartbeatOn,
      })),
    };
  } catch (err) {
    return { healthy: false, reasons: [publicError(err)], queues: {}, workers: [] };
  }
}
