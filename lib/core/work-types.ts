// What a worker's handler sees and what it is given to run with: the job, the loop's options, the handler's shape.
// Re-exported by types.ts, the package's type contract.

/** A job as a handler (or `fetch`) sees it. */
export interface Job<T = unknown> {
  id: string;
  name: string;
  data: T;
  priority: number;
  retryCount: number;
  retryLimit: number;
  singletonKey: string | null;
  createdOn: Date;
  startedOn: Date;
  expireInSeconds: number;
  heartbeatSeconds: number | null;
  /** Aborted when the worker gives the job up (shutdown past its timeout). */
  signal: AbortSignal;
  /** Tells the queue this attempt is alive; fenced to this attempt. */
  heartbeat(): Promise<void>;
  /**
   * With `transactional: true`: the connection of the handler's transaction (a pg client; wrap it with
   * `drizzle(job.db)` for Drizzle). Its writes commit together with the job's completion.
   */
  db?: TransactionClient;
}

/** A pg client inside an open transaction. */
export type TransactionClient = import('pg').PoolClient;

/** A group limit: one number for every group, or per tier, flat (`{ default: 2, pro: 5 }`) or as pg-boss writes it. */
export type GroupLimitsOption = number | Record<string, number> | { default?: number; tiers: Record<string, number> };

/** Options of a worker loop (`work` and `@QueueHandler`). */
export interface WorkOptions {
  /**
   * Handlers running at once in this process (default 1); with `batch`, handler calls at once, where a call whose
   * jobs are all settled (job.complete()/fail()) or cut off by their lease no longer counts.
   */
  concurrency?: number;
  /**
   * Most jobs claimed by one fetch (default: `concurrency`; with `batch`, the most jobs one handler call gets,
   * default 10). Above `concurrency`, the worker claims ahead:
   * jobs wait in the process for a slot (their lease runs from the claim), which keeps fast handlers busy
   * between round trips. A job that waits longer than half its lease is handed back, as are all waiting
   * jobs at shutdown, with no attempt counted. Not on queues with a concurrency or rate limit, nor with
   * `groupConcurrency`.
   */
  batchSize?: number;
  /** Fallback poll interval when no notification arrives, in seconds (default 2). */
  pollingIntervalSeconds?: number;
  /**
   * Run each handler inside a transaction that also records the job's completion (`job.db`): its writes
   * commit only together with the completion, and roll back if it throws or the worker lost the job.
   */
  transactional?: boolean;
  /**
   * At most this many active jobs of one group (the job's `group.id`) across all workers: one number for
   * every group, or limits per tier (`{ free: 1, pro: 5, default: 2 }`). Standard queues only.
   */
  groupConcurrency?: GroupLimitsOption;
  /**
   * At most this many jobs of one group (the job's `group.id`) run at once in this loop, counted in the process:
   * one number for every group, or limits per tier (`{ free: 1, pro: 3, default: 2 }`, or pg-boss's
   * `{ default: 2, tiers: { free: 1, pro: 3 } }`; a group of a tier not listed, with no `default`, has no limit). A job
   * of a tier starts while its group runs fewer jobs (of any tier) than that tier's limit. Each an integer from 1 to
   * `concurrency` (with `batch`, to `concurrency × batchSize`: jobs, not calls). The loop's claim passes over the
   * groups it runs to their limit and takes no more of a group than its room, so a claimed job never waits for its
   * group. Jobs without a group are not limited. With `groupConcurrency` both limits apply. Standard queues only.
   */
  localGroupConcurrency?: GroupLimitsOption;
  /**
   * The handler receives the jobs of a claim together, up to `batchSize` of them (`Job[]`, each a `BatchJob`).
   * What it returns completes them all with that output, and a throw fails them all; a `Map` from job id to
   * output, or to an `Error` for a job that failed, settles each one by one (a job the map leaves out fails with
   * QueueError `BATCH_RESULT_MISSING`); `job.complete()` and `job.fail()` settle a job before the handler returns.
   * Each job keeps its own lease, heartbeat and fence, as a single job does. Not with `transactional`.
   */
  batch?: boolean;
  /**
   * With `batch`: the handler resolves with an array of per-job results, `{ id, status, output }` (pg-boss's
   * JobResult): `completed` completes the job with `output`, `failed` fails it with `output` as the error (retried
   * while retries remain), `deadletter` fails it for good (copied to the dead-letter queue, if any). A job the
   * array leaves out, or gives a status not among these, fails; anything but an array fails the whole batch.
   */
  perJobResults?: boolean;
  /**
   * How often the worker refreshes the heartbeat of its running jobs that have `heartbeatSeconds`, in seconds
   * (0.2–86400; default a third of the shortest `heartbeatSeconds` among them). A job whose `heartbeatSeconds` is
   * not more than twice this is refreshed every half of its `heartbeatSeconds` instead: its heartbeat is its
   * contract with the reaper.
   */
  heartbeatRefreshSeconds?: number;
}

