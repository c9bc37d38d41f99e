/** The states a job moves through: created → active → completed, active → retry → active, active → failed. */
export type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

/** Every policy name the queue table accepts; this version enforces `standard`. */
export const QUEUE_POLICIES = ['standard', 'short', 'singleton', 'stately', 'exclusive', 'key_strict_fifo'] as const;
export type QueuePolicy = (typeof QUEUE_POLICIES)[number];

/** Retry, expiry and retention settings: a queue's defaults, which each job may override. */
export interface JobDefaults {
  /** How many times a failed attempt is retried (default 2). */
  retryLimit?: number;
  /** Seconds to wait before a retry (default 0). */
  retryDelay?: number;
  /** Exponential backoff with jitter on top of `retryDelay` (default false). */
  retryBackoff?: boolean;
  /** Upper bound of a backed-off delay, in seconds (default none). */
  retryDelayMax?: number | null;
  /** Longest an attempt may stay active, 1–86400 seconds (default 900). */
  expireInSeconds?: number;
  /** Worker liveness interval in seconds (default none: off). */
  heartbeatSeconds?: number | null;
  /** How long a finished job is kept, in seconds; 0 keeps it forever (default 7 days). */
  deleteAfterSeconds?: number;
  /** Longest a job may wait unstarted, in seconds (default 14 days). */
  retentionSeconds?: number;
}

/** Options of `createQueue`; the job defaults apply to every job sent to the queue. */
export interface QueueOptions extends JobDefaults {
  policy?: QueuePolicy;
  partition?: boolean;
  /** Queue that receives a job after its last failure; it must exist. */
  deadLetter?: string | null;
  warningQueueSize?: number | null;
  /** Wake idle workers with NOTIFY when jobs are inserted (default true). */
  notify?: boolean;
  /**
   * Delete a job when it completes instead of keeping it for `deleteAfterSeconds` (default false): its output
   * is not kept and `getJobById` no longer finds it. A job that holds a throttle slot, or that other jobs of a
   * flow wait for, is kept as before.
   */
  removeOnComplete?: boolean;
  /**
   * How long a job that failed for good is kept, in seconds (default 30 days; 0 keeps it forever). Completed and
   * cancelled jobs are kept for their `deleteAfterSeconds`; failures have their own, usually longer, setting.
   * Applies to jobs that fail after it is set.
   */
  failedDeleteAfterSeconds?: number;
  /**
   * Fail the queue's ready jobs, as an attempt each (retried, then failed for good and dead-lettered), once no live
   * worker loop of the cluster has worked the queue for this many seconds (default null: off; they wait). Checked by
   * the maintenance pass, so it acts up to `maintenanceIntervalSeconds` late; a paused queue is not counted as unworked.
   * Not on `key_strict_fifo` queues, where a failed job holds its key.
   */
  failUnworkedAfterSeconds?: number | null;
  /** At most this many active jobs of the queue across all workers and processes (default none). */
  concurrencyLimit?: number | null;
  /** At most `count` jobs started per `perSeconds` window across all workers (default none). */
  rateLimit?: { count: number; perSeconds: number } | null;
}

/**
 * Something that can run a query inside the caller's transaction: a `pg` Client or PoolClient,
 * or a Drizzle database/transaction (node-postgres driver).
 */
export type TransactionLike = object;

/** Options of `send` and `insert`; unset retry/expiry options inherit the queue's. */
export interface SendOptions extends JobDefaults {
  /** Higher runs first (default 0). */
  priority?: number;
  /** Not before: a Date, an ISO-8601 string, or seconds from now. */
  startAfter?: Date | string | number;
  /** Key the queue's policy applies to (short, singleton, stately, exclusive, throttling). */
  singletonKey?: string;
  /** At most one pending (created, retry, active) job per key in the queue; a duplicate returns that job's id. */
  dedupeKey?: string;
  /** The group (e.g. a tenant) whose active jobs a worker's `groupConcurrency` limits, and its tier. */
  group?: { id: string; tier?: string };
  /** Queue that receives this job's copy after its last failure: an existing queue, not key_strict_fifo. */
  deadLetter?: string;
  /** Insert within the caller's transaction (a Drizzle db/tx or a pg client). */
  db?: TransactionLike;
}

