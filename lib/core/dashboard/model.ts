// What the dashboard shows, as one JSON snapshot per sample, and the pure parts of making it: the sampler
// (sampler.ts) reads the database and keeps the last two minutes; these functions turn what it keeps into figures.
// Times are milliseconds since the epoch on the database's clock; the page shows them relative to `at`.

/** Seconds of history the charts show. */
export const HISTORY_SECONDS = 120;
/** The window of the "last 60 s" tiles. */
export const RECENT_SECONDS = 60;
/** Seconds the throughput tile averages. */
export const THROUGHPUT_SECONDS = 10;

/** Jobs finished in one second of the database's clock; null counts: that second was not read. */
export interface SecondCount {
  at: number;
  completed: number | null;
  failed: number | null;
}

export interface DashboardTiles {
  /** Jobs finished per second, over the last THROUGHPUT_SECONDS read; null before any was. */
  throughput: number | null;
  /** Due to claimed, and handler run time, of the latest finishes (seconds); null when none finished lately. */
  pickupP50: number | null;
  pickupP95: number | null;
  runP50: number | null;
  runP95: number | null;
  /** Latest finishes the four figures above were read from. */
  timedJobs: number;
  /** Jobs created or waiting for a retry; `waitingOver`: some queue's count stopped at the cap (a lower bound). */
  waiting: number;
  waitingOver: boolean;
  /** Jobs holding a lease. */
  running: number;
  /** Failed attempts retried, and jobs failed for good, in the last 60 s (of the seconds read: `recentSeconds`). */
  retries: number;
  failed: number;
  recentSeconds: number;
  /** How long the oldest ready job has waited since it became due (seconds); null when none is ready. */
  oldestReadySeconds: number | null;
}

export interface DashboardQueue {
  name: string;
  policy: string;
  paused: boolean;
  waiting: number;
  waitingOver: boolean;
  ready: number;
  readyOver: boolean;
  running: number;
  oldestReadySeconds: number | null;
  /** Live loops that work it, across the instances. */
  loops: number;
  /** Handlers of its loops (`Class.method`), as the cluster registry lists them. */
  tasks: string[];
}

export interface DashboardWorker {
  id: string;
  host: string;
  pid: number;
  version: string;
  heartbeatAgeSeconds: number;
  leases: number;
  loops: { queue: string; task: string | null; concurrency: number; active: number }[];
  stopped: string[];
}

export type FeedKind = 'sent' | 'started' | 'completed' | 'failed' | 'cancelled';

export interface FeedEvent {
  kind: FeedKind;
  id: string;
  queue: string;
  at: number;
  /** A failure's message. */
  message?: string;
}

export interface RunningJob {
  id: string;
  queue: string;
  task: string | null;
  /** The instance whose loop holds it; null when no live instance lists the loop. */
  instance: string | null;
  attempt: number;
  startedAt: number;
  leaseUntil: number | null;
  heartbeatUntil: number | null;
}

/** A job that failed for good (it stays until someone retries or deletes it). */
export interface Problem {
  id: string;
  queue: string;
  task: string | null;
  attempts: number;
  error: string;
  at: number | null;
}

export interface DashboardSchedule {
  name: string;
  key: string;
  cron: string;
  tz: string;
  task: string | null;
  next: number;
  last: number | null;
  lastJobId: string | null;
}

export interface DashboardSnapshot {
  version: string;
  /** When the sample was read (database clock); the time of the last good sample when `error`, 0 before any. */
  at: number;
  /** Why the last sample could not be read (the database away, too slow); null when it was. */
  error: string | null;
  tiles: DashboardTiles;
  throughput: SecondCount[];
  queues: DashboardQueue[];
  /** Waiting jobs per queue at each sample of the last two minutes. */
  depth: { at: number; waiting: Record<string, number> }[];
  /** The live instances that work queues (or hold their loops stopped). */
  workers: DashboardWorker[];
  feed: FeedEvent[];
  running: RunningJob[];
  /** Active jobs in all (the list holds at most the longest running). */
  runningCount: number;
  problems: Problem[];
  schedules: DashboardSchedule[];
  /** Queues with ready jobs that no live worker works, and are not paused. */
  unworked: string[];
}

/** The HISTORY_SECONDS seconds before `until` (exclusive, a whole second), oldest first, from what was read. */
export function secondsSeries(known: ReadonlyMap<number, { completed: number; failed: number }>, until: number): SecondCount[] {
  const out: SecondCount[] = [];
  for (let at = until - HISTORY_SECONDS * 1000; at < until; at += 1000) {
    const c = known.get(at);
    out.push({ at, completed: c ? c.completed : null, failed: c ? c.failed : null });
  }
  return out;
}

/** Finished per second over the last THROUGHPUT_SECONDS seconds that were read; null when none was. */
export function throughputOf(series: readonly SecondCount[]): number | null {
  const read = series.filter((s) => s.completed !== null).slice(-THROUGHPUT_SECONDS);
  if (read.length === 0) return null;
  return read.reduce((n, s) => n + s.completed! + s.failed!, 0) / read.length;
}

/** Jobs failed for good in the last RECENT_SECONDS of `series`, and how many of those seconds were read. */
export function recentFailures(series: readonly SecondCount[]): { failed: number; seconds: number } {
  const recent = series.slice(-RECENT_SECONDS).filter((s) => s.failed !== null);
  return { failed: recent.reduce((n, s) => n + s.failed!, 0), seconds: recent.length };
}

/**
 * Retried failures seen, by job id and failure time, kept while they are in the last RECENT_SECONDS: a job seen
 * waiting for its retry, then running it, then finished, counts once per failure.
 */
export class RetryTally {
  private readonly seen = new Map<string, number>();

  constructor(private readonly max = 100_000) {}

  /** A retried failure of job `id` at `on` (ms); an unknown time (an older row) is left out. */
  add(id: string, on: number | null, now: number): void {
    if (on === null || !Number.isFinite(on) || on <= now - RECENT_SECONDS * 1000) return;
    if (this.seen.size >= this.max) this.count(now);
    if (this.seen.size < this.max) this.seen.set(`${id}@${on}`, on);
  }

  /** Forgets failures older than RECENT_SECONDS before `now`, and counts the others. */
  count(now: number): number {
    for (const [k, on] of this.seen) if (on <= now - RECENT_SECONDS * 1000) this.seen.delete(k);
    return this.seen.size;
  }
}

/** Queues with ready jobs, not paused, that no live loop works. */
export function unworkedQueues(queues: readonly DashboardQueue[]): string[] {
  return queues.filter((q) => q.ready > 0 && !q.paused && q.loops === 0).map((q) => q.name);
}

/** Keeps the newest `max` events, newest first, each at most once (by kind and job). */
export function mergeFeed(older: readonly FeedEvent[], newer: readonly FeedEvent[], max = 50): FeedEvent[] {
  const seen = new Set<string>();
  const out: FeedEvent[] = [];
  for (const e of [...newer].sort((a, b) => b.at - a.at).concat(older)) {
    const key = `${e.kind}:${e.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
    if (out.length === max) break;
  }
  return out;
}