/** A handler: its return value becomes the job's output, a throw fails the attempt. */
export type JobHandler<T = unknown, R = unknown> = (job: Job<T>) => Promise<R> | R;

/** A job of a batch handler's batch (`batch: true`): a Job that can be settled on its own, before the handler returns. */
export interface BatchJob<T = unknown> extends Job<T> {
  /**
   * Completes this job now, with `output`, fenced to this attempt; resolves once written, refused by the fence, or
   * given up. The handler's own result then leaves it alone. Writes nothing when the job's lease already ran out.
   * An output JSON cannot hold fails the job and rejects with InvalidPayloadError; a job settled already (by a call
   * or the handler's return) rejects with QueueError BATCH_JOB_SETTLED.
   */
  complete(output?: unknown): Promise<void>;
  /** Fails this attempt now (retried while retries remain, as a throw would); otherwise as `complete`. */
  fail(error?: unknown): Promise<void>;
}

/**
 * Per-job results of a batch handler: job id to output, or to an Error for a job that failed (a
 * `PermanentJobError` fails it for good, an error's `retryAfterSeconds` sets its retry delay).
 */
export type BatchResults = Map<string, unknown>;

/** What a per-job result says of its job (pg-boss's JobResultStatus). */
export type JobResultStatus = 'completed' | 'failed' | 'deadletter';

/** One job's result in the array a `perJobResults` batch handler resolves with (pg-boss's JobResult). */
export interface JobResult<R = unknown> {
  /** The job's id, as the batch gave it. */
  id: string;
  status: JobResultStatus;
  /** The completion's output, or, for `failed` and `deadletter`, what failed (an Error, or any value). */
  output?: R;
}

/** A batch handler under `perJobResults: true`: one result per job. */
export type PerJobBatchHandler<T = unknown> = (jobs: BatchJob<T>[]) => Promise<JobResult[]> | JobResult[];

/** Options of `offWork`, as pg-boss names them. */
export interface OffWorkOptions {
  /** Stop only this loop of the queue (the id work() returned); a loop of another queue is not stopped. */
  id?: string;
  /** Wait for the loops' running handlers (default true); false returns at once while they drain in the background. */
  wait?: boolean;
  /**
   * Let running handlers finish, up to `shutdownTimeoutMs` (default true); false aborts their signals at once and
   * hands back the jobs of those that do not return within a moment (no attempt counted).
   */
  graceful?: boolean;
}

/** close()'s and stop()'s options (pg-boss's stop options: `graceful`; `wait` and `close` as close() does anyway). */
export interface CloseOptions {
  /** pg-boss's: close() always waits for the shutdown; only `true` is taken. */
  wait?: true;
  /** pg-boss's: close() always closes; only `true` is taken (stopWorkers() stops only the loops). */
  close?: true;
  /**
   * Let running handlers finish, up to `shutdownTimeoutMs` (default true); false aborts their signals at once and
   * hands back the jobs of those that do not return within a moment (no attempt counted).
   */
  graceful?: boolean;
}

/** A batch handler (`batch: true`): its jobs together; see WorkOptions.batch for what its result settles. */
export type BatchHandler<T = unknown, R = unknown> = (jobs: BatchJob<T>[]) => Promise<R> | R;

/**
 * The handler `work()` takes for its options: a batch handler for `{ batch: true }`, a handler of one job when
 * `batch` is absent or false, either one when the options' type says only `batch: boolean`.
 */
export type HandlerFor<O, T = unknown> = O extends { batch: true; perJobResults: true }
  ? PerJobBatchHandler<T>
  : O extends { batch: true }
    ? BatchHandler<T>
    : O extends { batch: boolean }
      ? JobHandler<T> | BatchHandler<T>
      : JobHandler<T>;
