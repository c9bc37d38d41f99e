// The queue engine's public face, free of Nest, in one class of one file (docs/design.md, "The pieces"): every public
// method is one delegation to the unit that owns it (runtime/engine-units.ts wires them).
import { EventEmitter } from 'node:events';
import { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './config/config.js';
import type { JobDefinition, JobName, PayloadArgs } from './job-definition.js';
import type { JobDetails } from './jobs/dependencies.js';
import type { ChangeResult, CompleteOptions, ConnectionOptions } from './jobs/control.js';
import type { FetchOptions } from './jobs/fetcher.js';
import type { FindJobsOptions, JobPage } from './jobs/finder.js';
import type { UpdateOptions, UpdateResult, UpdateSpec, UpsertOptions, UpsertResult } from './jobs/update.js';
import type { RedriveOptions, RedriveResult } from './jobs/redrive.js';
import type { PublishedJob } from './jobs/pub-sub.js';
import { engineUnits, type EngineUnits } from './runtime/engine-units.js';
import { parseCloseOptions, parseForce } from './config/options.js';
import { checkHealth, type HealthReport, type HealthThresholds } from './stats/health.js';
import type { QueueEvents } from './events.js';
import { consoleLogger, emitterEvents } from './runtime/event-reports.js';
import type { MaintenanceResult } from './passes/maintenance.js';
import type { MonitorResult } from './passes/monitor.js';
import type { MigrationResult } from './runtime/migrate.js';
import type { Runtime } from './runtime/runtime.js';
import type { Schedules } from './queues/schedules.js';
import type { LoopRegistry } from './worker/registry.js';
import type {
  BatchHandler,
  EnqueueResult,
  FlowJob,
  Job,
  JobInsert,
  JobRef,
  JobWithMetadata,
  SendOptions,
  HandlerFor,
  JobHandler,
  OffWorkOptions,
  CloseOptions,
  QueueLogger,
  QueueOptions,
  QueueResult,
  QueueStats,
  QueueStatsOptions,
  ScheduleInfo,
  ScheduleOptions,
  WorkerInfo,
  WorkOptions,
} from './types.js';

export type { ChangeResult, CompleteOptions, ConnectionOptions, FetchOptions, FindJobsOptions, JobPage, RedriveOptions, RedriveResult };
export type { PayloadArgs } from './job-definition.js';

/** The options of sendThrottled, sendDebounced and sendAfter, which may be left out with null. */
type MaybeSendOptions = SendOptions | null | undefined;

/**
 * The queue engine, free of Nest: owns (or borrows) a pool, installs the tables, sends, claims and
 * settles jobs, and runs worker loops. Emits `error` for failures of its own loops (never for a
 * handler's throw) and `warning`; with no listener these go to the logger.
 */
export class PgQueue extends EventEmitter<QueueEvents> {
  readonly config: ResolvedConfig;
  protected readonly log: QueueLogger;
  /** Events counted since start: results refused by the fence (the worker no longer held the job). */
  readonly counters: { staleResults: number };
  protected readonly units: EngineUnits;

  constructor(options: QueueModuleOptions | ResolvedConfig, logger?: QueueLogger) {
    super();
    this.config = Object.isFrozen(options) && 'schemaIdent' in options ? options : resolveConfig(options);
    this.log = this.config.logger ?? logger ?? consoleLogger;
    this.units = engineUnits(this.config, this.log, emitterEvents(this, this.log));
    this.counters = this.units.runtime.counters;
  }

  /** Holder id of jobs claimed by `fetch` (settled by hand). */
  get fetcherId(): string {
    return this.units.fetcher.holderId;
  }

  /** What the installer did at start (null when `migrate` is off or before start). */
  get migration(): MigrationResult | null {
    return this.units.runtime.migration;
  }

  /**
   * Connects and installs the tables (when `migrate`); idempotent, and called by every method. A server older than
   * PostgreSQL 15 is refused, with `migrate` on or off, with UnsupportedServerError (UNSUPPORTED_SERVER).
   */
  start(): Promise<void> {
    return this.units.runtime.start();
  }

  /**
   * One maintenance pass (docs/operations.md, "Maintenance"): expired leases reaped, finished jobs past their
   * deletion time deleted, jobs past `retentionSeconds` failed. Supervising instances run one every
   * `maintenanceIntervalSeconds`, once across the cluster; `force` runs it now (waits ≤ 10 s for one under way).
   */
  maintain(options: { force?: boolean } = {}): Promise<MaintenanceResult> {
    return this.units.runtime.maintain(parseForce(options));
  }

  // ---- sending ----
  /**
   * Sends one job; returns its id, or null when the queue's policy (or a throttle slot) refused it. With
   * `dedupeKey`, a duplicate returns the id of the pending job that holds the key. With `options.db` the
   * insert joins the caller's transaction.
   */
  send<T = unknown>(job: JobDefinition<T>, ...args: PayloadArgs<NoInfer<T>>): Promise<string | null>;
  send<T = unknown>(name: string, data?: NoInfer<T>, options?: SendOptions): Promise<string | null>;
  send(name: JobName<unknown>, data?: unknown, options?: SendOptions): Promise<string | null> {
    return this.units.sender.send(name, data, options);
  }

  /** send() with its answer: `{ id, queue, state, startAfter, deduped }` (deduped: the id is a dedupeKey's holder). */
  enqueue<T = unknown>(job: JobDefinition<T>, ...args: PayloadArgs<NoInfer<T>>): Promise<EnqueueResult>;
  enqueue<T = unknown>(name: string, data?: NoInfer<T>, options?: SendOptions): Promise<EnqueueResult>;
  enqueue(name: JobName<unknown>, data?: unknown, options?: SendOptions): Promise<EnqueueResult> {
    return this.units.sender.enqueue(name, data, options);
  }

  /**
   * Sends at most one job per `seconds`-long time slot (and per `key`, else per `options.singletonKey`): the first
   * send of a slot wins, later ones return null. `options.startAfter`, and `options.singletonKey` beside a `key`, are
   * refused: the arguments set them.
   */
  sendThrottled<T = unknown>(
    name: JobName<T>,
    data: NoInfer<T>,
    options: MaybeSendOptions,
    seconds: number,
    key?: string | null,
  ): Promise<string | null> {
    return this.units.sender.sendThrottled(name, data, options, seconds, key);
  }

  /**
   * Like `sendThrottled`, but a send into a slot that is taken is deferred to the start of the next slot
   * instead of dropped; at most one job waits there, so later sends return null.
   */
  sendDebounced<T = unknown>(
    name: JobName<T>,
    data: NoInfer<T>,
    options: MaybeSendOptions,
    seconds: number,
    key?: string | null,
  ): Promise<string | null> {
    return this.units.sender.sendDebounced(name, data, options, seconds, key);
  }

  /**
   * `send` with `startAfter` given separately: a Date, an ISO-8601 string, or seconds from now. A `startAfter` in
   * the options as well is refused (InvalidOptionError naming `options.startAfter`), not overridden.
   */
  sendAfter<T = unknown>(
    name: JobName<T>,
    data: NoInfer<T>,
    options: MaybeSendOptions,
    startAfter: Date | string | number,
  ): Promise<string | null> {
    return this.units.sender.sendAfter(name, data, options, startAfter);
  }

  /**
   * Inserts many jobs in one statement; returns the ids of the jobs inserted, in input order. A job that
   * the queue's policy or a dedupe key refuses is skipped (its id is missing from the result).
   */
  insert<T = unknown>(name: JobName<T>, jobs: JobInsert<NoInfer<T>>[], options?: Pick<SendOptions, 'db'>): Promise<string[]> {
    return this.units.sender.insert(name, jobs, options);
  }

  /**
   * Inserts jobs that wait for each other (`dependsOn` by `ref`), in one transaction; each ref's job id (guide,
   * "Flows"). With `options.db` they join the caller's transaction: roll it back if this throws.
   */
  flow(jobs: FlowJob[], options?: Pick<SendOptions, 'db'>): Promise<Record<string, string>> {
    return this.units.flows.flow(jobs, options);
  }

  // ---- jobs by id or by queue ----
  /** Claims up to `batchSize` runnable jobs (default 1); settle them with `complete` or `fail`. */
  fetch<T = unknown>(name: string, options?: FetchOptions): Promise<Job<T>[]> {
    return this.units.fetcher.fetch<T>(name, options);
  }

  /**
   * Completes active jobs with `output`; a `{ id, retryCount }` ref completes only that attempt. With
   * `includeQueued`, also jobs that have not started (created, retry). The options may also come third, with no
   * output: `complete(name, ids, { includeQueued: true })`. A third argument with `includeQueued` as its only
   * key and no fourth is read so; to store such an object as output, pass options after it (`{}` will do).
   */
  complete(name: string, ids: JobRef | JobRef[], output?: unknown, options?: CompleteOptions): Promise<ChangeResult> {
    return this.units.jobs.complete(name, ids, output, options);
  }

  /** Fails jobs that have not finished: retried while retries remain, else failed. */
  fail(name: string, ids: JobRef | JobRef[], error?: unknown, options?: ConnectionOptions): Promise<ChangeResult> {
    return this.units.jobs.fail(name, ids, error, options);
  }

  /**
   * Extends the heartbeat of active jobs by their `heartbeatSeconds` from now (not their lease); a
   * `{ id, retryCount }` ref touches only that attempt. `ids` names the jobs still active.
   */
  touch(name: string, ids: JobRef | JobRef[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.units.jobs.touch(name, ids, options);
  }

  /** Cancels jobs that have not finished; a running handler's result is then discarded. */
  cancel(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.units.jobs.cancel(name, ids, options);
  }

  /** Brings cancelled jobs back to the queue. */
  resume(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.units.jobs.resume(name, ids, options);
  }

  /**
   * Puts failed jobs back in the queue to run again. All or nothing: a job that is not failed makes it
   * throw `JobStateError` (an unknown id `JobNotFoundError`) and nothing changes.
   */
  retry(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.units.jobs.retry(name, ids, options);
  }

  /**
   * Moves dead-lettered jobs of the dead-letter queue `name` (waiting or failed there) back to the queues
   * they came from, as new jobs under those queues' settings. `ids` limits it to some jobs, `limit` caps
   * how many move (default 1000), `sourceName` keeps to jobs that came from that queue, and `destination` moves
   * them into that queue (under its settings) instead. Returns the new jobs' ids.
   */
  redrive(name: string, options?: RedriveOptions): Promise<RedriveResult> {
    return this.units.redrive.redrive(name, options);
  }

  /**
   * Changes the payload (`data`; undefined keeps it, null clears it) and the given send options of jobs that have
   * not started (created, retry): the job `options.id`, or the waiting jobs of `options.singletonKey` (`match`:
   * 'newest', the default, 'oldest' or 'all'). A job a worker has claimed is never changed. Returns the ids changed.
   */
  update<T = unknown>(spec: UpdateSpec<T>): Promise<UpdateResult>;
  update<T = unknown>(name: JobName<T>, data?: NoInfer<T>, options?: UpdateOptions): Promise<UpdateResult>;
  update(name: JobName<unknown> | UpdateSpec, data?: unknown, options?: UpdateOptions): Promise<UpdateResult> {
    return this.units.updates.update(name, data, options);
  }

  /**
   * update() by `options.singletonKey` or `options.id`; when no such job waits, sends the job as send() would (by id,
   * with that id). Upserts of one key or id run one after the other. Returns the ids changed or inserted.
   */
  upsert<T = unknown>(spec: UpdateSpec<T, UpsertOptions>): Promise<UpsertResult>;
  upsert<T = unknown>(name: JobName<T>, data: NoInfer<T> | undefined, options: UpsertOptions): Promise<UpsertResult>;
  upsert(name: JobName<unknown> | UpdateSpec<unknown, UpsertOptions>, data?: unknown, options?: UpsertOptions): Promise<UpsertResult> {
    return this.units.updates.upsert(name, data, options);
  }

  /** Deletes jobs in any state. */
  deleteJob(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.units.jobs.deleteJob(name, ids, options);
  }

  /**
   * The job with id `id` in queue `name`, in any state, with its metadata and its place among other jobs (policy,
   * group, throttle slot, `blocked`, `blocking`); null when there is none.
   */
  getJobById<T = unknown>(name: string, id: string): Promise<JobDetails<T> | null> {
    return this.units.dependencies.getJobById<T>(name, id);
  }

  /** The jobs a flow made job `id` of queue `name` wait for (its parents, in any state); null when there is no such job. */
  getDependencies<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T>[] | null> {
    return this.units.dependencies.getDependencies<T>(name, id);
  }

  /** The jobs a flow made wait for job `id` of queue `name` (its children, in any state); null when there is no such job. */
  getDependents<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T>[] | null> {
    return this.units.dependencies.getDependents<T>(name, id);
  }

  /**
   * Makes one job of `data` in every queue subscribed to `event`, in one statement (all or none; in the caller's
   * transaction with `options.db`), each under its own queue's settings and policy. Returns the jobs made, by queue
   * name: none when no queue subscribes, and none for a queue whose policy or dedupe key refused its job.
   */
  publish(event: string, data?: unknown, options?: SendOptions): Promise<PublishedJob[]> {
    return this.units.pubSub.publish(event, data, options);
  }

  /** Subscribes queue `queue` (which must exist) to `event`; true when new, false when it was subscribed already. */
  subscribe(event: string, queue: string): Promise<boolean> {
    return this.units.pubSub.subscribe(event, queue);
  }

  /** Ends the subscription of queue `queue` to `event`; true when there was one. */
  unsubscribe(event: string, queue: string): Promise<boolean> {
    return this.units.pubSub.unsubscribe(event, queue);
  }

  /** A page of queue `name`'s jobs, newest first, filtered by state and key; `next` is the cursor of the next page. */
  findJobs<T = unknown>(name: string, options?: FindJobsOptions): Promise<JobPage<T>> {
    return this.units.finder.findJobs<T>(name, options);
  }

  /** Deletes the queue's waiting jobs (created, retry) in batches; flow children waiting for them fail or are cancelled. Returns how many. */
  deleteQueuedJobs(name: string): Promise<number> {
    return this.units.bulk.deleteQueuedJobs(name);
  }

  /** Deletes the queue's finished jobs in batches, but those retention also keeps (docs/guide.md, "Queues"). Returns how many. */
  deleteStoredJobs(name: string): Promise<number> {
    return this.units.bulk.deleteStoredJobs(name);
  }

  /** deleteQueuedJobs then deleteStoredJobs, for queue `name` or every queue; active jobs stay. Returns how many. */
  deleteAllJobs(name?: string): Promise<number> {
    return this.units.bulk.deleteAllJobs(name);
  }

  // ---- queues, schedules, loops ----
  /** Creates a queue; calling it again with the same options does nothing, with other options throws `QueueExistsError`. */
  createQueue(name: string, options?: QueueOptions): Promise<void> {
    return this.units.admin.createQueue(name, options);
  }

  /** Creates the queue if it is missing; an existing queue is left as it is. Reports what differs. */
  ensureQueue(name: string, options?: QueueOptions): Promise<{ created: boolean; differences: string[] }> {
    return this.units.admin.ensureQueue(name, options);
  }

  /** Changes a queue's settings (not `policy` or `partition`); `null` clears `deadLetter`, `retryDelayMax`, `heartbeatSeconds`. */
  updateQueue(name: string, options: Omit<QueueOptions, 'policy' | 'partition'>): Promise<void> {
    return this.units.admin.updateQueue(name, options);
  }

  /** Deletes a queue and all its jobs, in one transaction; refused while another queue names it as its dead letter. */
  deleteQueue(name: string): Promise<void> {
    return this.units.admin.deleteQueue(name);
  }

  /**
   * Deletes the queue's waiting jobs (created, retry) and returns how many: pg-boss's older name of
   * `deleteQueuedJobs`, which it is (batched; the flow children waiting for a deleted job fail or are cancelled).
   */
  purgeQueue(name: string): Promise<number> {
    return this.units.bulk.deleteQueuedJobs(name);
  }

  /**
   * The queue's settings and the counts of its jobs as the last monitor pass cached them; null when there is no
   * such queue. `force` counts the queue's jobs now (a read of all its rows) and caches the counts.
   */
  getQueue(name: string, options?: { force?: boolean }): Promise<QueueResult | null> {
    return this.units.admin.getQueue(name, options);
  }

  /**
   * One monitor pass: counts every queue's jobs and caches the counts on its row (with `persistQueueStats`, also a
   * snapshot of what happened since the last pass). Supervising instances run one every `monitorIntervalSeconds`
   * cluster-wide; `force` runs one now (waits ≤ 10 s for one under way), regardless of the last one's time.
   */
  monitor(options: { force?: boolean } = {}): Promise<MonitorResult> {
    return this.units.runtime.monitorPass(parseForce(options));
  }

  /** A queue's stats, most recent first (docs/operations.md, "Monitor counts and stats"). */
  getQueueStats(name: string, options?: QueueStatsOptions): Promise<QueueStats[]> {
    return this.units.stats.getQueueStats(name, options);
  }

  /**
   * The health check (QueueHealthIndicator's): the cached counts of the queues and the live workers, and whether a
   * threshold is breached or the database did not answer within `timeoutMs`. Never throws: every problem is a reason.
   */
  checkHealth(thresholds?: HealthThresholds): Promise<HealthReport> {
    return checkHealth(
      {
        getQueues: (names) => this.getQueues(names),
        getWorkers: () => this.getWorkers(),
        failedSince: (minutes, names) => this.units.stats.failedSince(minutes, names),
      },
      thresholds,
    );
  }

  /** Every live instance of the cluster (the cluster registry): where it runs, its version, its loops. */
  getWorkers(): Promise<WorkerInfo[]> {
    return this.units.cluster.getWorkers();
  }

  /** Every queue (or those named), with its settings and the counts the last monitor pass cached. */
  getQueues(names?: string[]): Promise<QueueResult[]> {
    return this.units.admin.getQueues(names);
  }

  /**
   * Sends `data` to queue `name` at each slot of `cron` (5 fields, or 6 with seconds first) in `options.tz` (UTC):
   * each slot fires once across the cluster. The same name and `options.key` replace the schedule.
   */
  schedule(name: string, cron: string, data?: unknown, options?: ScheduleOptions): Promise<void> {
    return this.units.schedules.schedule(name, cron, data, options);
  }

  /** Removes the schedule of queue `name` with `key` (default ''); false when there was none. */
  unschedule(name: string, key?: string): Promise<boolean> {
    return this.units.schedules.unschedule(name, key);
  }

  /** The schedules of queue `name` (or of every queue), with their next and last run. */
  getSchedules(name?: string): Promise<ScheduleInfo[]> {
    return this.units.schedules.getSchedules(name);
  }

  /** Stops every instance's claims of the queue at their next claim (fetch() too); send() keeps working. */
  pauseQueue(name: string): Promise<void> {
    return this.units.admin.setPaused(name, true);
  }

  /** Lets every instance claim the queue's jobs again, waking its idle workers at once. */
  resumeQueue(name: string): Promise<void> {
    return this.units.admin.setPaused(name, false);
  }

  /** The keys of a key_strict_fifo queue held back by a failed job (`deleteJob` or `retry` it to unblock). */
  getBlockedKeys(name: string): Promise<string[]> {
    return this.units.admin.getBlockedKeys(name);
  }

  /** Starts a worker loop for `name` that calls `handler` for each job (each claim's jobs, with `batch`); returns its id. */
  work<T = unknown, O extends WorkOptions = WorkOptions>(
    name: JobName<T>,
    options: O | undefined,
    handler: HandlerFor<O, T>,
  ): Promise<string> {
    return this.units.registry.work(name, options, handler as JobHandler | BatchHandler);
  }

  /**
   * Stops the loops of a queue (by name) or one loop (by id, or by the queue's name and `options.id`), draining
   * like shutdown does; `options.wait: false` returns without waiting for their running handlers.
   */
  offWork(nameOrId: string, options?: OffWorkOptions): Promise<void> {
    return this.units.registry.offWork(nameOrId, options);
  }

  /** Worker loops running in this instance. */
  get workerCount(): number {
    return this.units.registry.count;
  }

  /** Handlers running in this instance right now, across all loops. */
  get activeJobCount(): number {
    return this.units.registry.activeJobCount;
  }

  /** Stops every worker loop: no new claims, in-flight handlers drain or are handed back. `send` keeps working. */
  stopWorkers(): Promise<void> {
    return this.units.registry.stopAll(this.config.shutdownTimeoutMs);
  }

  /**
   * Stops this instance's loops of queue `name` (of every queue without a name), draining as at shutdown, and holds
   * them, and any made meanwhile, until startWorking(). Other instances go on; pauseQueue() stops them all.
   */
  stopWorking(name?: string): Promise<void> {
    return this.units.registry.stopWorking(name);
  }

  /** Starts again the loops stopWorking() (or the `startWorkers: false` option) holds, of `name` or of every queue. */
  startWorking(name?: string): Promise<void> {
    return this.units.registry.startWorking(name);
  }

  /**
   * Stops loops and passes, lets calls made settle, ends the pool it made, within `shutdownTimeoutMs` (`graceful:
   * false`: handlers aborted at once). Bad options reject once it has closed all the same. Also `stop()`, pg-boss's name.
   */
  async close(...[options]: [options?: CloseOptions]): Promise<void> {
    const { graceful, refused } = parseCloseOptions(options);
    await this.units.runtime.close((timeoutMs) => this.units.registry.stopAll(graceful ? timeoutMs : 0, true));
    if (refused) throw refused;
  }

  stop(...[options]: [options?: CloseOptions]): Promise<void> {
    return this.close(options);
  }
}

/** The schedules unit of `queue`: for the Nest explorer, which keeps a handler's schedule in step at bootstrap. */
export function schedulesOf(queue: PgQueue): Schedules {
  return queue['units'].schedules;
}

/** The runtime of `queue`: for the dashboard's module, the repository's tests and tools (no entry point exports it). */
export function runtimeOf(queue: PgQueue): Runtime {
  return queue['units'].runtime;
}

/** The worker loops of `queue`: for nestjs-pgqueue/testing, whose drain and runJob wake a queue's loops and wait for them. */
export function loopRegistryOf(queue: PgQueue): LoopRegistry {
  return queue['units'].registry;
}
