// The queue engine's public face, free of Nest: every public method is one delegation to the unit that owns it
// (engine-units.ts wires them: runtime.ts for the lifecycle, queue-admin, sender, flows, fetcher, job-control, worker-registry).
// The sending calls are declared in sending-calls.ts, the calls on jobs by id in job-calls.ts, which this class extends.
import { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './config/config.js';
import type { JobName } from './job-definition.js';
import { engineUnits, type EngineUnits } from './runtime/engine-units.js';
import { parseForce } from './config/options.js';
import { checkHealth, type HealthReport, type HealthThresholds } from './stats/health.js';
import { consoleLogger, lastResort } from './runtime/console-logger.js';
import { asWarning, type QueueWarning } from './events.js';
import { JobCalls } from './job-calls.js';
import type { MaintenanceResult } from './passes/maintenance.js';
import type { MonitorResult } from './passes/monitor.js';
import type { MigrationResult } from './runtime/migrate.js';
import type { Runtime } from './runtime/runtime.js';
import type { Schedules } from './queues/schedules.js';
import type { LoopRegistry } from './worker/registry.js';
import type {
  BatchHandler,
  HandlerFor,
  JobHandler,
  OffWorkOptions,
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

export type { ChangeResult, CompleteOptions } from './jobs/control.js';
export type { RedriveOptions, RedriveResult } from './jobs/redrive.js';

export type { FetchOptions } from './jobs/fetcher.js';
export type { FindJobsOptions, JobPage } from './jobs/finder.js';

/**
 * The queue engine, free of Nest: owns (or borrows) a pool, installs the tables, sends, claims and
 * settles jobs, and runs worker loops. Emits `error` for failures of its own loops (never for a
 * handler's throw) and `warning`; with no listener these go to the logger.
 */
export class PgQueue extends JobCalls {
  readonly config: ResolvedConfig;
  protected readonly log: QueueLogger;
  /** Events counted since start: results refused by the fence (the worker no longer held the job). */
  readonly counters: { staleResults: number };
  protected readonly units: EngineUnits;

  constructor(options: QueueModuleOptions | ResolvedConfig, logger?: QueueLogger) {
    super();
    this.config = Object.isFrozen(options) && 'schemaIdent' in options ? options : resolveConfig(options);
    this.log = this.config.logger ?? logger ?? consoleLogger;
    this.units = engineUnits(this.config, this.log, {
      warning: (warning) => this.warning(asWarning(warning)),
      error: (err, context) => this.reportError(err, context),
      listens: (name) => this.listenerCount(name) > 0,
      job: (name, ...payload) => {
        // a listener that throws must not break the engine's work that emitted the event
        try {
          (this.emit as (n: string, ...a: unknown[]) => boolean)(name, ...payload);
        } catch (err) {
          this.reportError(err, `a "${name}" listener`);
        }
      },
    });
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
   * `maintenanceIntervalSeconds`, once across the cluster; `force` runs it now regardless of the last run.
   */
  maintain(options: { force?: boolean } = {}): Promise<MaintenanceResult> {
    return this.units.runtime.maintain(parseForce(options));
  }

  /**
   * Emits a warning, or logs it without a listener. Never throws: it is called from timers, from the LISTEN
   * connection's handlers and from the middle of a claim, where a listener's or a logger's throw would end the
   * process or strand claimed jobs. What throws is logged, as a last resort, to the console.
   */
  protected warning(warning: QueueWarning): void {
    try {
      if (this.listenerCount('warning') > 0) this.emit('warning', warning);
      else this.log.warn(warning.message);
    } catch (err) {
      lastResort(`a warning ("${warning.message}") could not be reported`, err);
    }
  }

  /** Emits an error, or logs it without a listener. Never throws (as warning()). */
  protected reportError(err: unknown, context: string): void {
    const error = err instanceof Error ? err : new Error(String(err));
    try {
      if (this.listenerCount('error') > 0) this.emit('error', Object.assign(error, { context }));
      else this.log.error(`${context}: ${error.message}`, error.stack);
    } catch (thrown) {
      lastResort(`an error (${context}: ${error.message}) could not be reported`, thrown);
    }
  }

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
   * cluster-wide; `force` runs one now regardless of the last one's time.
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
   * Stops the loops and passes, lets the calls already made settle, and closes the pool if the queue made it; all
   * within `shutdownTimeoutMs`. Calls made once it has begun reject with QUEUE_CLOSED (README, "Guarantees").
   */
  close(): Promise<void> {
    return this.units.runtime.close((timeoutMs) => this.units.registry.stopAll(timeoutMs, true));
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
export function workersOf(queue: PgQueue): LoopRegistry {
  return queue['units'].registry;
}