/** What enqueue() answers: the job, or the holder of its `dedupeKey`. */
export interface EnqueueResult {
  /** The new job's id; the holder's when `deduped`; null when no job was made (the queue's policy refused it). */
  id: string | null;
  queue: string;
  /** As read back after the insert; null when refused, or gone before the read (run and removed). */
  state: JobState | null;
  /** When it may start (null: refused, gone, or waiting for flow parents). */
  startAfter: Date | null;
  /** A pending job held the `dedupeKey`: `id` is that job's, and nothing was inserted. */
  deduped: boolean;
}

/** One job of an `insert` call. */
export interface JobInsert<T = unknown> extends Omit<SendOptions, 'db'> {
  data?: T;
}

/** One job of `flow()`: its queue, a reference the other jobs of the flow use, and the refs it waits for. */
export interface FlowJob<T = unknown> extends JobInsert<T> {
  /** The queue. */
  name: string;
  /** This job's name within the flow. */
  ref: string;
  /** Refs of jobs of the same flow that must complete before this one may run. */
  dependsOn?: string[];
  /** When a parent fails for good or is cancelled, this job is failed (default) or cancelled. */
  onParentFailure?: 'fail' | 'cancel';
}

/** A queue's job counts, as a monitor pass counts them. */
export interface QueueCounts {
  /** Jobs waiting to run (created or retry): deferred, blocked and ready. */
  queuedCount: number;
  /** Queued jobs whose `startAfter` is still in the future. */
  deferredCount: number;
  /** Jobs of a flow that wait for a parent to complete. */
  blockedCount: number;
  /** Queued jobs that may run now. */
  readyCount: number;
  activeCount: number;
  failedCount: number;
  totalCount: number;
  /**
   * How long the oldest job that may run now has waited since it became due (the later of its creation and its
   * `startAfter`; a retry's, since its delay ran out), in seconds; 0 when none waits. The figure that keeps rising
   * when no worker takes the queue's jobs; a key_strict_fifo job waiting behind its key counts too, and a job
   * handed back at shutdown keeps its first due time.
   */
  readyOldestSeconds: number;
}

/**
 * What a queue's row holds: its settings, and the counts the last monitor pass cached on it (every
 * `monitorIntervalSeconds`; `getQueue(name, { force: true })` counts now). Until a pass has counted the queue, the
 * counts are 0 and `countedOn` is null.
 */
export interface QueueResult extends QueueCounts {
  name: string;
  policy: QueuePolicy;
  partition: boolean;
  deadLetter: string | null;
  warningQueueSize: number | null;
  notify: boolean;
  removeOnComplete: boolean;
  failedDeleteAfterSeconds: number;
  failUnworkedAfterSeconds: number | null;
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  retryDelayMax: number | null;
  expireInSeconds: number;
  heartbeatSeconds: number | null;
  deleteAfterSeconds: number;
  retentionSeconds: number;
  concurrencyLimit: number | null;
  rateLimit: { count: number; perSeconds: number } | null;
  /** The `singletonKey` of each active job of a `singleton` or `stately` queue; null when there is none. */
  singletonsActive: string[] | null;
  /**
   * With `persistQueueStats`: jobs created, completed, and failed for good in the window the last pass covered
   * (`deltaSeconds` long, ending at `deltaOn`, 10 seconds before the pass), and histograms of how long the jobs
   * that finished in it waited (from when they became due to their claim) and ran (claim to end): 48 logarithmic
   * bins, read with `percentile()`. The deltas are 0 and the rest null before a pass has recorded them.
   */
  createdDelta: number;
  completedDelta: number;
  failedDelta: number;
  deltaSeconds: number | null;
  deltaOn: Date | null;
  waitBins: number[] | null;
  runBins: number[] | null;
  /** When the counts were taken; null before any monitor pass counted the queue. */
  countedOn: Date | null;
  /**
   * True when the queue had ready jobs at the last count and no live instance of the cluster (getWorkers) runs a
   * worker loop on it now: no loop will take them (a `fetch()` by hand still may).
   */
  unworked: boolean;
  /** pauseQueue() stopped every instance's claims of the queue (send() still works); resumeQueue() undoes it. */
  paused: boolean;
  /** The table that stores the queue's jobs. */
  table: string;
  createdOn: Date;
  updatedOn: Date;
}

/** Every stored field of a job, in camelCase. */
export interface JobWithMetadata<T = unknown> {
  id: string;
  name: string;
  data: T;
  state: JobState;
  priority: number;
  retryCount: number;
  /** How many times the job has been claimed (retries, reaped leases and hand-backs included). */
  claimCount: number;
  /**
   * The retryCount at which the job's current retry budget began: 0, until retry() gives a failed job a fresh budget
   * (its retries then count from here, and retryLimit moved up with it).
   */
  retryBase: number;
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  retryDelayMax: number | null;
  expireInSeconds: number;
  heartbeatSeconds: number | null;
  deleteAfterSeconds: number;
  singletonKey: string | null;
  dedupeKey: string | null;
  /** When the job may start; null while it waits for its flow parents (it may start once they complete). */
  startAfter: Date | null;
  createdOn: Date;
  startedOn: Date | null;
  completedOn: Date | null;
  /**
   * Retention: a waiting job fails (RetentionExpiredError) if it has not started by then; a finished job is deleted
   * after it. Null: no limit (a finished job kept forever, a flow child waiting for its parents).
   */
  keepUntil: Date | null;
  leaseUntil: Date | null;
  workerId: string | null;
  output: unknown;
  deadLetter: string | null;
  sourceName: string | null;
  sourceId: string | null;
  sourceCreatedOn: Date | null;
  sourceRetryCount: number | null;
  sourceOutput: unknown;
  sourceRootId: string | null;
  /**
   * The error of the job's last failed attempt (its record as stored: `name`, `message`, `stack`, the error's own
   * fields), when it was written (`on`) and which attempt it ended (`attempt`, from 1); kept when a later attempt
   * completes. Null when no attempt has failed.
   */
  lastError: ({ name: string; message: string; stack?: string; on: Date; attempt: number } & Record<string, unknown>) | null;
}

/** A job id, or an id with the attempt it must still be on (fencing). */
export type JobRef = string | { id: string; retryCount: number };

/** Where the engine writes what it has to say; Nest's Logger fits. */
export interface QueueLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string, stack?: string): void;
}

/** How getQueueStats collapses the counts of the snapshots in one bucket. */
export type QueueStatsAggregate = 'max' | 'min' | 'avg';

/** Options of `getQueueStats`. */
export interface QueueStatsOptions {
  /** Only snapshots captured at or after this time. */
  from?: Date;
  /** Only snapshots captured at or before this time. */
  to?: Date;
  /** The most snapshots (or buckets) returned, most recent first: 1–100000 (default 1000). */
  limit?: number;
  /** Downsample into buckets this many seconds wide, aligned to the Unix epoch. */
  bucketSeconds?: number;
  /** Downsample into about this many buckets over the window (from/to, else the data's own span). */
  maxDataPoints?: number;
  /** How a bucket's counts are collapsed (default `max`); only with bucketSeconds or maxDataPoints. */
  aggregate?: QueueStatsAggregate;
  /** Percents (above 0, at most 100) read from each point's histograms, e.g. [50, 95, 99.9]. */
  percentiles?: number[];
  /** Without persistQueueStats: count the queue now instead of reading the last pass's cache. */
  force?: boolean;
}

/** One point of a queue's stats series: a monitor snapshot, or a bucket of them. */
export interface QueueStats extends QueueCounts {
  name: string;
  /** Jobs created, completed and failed for good in the window; null where no window was measured. */
  createdDelta: number | null;
  completedDelta: number | null;
  failedDelta: number | null;
  /** How many seconds the deltas cover: a rate is completedDelta / deltaSeconds. */
  deltaSeconds: number | null;
  /** When the window the deltas cover ends. */
  deltaOn: Date | null;
  /** Wait and run histograms (48 logarithmic bins; see percentile()). */
  waitBins: number[] | null;
  runBins: number[] | null;
  /** When the snapshot was captured, or the start of its bucket. */
  capturedOn: Date;
  /** With the `percentiles` option: each percent asked, read from the histograms, in seconds (null: no data). */
  percentiles?: { p: number; waitSeconds: number | null; runSeconds: number | null }[];
}

/**
 * A worker loop as the cluster registry lists it. `task`: what runs its jobs, the handler's name (`Class.method`
 * for a @QueueHandler; a named function's name for work()), null when it has none (or the instance's version
 * predates it). `groupConcurrency`: the loop's limit of active jobs per group, one for groups of any tier (`default`)
 * and one per tier named (null: the loop sets none, or the instance's version predates it).
 * `localGroupConcurrency`: the same for the loop's own handlers (the limit it counts in its process), in the same
 * shape and with the same nulls.
 */
export interface LoopInfo {
  id: string;
  queue: string;
  concurrency: number;
  active: number;
  task: string | null;
  groupConcurrency: { default: number | null; tiers: Record<string, number> } | null;
  localGroupConcurrency: { default: number | null; tiers: Record<string, number> } | null;
}

/** A running instance of the engine, as the cluster registry shows it (getWorkers). */
export interface WorkerInfo {
  /** The instance's id: host, pid and a random suffix. */
  id: string;
  host: string;
  pid: number;
  /** The nestjs-pgqueue version it runs. */
  version: string;
  /** Its worker loops: each one's id (the workerId of the jobs it holds), queue, concurrency and active jobs. */
  loops: LoopInfo[];
  /** The same loops added up per queue. */
  queues: { name: string; concurrency: number; active: number }[];
  /** The queues whose loops it holds stopped (stopWorking): they work none of their jobs until startWorking(). */
  stopped: string[];
  startedOn: Date;
  /** Its last refresh (every 5 s); an instance 30 s late no longer counts and its row is deleted. */
  heartbeatOn: Date;
}

/** Options of `schedule()`: where the schedule's slots are read, which schedule it is, and the jobs' options. */
export interface ScheduleOptions extends Omit<SendOptions, 'db' | 'startAfter'> {
  /** The IANA time zone the expression is read in (default `UTC`). */
  tz?: string;
  /** Tells apart several schedules of one queue (default `''`): `schedule()` with the same name and key replaces. */
  key?: string;
  /** Slots missed while nothing ran: fired as one job when a scheduler runs again (`once`, default), or `skip`ped. */
  missed?: 'once' | 'skip';
}

/** A schedule, as getSchedules() returns it. */
export interface ScheduleInfo {
  name: string;
  key: string;
  cron: string;
  tz: string;
  data: unknown;
  /** The options each job is sent with. */
  options: Omit<ScheduleOptions, 'tz' | 'key' | 'missed'>;
  missed: 'once' | 'skip';
  /** Made by a `@QueueHandler`'s `schedule` option, and kept in step with it at bootstrap. */
  managed: boolean;
  /** The next slot to fire; null when the expression has no run left. */
  nextRunOn: Date | null;
  /** The last slot that fired, and the job it sent (null: none yet, or the queue's policy refused it). */
  lastRunOn: Date | null;
  lastJobId: string | null;
  createdOn: Date;
  updatedOn: Date;
}

export type {
  Job,
  TransactionClient,
  WorkOptions,
  OffWorkOptions,
  CloseOptions,
  JobHandler,
  BatchJob,
  BatchHandler,
  BatchResults,
  JobResult,
  JobResultStatus,
  PerJobBatchHandler,
  HandlerFor,
  GroupLimitsOption,
} from './work-types.js';
