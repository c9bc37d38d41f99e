import { EventEmitter } from 'node:events';
import pg from 'pg';
import { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './config.js';
import { callerExecutor, drizzlePool, inTransaction, pgExecutor, withEngineSession, type Executor } from './db.js';
import { closedError, PoolGate } from './pool-gate.js';
import { InvalidOptionError, QueueError, QueueExistsError, QueueNotFoundError } from './errors.js';
import { migrate, type MigrationResult } from './migrate.js';
import { Notifier } from './notifier.js';
import { Supervisor } from './supervisor.js';
import {
  parseQueueOptions,
  parseSendOptions,
  parseWorkOptions,
  QUEUE_DEFAULTS,
  type ParsedQueueOptions,
  type ParsedSendOptions,
} from './options.js';
import { buildStatements, heartbeatArgs, insertArgs, type Statements } from './sql/index.js';
import type { Job, JobHandler, JobInsert, JobRef, JobWithMetadata, QueueLogger, QueueOptions, QueueResult, FlowJob, SendOptions, WorkOptions } from './types.js';
import { int, MAX_SECONDS, optKey, queueName, record, toJson } from './validate.js';
import { claimJobs, LazyAbort, newWorkerId, PROFILE_RECHECK_MS, toJob, Worker, type WorkerContext } from './worker.js';
import { SQLSTATE, sqlState } from './pg-errors.js';
import { QueueRouter } from './queue-router.js';
import { Maintenance, type MaintenanceResult } from './maintenance.js';
import { JobControl, type ChangeResult } from './job-control.js';

export type { ChangeResult } from './job-control.js';
import { toQueueResult, type QueueRow } from './rows.js';
import { flowByQueue, flowEdges, parseFlow } from './flow-graph.js';


/** Options of `fetch`. */
export interface FetchOptions {
  batchSize?: number;
  minPriority?: number;
  maxPriority?: number;
}

/** Policies whose unique indexes no queued job can meet: their inserts need no conflict check. */
const POLICIES_FREE_ON_INSERT: ReadonlySet<string> = new Set(['standard', 'singleton', 'key_strict_fifo']);

const consoleLogger: QueueLogger = {
  log: (m) => console.log(`[pgqueue] ${m}`),
  warn: (m) => console.warn(`[pgqueue] ${m}`),
  error: (m, stack) => console.error(`[pgqueue] ${m}${stack ? `\n${stack}` : ''}`),
};

/**
 * The queue engine, free of Nest: owns (or borrows) a pool, installs the tables, sends, claims and
 * settles jobs, and runs worker loops. Emits `error` for failures of its own loops (never for a
 * handler's throw) and `warning`; with no listener these go to the logger.
 */
export class PgQueue extends EventEmitter {
  readonly config: ResolvedConfig;
  protected readonly log: QueueLogger;
  private readonly statements: Statements;
  private pool: pg.Pool | null = null;
  /** The engine's statements and checkouts on `pool`, which close() waits for before it ends the pool. */
  private gate: PoolGate | null = null;
  private exec: Executor | null = null;
  private starting: Promise<void> | null = null;
  private closed = false;
  /** Set when close() begins: every call made from then on rejects with QUEUE_CLOSED. */
  private closing = false;
  private closingDone: Promise<void> | null = null;
  private notifier: Notifier | null = null;
  private supervisor: Supervisor | null = null;
  private readonly workers = new Map<string, Worker>();
  /** When fetch() last read each queue's profile again after an empty claim (Date.now()). */
  private readonly fetchRecheckAt = new Map<string, number>();
  /** Where each queue's jobs live, and the statements that reach them there. */
  private readonly router: QueueRouter;
  /** The maintenance pass (reaper and key_strict_fifo safety net) this instance runs when it supervises. */
  private readonly maintenance: Maintenance;
  /** The calls by hand on jobs named by id. */
  private readonly jobs: JobControl;
  /** Events counted since start: results refused by the fence (the worker no longer held the job). */
  readonly counters = { staleResults: 0 };
  /** Holder id of jobs claimed by `fetch` (settled by hand). */
  readonly fetcherId = newWorkerId();
  /** What the installer did at start (null when `migrate` is off or before start). */
  migration: MigrationResult | null = null;

  constructor(options: QueueModuleOptions | ResolvedConfig, logger?: QueueLogger) {
    super();
    this.config = Object.isFrozen(options) && 'schemaIdent' in options ? (options as ResolvedConfig) : resolveConfig(options);
    this.log = this.config.logger ?? logger ?? consoleLogger;
    this.statements = buildStatements(this.config.schemaIdent);
    this.router = new QueueRouter(this.config.schemaIdent, this.statements);
    this.jobs = new JobControl({ db: () => this.db(), router: this.router, channel: this.config.channel });
    this.maintenance = new Maintenance({
      statements: this.statements,
      schema: this.config.schema,
      channel: this.config.channel,
      intervalSeconds: this.config.maintenanceIntervalSeconds,
      warning: (message) => this.warning(message),
    });
  }

  /** Connects and installs the tables (when `migrate`); idempotent, and called by every method. */
  start(): Promise<void> {
    if (this.closing) return Promise.reject(closedError());
    this.starting ??= this.open().catch(async (err) => {
      // Forgotten before the pool ends, so a close() that begins meanwhile finds nothing of it to end again.
      const pool = this.pool;
      this.starting = null;
      this.pool = null;
      this.gate = null;
      this.exec = null;
      if (this.config.connectionString) await pool?.end().catch(() => undefined);
      throw err;
    });
    return this.starting;
  }

  private async open(): Promise<void> {
    const cfg = this.config;
    if (cfg.connectionString) {
      // allowExitOnIdle: idle connections never keep the process alive on their own.
      // Its connections open with the engine's session settings (ENGINE_SESSION), unless preparedStatements
      // is off (a transaction-mode pooler).
      const target = cfg.preparedStatements ? withEngineSession(cfg.connectionString) : { connectionString: cfg.connectionString };
      this.pool = new pg.Pool({ ...target, max: cfg.poolSize, allowExitOnIdle: true });
      // An idle connection that the server drops must not crash the process; the next query reconnects.
      this.pool.on('error', (err) => {
        if (!this.closed) this.warning(`idle connection error: ${err.message}`);
      });
    } else {
      this.pool = cfg.pool ?? drizzlePool(cfg.db!);
    }
    // A pool the caller gave keeps its own session settings: statements on it stay unnamed.
    this.gate = new PoolGate(this.pool, cfg.connectionString !== null && cfg.preparedStatements ? this.router.preparedTexts : undefined);
    this.exec = this.gate.exec;
    if (cfg.migrate) this.migration = await migrate(this.pool, cfg.schema, cfg.schemaIdent, this.log);
    if (cfg.supervise) {
      const gate = this.gate;
      this.supervisor = new Supervisor(
        // The pass runs on the gate directly: one running when close() begins still ends.
        () => this.maintenance.run(gate.connect, false).then(() => undefined),
        cfg.maintenanceIntervalSeconds * 1000,
        (err) => this.reportError(err, 'maintenance pass'),
      );
      this.supervisor.start();
    }
  }

  /**
   * One maintenance pass: jobs whose lease or heartbeat ran out go back to the queue (attempt counted), or
   * fail (and go to their dead-letter queue) when no retries remain. Supervising instances call it every
   * `maintenanceIntervalSeconds`; a pass runs only when none ran in the last interval anywhere in the
   * cluster, and never two at once (an advisory lock), so if the instance that usually runs it dies,
   * another takes over within one interval. `force` runs it now regardless of the last run.
   */
  async maintain(options: { force?: boolean } = {}): Promise<MaintenanceResult> {
    await this.start();
    return this.maintenance.run(this.gate!.connect, options.force ?? false);
  }

  /**
   * The engine as started, for a call already under way (sendDebounced's second send): unlike start(), it does
   * not refuse once close() has begun, as the call began before it.
   */
  private ready(): Promise<void> {
    return this.starting ?? this.start();
  }

  private async db(): Promise<Executor> {
    await this.start();
    return this.exec!;
  }

  /** A connection of the engine's own (in flight until released): for statements that must share a transaction. */
  private async connection(): Promise<() => Promise<pg.PoolClient>> {
    await this.start();
    return this.gate!.connect;
  }

  protected warning(message: string): void {
    if (this.listenerCount('warning') > 0) this.emit('warning', message);
    else this.log.warn(message);
  }

  protected reportError(err: unknown, context: string): void {
    const error = err instanceof Error ? err : new Error(String(err));
    if (this.listenerCount('error') > 0) this.emit('error', Object.assign(error, { context }));
    else this.log.error(`${context}: ${error.message}`, error.stack);
  }

  // ---- queues ----

  /** Creates a queue; calling it again with the same options does nothing, with other options throws `QueueExistsError`. */
  async createQueue(name: string, options?: QueueOptions): Promise<void> {
    const created = await this.ensureQueue(name, options);
    if (!created.created && created.differences.length > 0) throw new QueueExistsError(name, created.differences);
  }

  /** Creates the queue if it is missing; an existing queue is left as it is. Reports what differs. */
  async ensureQueue(name: string, options?: QueueOptions): Promise<{ created: boolean; differences: string[] }> {
    queueName('name', name);
    const o = parseQueueOptions(options);
    const d = QUEUE_DEFAULTS;
    const values = [
      name,
      o.policy ?? d.policy,
      o.partition ?? false,
      o.deadLetter ?? null,
      o.warningQueueSize ?? null,
      o.notify ?? d.notify,
      o.retryLimit ?? d.retryLimit,
      o.retryDelay ?? d.retryDelay,
      o.retryBackoff ?? d.retryBackoff,
      o.retryDelayMax ?? d.retryDelayMax,
      o.expireInSeconds ?? d.expireInSeconds,
      o.heartbeatSeconds ?? d.heartbeatSeconds,
      o.deleteAfterSeconds ?? d.deleteAfterSeconds,
      o.retentionSeconds ?? d.retentionSeconds,
      o.concurrencyLimit ?? null,
      o.rateLimit?.count ?? null,
      o.rateLimit?.perSeconds ?? null,
      o.removeOnComplete ?? d.removeOnComplete,
    ];
    const exec = await this.db();
    if (o.deadLetter) await this.assertDeadLetterTarget(exec, o.deadLetter);
    const row = o.partition ? await this.createPartitionedQueue(name, values) : (await exec.query<QueueRow & { created: boolean }>(this.statements.createQueue, values))[0];
    if (!row) throw new QueueError(`queue "${name}" was deleted while being created`, 'QUEUE_RACE');
    return { created: row.created, differences: row.created ? [] : differingSettings(o, row) };
  }

  /** The queue row and its own partition, in one transaction: neither exists without the other. */
  private async createPartitionedQueue(name: string, values: unknown[]): Promise<(QueueRow & { created: boolean }) | undefined> {
    // ensureQueue has started the engine: a call under way is not refused by a close() that began meanwhile.
    return inTransaction(this.gate!.connect, async (client) => {
      // Creating a partition locks the jobs table: give up rather than stall every queue behind a long transaction.
      await client.query(this.statements.setDdlLockTimeout);
      const [row] = (await client.query<QueueRow & { created: boolean }>(this.statements.createQueue, values)).rows;
      if (row?.created) await client.query(this.statements.createQueuePartition, [name]);
      return row;
    });
  }

  /** Changes a queue's settings (not `policy` or `partition`); `null` clears `deadLetter`, `retryDelayMax`, `heartbeatSeconds`. */
  async updateQueue(name: string, options: Omit<QueueOptions, 'policy' | 'partition'>): Promise<void> {
    queueName('name', name);
    const given = record('options', options);
    for (const fixed of ['policy', 'partition']) {
      if (given[fixed] !== undefined) throw new InvalidOptionError(`options.${fixed}`, 'left out: it is fixed when the queue is created', given[fixed]);
    }
    const o = parseQueueOptions(given);
    const patch = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
    const exec = await this.db();
    if (o.deadLetter) await this.assertDeadLetterTarget(exec, o.deadLetter);
    if (o.concurrencyLimit !== undefined || o.rateLimit !== undefined) {
      // Workers in every process claim a limited queue under its lock, and they decide that once: a
      // limit's value may change, but a queue cannot gain or lose its limits after it is created.
      const [row] = await exec.query<QueueRow>(this.statements.getQueues, [[name]]);
      if (!row) throw new QueueNotFoundError(name);
      const stored = toQueueResult(row);
      for (const [field, given, had] of [
        ['options.concurrencyLimit', o.concurrencyLimit, stored.concurrencyLimit],
        ['options.rateLimit', o.rateLimit, stored.rateLimit],
      ] as const) {
        if (given !== undefined && (given === null) !== (had === null)) {
          throw new InvalidOptionError(field, had === null ? 'left out: this queue was created without one' : 'a new value, not null: this queue was created with one', given);
        }
      }
    }
    const rows = await exec.query(this.statements.updateQueue, [name, JSON.stringify(patch)]);
    if (rows.length === 0) throw new QueueNotFoundError(name);
  }

  /** Deletes a queue and all its jobs, in one transaction; refused while another queue names it as its dead letter. */
  async deleteQueue(name: string): Promise<void> {
    queueName('name', name);
    const exec = await this.db();
    const users = (await exec.query<{ name: string }>(this.statements.queuesUsingDeadLetter, [name])).map((r) => r.name);
    if (users.length > 0) {
      throw new QueueError(`queue "${name}" is the dead-letter queue of ${users.map((u) => `"${u}"`).join(', ')}; change their deadLetter first`, 'QUEUE_IN_USE');
    }
    const deleted = await inTransaction(this.gate!.connect, async (client) => {
      await client.query(this.statements.setDdlLockTimeout);
      await client.query(this.statements.deleteQueueJobs, [name]);
      const { rowCount } = await client.query(this.statements.deleteQueue, [name]);
      await client.query(this.statements.dropQueuePartition, [name]);
      return rowCount;
    });
    this.router.forget(name);
    if (deleted === 0) throw new QueueNotFoundError(name);
  }

  /** Deletes the queue's waiting jobs (created, retry); returns how many. */
  async purgeQueue(name: string): Promise<number> {
    queueName('name', name);
    const exec = await this.db();
    await this.router.assertExists(exec, name);
    const rows = await exec.query(this.statements.purgeQueue, [name]);
    return rows.length;
  }

  async getQueue(name: string): Promise<QueueResult | null> {
    queueName('name', name);
    const [row] = await (await this.db()).query<QueueRow>(this.statements.getQueues, [[name]]);
    return row ? toQueueResult(row) : null;
  }

  async getQueues(names?: string[]): Promise<QueueResult[]> {
    if (names !== undefined) {
      if (!Array.isArray(names)) throw new InvalidOptionError('names', 'an array of queue names', names);
      names.forEach((n, i) => queueName(`names[${i}]`, n));
    }
    const rows = await (await this.db()).query<QueueRow>(this.statements.getQueues, [names ?? null]);
    return rows.map(toQueueResult);
  }


  /** The keys of a key_strict_fifo queue held back by a failed job (`deleteJob` or `retry` it to unblock). */
  async getBlockedKeys(name: string): Promise<string[]> {
    queueName('name', name);
    const exec = await this.db();
    if ((await this.router.profile(exec, name)).policy !== 'key_strict_fifo') {
      throw new InvalidOptionError('name', 'a key_strict_fifo queue', name);
    }
    return (await exec.query<{ key: string }>(this.statements.getBlockedKeys, [name])).map((r) => r.key);
  }

  /** A dead-letter queue must exist, and not be key_strict_fifo: copies of failed jobs may carry no key. */
  private async assertDeadLetterTarget(exec: Executor, name: string): Promise<void> {
    if ((await this.router.profile(exec, name)).policy === 'key_strict_fifo') {
      throw new InvalidOptionError('options.deadLetter', 'a queue whose policy is not key_strict_fifo (dead-lettered copies may carry no key)', name);
    }
  }


  // ---- sending ----

  /**
   * Sends one job; returns its id, or null when the queue's policy (or a throttle slot) refused it. With
   * `dedupeKey`, a duplicate returns the id of the pending job that holds the key. With `options.db` the
   * insert joins the caller's transaction.
   */
  async send<T = unknown>(name: string, data?: T, options?: SendOptions): Promise<string | null> {
    queueName('name', name);
    return this.sendOne(name, data, options, parseSendOptions(options));
  }

  /** `underWay`: the second send of one call (sendDebounced), which a close() that began meanwhile does not refuse. */
  private async sendOne(name: string, data: unknown, options: SendOptions | undefined, parsed: ParsedSendOptions, underWay = false): Promise<string | null> {
    const json = toJson('data', data, this.config.maxPayloadBytes);
    // In a caller's transaction too, a send made once close() has begun is refused (start()).
    await (underWay ? this.ready() : this.start());
    const exec = options?.db ? callerExecutor(options.db) : this.exec!;
    const [id] = await this.insertRows(exec, name, [json], [parsed]);
    if (id !== undefined) return id;
    if (parsed.dedupeKey === undefined) return null;
    const [holder] = await this.router.onQueue(exec, name, (st) => exec.query<{ id: string }>(st.findPendingByDedupeKey, [name, parsed.dedupeKey]), (rows) => rows.length === 0);
    return holder?.id ?? null;
  }

  /**
   * Sends at most one job per `seconds`-long time slot (and per `key`): the first send of a slot wins, later
   * ones return null.
   */
  async sendThrottled<T = unknown>(name: string, data: T, options: SendOptions | null | undefined, seconds: number, key?: string): Promise<string | null> {
    queueName('name', name);
    const parsed = this.throttled(options, seconds, key);
    return this.sendOne(name, data, options ?? undefined, parsed);
  }

  /**
   * Like `sendThrottled`, but a send into a slot that is taken is deferred to the start of the next slot
   * instead of dropped; at most one job waits there, so later sends return null.
   */
  async sendDebounced<T = unknown>(name: string, data: T, options: SendOptions | null | undefined, seconds: number, key?: string): Promise<string | null> {
    queueName('name', name);
    const parsed = this.throttled(options, seconds, key);
    const now = await this.sendOne(name, data, options ?? undefined, parsed);
    if (now !== null) return now;
    return this.sendOne(name, data, options ?? undefined, { ...parsed, slotOffset: 1 }, true);
  }

  private throttled(options: SendOptions | null | undefined, seconds: number, key: string | undefined): ParsedSendOptions {
    const parsed = parseSendOptions(options);
    const throttle = int('seconds', seconds, 1, MAX_SECONDS);
    const singletonKey = key === undefined ? parsed.singletonKey : optKey('key', key);
    if (parsed.startAt !== undefined || parsed.startIn !== undefined) {
      throw new InvalidOptionError('options.startAfter', 'left out: a throttled job starts in its time slot', options?.startAfter);
    }
    return { ...parsed, singletonKey, throttle, slotOffset: 0 };
  }

  /** `send` with `startAfter` given separately: a Date, an ISO-8601 string, or seconds from now. */
  sendAfter<T = unknown>(name: string, data: T, options: SendOptions | null | undefined, startAfter: Date | string | number): Promise<string | null> {
    return this.send(name, data, { ...(options ?? {}), startAfter });
  }

  /**
   * Inserts many jobs in one statement; returns the ids of the jobs inserted, in input order. A job that
   * the queue's policy or a dedupe key refuses is skipped (its id is missing from the result).
   */
  async insert<T = unknown>(name: string, jobs: JobInsert<T>[], options?: Pick<SendOptions, 'db'>): Promise<string[]> {
    queueName('name', name);
    if (!Array.isArray(jobs)) throw new InvalidOptionError('jobs', 'an array of jobs', jobs);
    const opts = record('options', options);
    const parsed = jobs.map((job, i) => parseSendOptions(job, `jobs[${i}]`));
    const data = jobs.map((job, i) => toJson(`jobs[${i}].data`, job.data, this.config.maxPayloadBytes));
    if (jobs.length === 0) return [];
    const exec = opts.db ? (await this.start(), callerExecutor(opts.db)) : await this.db();
    return this.insertRows(exec, name, data, parsed);
  }

  /** Inserts jobs of one queue; its callers (send, insert, flow) have started the engine. */
  private async insertRows(exec: Executor, name: string, data: (string | null)[], jobs: ParsedSendOptions[]): Promise<string[]> {
    const profile = await this.router.profile(exec, name);
    if (profile.policy === 'key_strict_fifo') {
      jobs.forEach((job, i) => {
        if (job.singletonKey === undefined) {
          const field = jobs.length === 1 && data.length === 1 ? 'options.singletonKey' : `jobs[${i}].singletonKey`;
          throw new InvalidOptionError(field, `a key on every job of key_strict_fifo queue "${name}"`, undefined);
        }
      });
    }
    // A column no job sets goes as one null (unnest pads it), not as an array of nulls. Which keys any job
    // sets is found in one pass over the jobs (a search per column was 20 passes).
    const set = new Set<string>();
    for (const job of jobs) for (const key in job) if (job[key as keyof ParsedSendOptions] !== undefined) set.add(key);
    const col = <K extends keyof ParsedSendOptions>(key: K) => (set.has(key) ? jobs.map((j) => j[key] ?? null) : null);
    // Inside a caller's transaction the checked insert is always used: if the cached policy were out of
    // date, an unchecked insert's unique violation would abort the caller's transaction.
    const mayConflict = exec !== this.exec || !POLICIES_FREE_ON_INSERT.has(profile.policy) || jobs.some((j) => j.dedupeKey !== undefined || j.throttle !== undefined);
    const args = insertArgs(name, `[${data.map((d) => d ?? 'null').join(',')}]`, col, jobs.map((j) => j.slotOffset ?? 0));
    const insert = (text: string) => exec.query<{ id: string }>(text, args);
    // Only a batch of two or more jobs with keys may hold a key_strict_fifo job that waits behind another.
    const keyed = jobs.length >= 2 && jobs.some((j) => j.singletonKey !== undefined);
    const checked = keyed ? this.statements.insertJobsKeyed : this.statements.insertJobs;
    let rows: { id: string }[];
    if (mayConflict) {
      rows = await insert(checked);
    } else {
      try {
        rows = await insert(keyed ? this.statements.insertJobsKeyedUnchecked : this.statements.insertJobsUnchecked);
      } catch (err) {
        // The cached policy was out of date (the queue was deleted and created again with another policy).
        // The refused statement wrote nothing (it ran on its own, outside any transaction).
        if (sqlState(err) !== SQLSTATE.uniqueViolation) throw err;
        this.router.forget(name);
        rows = await insert(checked);
      }
    }
    // The insert reads the queue's row: no row back means no such queue, or every job was refused.
    if (rows.length === 0) await this.router.assertExists(exec, name);
    return rows.map((r) => r.id);
  }

  /**
   * Inserts jobs that wait for each other, in one transaction: a job runs only once every job it
   * `dependsOn` (by `ref`) has completed; when one of those fails for good or is cancelled, it is failed
   * or cancelled as its `onParentFailure` says. Returns each ref's job id. With `options.db` the jobs join
   * the caller's transaction (roll it back if this throws).
   */
  async flow(jobs: FlowJob[], options?: Pick<SendOptions, 'db'>): Promise<Record<string, string>> {
    const byRef = parseFlow(jobs, this.config.maxPayloadBytes);
    const opts = record('options', options);
    const run = async (exec: Executor): Promise<Record<string, string>> => {
      const ids: Record<string, string> = {};
      for (const [queue, group] of flowByQueue(byRef)) {
        const inserted = await this.insertRows(exec, queue, group.map((g) => g.entry.data), group.map((g) => g.entry.parsed));
        if (inserted.length !== group.length) {
          throw new QueueError(`flow: queue "${queue}" refused ${group.length - inserted.length} of its jobs (policy or dedupeKey); nothing was inserted`, 'FLOW_REFUSED');
        }
        group.forEach((g, i) => (ids[g.ref] = inserted[i]!));
      }
      const edges = flowEdges(byRef, ids);
      if (edges.length > 0) {
        await exec.query(this.statements.insertJobDeps, [edges.map((x) => x[0]), edges.map((x) => x[1]), edges.map((x) => x[2]), edges.map((x) => x[3])]);
      }
      return ids;
    };
    if (opts.db) {
      await this.start();
      return run(callerExecutor(opts.db));
    }
    return inTransaction(await this.connection(), (client) => run(pgExecutor(client)));
  }

  // ---- working by hand ----

  /** Claims up to `batchSize` runnable jobs (default 1); settle them with `complete` or `fail`. */
  async fetch<T = unknown>(name: string, options?: FetchOptions): Promise<Job<T>[]> {
    queueName('name', name);
    const o = record('options', options) as FetchOptions;
    const batchSize = o.batchSize === undefined ? 1 : int('options.batchSize', o.batchSize, 1, 10_000);
    const minPriority = o.minPriority === undefined ? null : int('options.minPriority', o.minPriority, -2_147_483_648);
    const maxPriority = o.maxPriority === undefined ? null : int('options.maxPriority', o.maxPriority, -2_147_483_648);
    const exec = await this.db();
    const connect = this.gate!.connect;
    let profile = await this.router.profile(exec, name);
    let statements = this.router.statementsFor(profile);
    const claim = () => claimJobs({ exec, statements, connect, schema: this.config.schema }, name, profile, batchSize, this.fetcherId, { minPriority, maxPriority });
    let rows: Awaited<ReturnType<typeof claim>> = [];
    let failure: unknown = null;
    try {
      rows = await claim();
    } catch (err) {
      // undefined_table: the queue's partition is gone (the queue was made again), read below at once
      if (sqlState(err) !== SQLSTATE.undefinedTable) throw err;
      failure = err;
      this.fetchRecheckAt.delete(name);
    }
    // An empty claim may come from a table the queue's jobs left: its profile is read again, at most every 5 s.
    if (rows.length === 0 && Date.now() - (this.fetchRecheckAt.get(name) ?? 0) >= PROFILE_RECHECK_MS) {
      this.fetchRecheckAt.set(name, Date.now());
      const now = await this.router.reread(exec, name);
      if (now === null) throw new QueueNotFoundError(name);
      if (this.router.statementsFor(now) !== statements) {
        profile = now;
        statements = this.router.statementsFor(now);
        failure = null;
        rows = await claim();
      }
    }
    if (failure) throw failure;
    return rows.map((row) =>
      toJob<T>(row, new LazyAbort(), async () => {
        await exec.query(statements.heartbeatJobs, heartbeatArgs(name, [row], this.fetcherId));
      }),
    );
  }

  /** Completes active jobs with `output`; a `{ id, retryCount }` ref completes only that attempt. */
  complete(name: string, ids: JobRef | JobRef[], output?: unknown): Promise<ChangeResult> {
    return this.jobs.complete(name, ids, output);
  }

  /** Fails jobs that have not finished: retried while retries remain, else failed. */
  fail(name: string, ids: JobRef | JobRef[], error?: unknown): Promise<ChangeResult> {
    return this.jobs.fail(name, ids, error);
  }

  /** Cancels jobs that have not finished; a running handler's result is then discarded. */
  cancel(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.jobs.cancel(name, ids);
  }

  /** Brings cancelled jobs back to the queue. */
  resume(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.jobs.resume(name, ids);
  }

  /**
   * Puts failed jobs back in the queue to run again. All or nothing: a job that is not failed makes it
   * throw `JobStateError` (an unknown id `JobNotFoundError`) and nothing changes.
   */
  retry(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.jobs.retry(name, ids);
  }

  /**
   * Moves dead-lettered jobs of the dead-letter queue `name` (waiting or failed there) back to the queues
   * they came from, as new jobs under those queues' settings. `ids` limits it to some jobs, `limit` caps
   * how many move (default 1000). Returns the new jobs' ids.
   */
  redrive(name: string, options?: { ids?: string[]; limit?: number }): Promise<{ moved: number; ids: string[] }> {
    return this.jobs.redrive(name, options);
  }

  /** Deletes jobs in any state. */
  deleteJob(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.jobs.deleteJob(name, ids);
  }

  /** The job with id `id` in queue `name`, in any state, with its metadata; null when there is none. */
  getJobById<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T> | null> {
    return this.jobs.getJobById<T>(name, id);
  }

  // ---- worker loops ----

  /** Starts a worker loop for `name` that calls `handler` for each job; returns the loop's id. */
  async work<T = unknown>(name: string, options: WorkOptions | undefined, handler: JobHandler<T>): Promise<string> {
    queueName('name', name);
    const parsed = parseWorkOptions(options);
    if (typeof handler !== 'function') throw new InvalidOptionError('handler', 'a function', handler);
    if (!this.config.workers) throw new QueueError('this instance was configured with workers: false and never claims jobs', 'WORKERS_DISABLED');
    const exec = await this.db();
    const profile = await this.router.profile(exec, name);
    if (parsed.groupConcurrency && profile.policy !== 'standard') {
      throw new InvalidOptionError('options.groupConcurrency', `left out on a ${profile.policy} queue (group limits apply to standard queues)`, options?.groupConcurrency);
    }
    await this.ensureNotifier();
    // close() may have begun while we awaited: a loop started now would outlive it.
    if (this.closing) throw closedError();
    const ctx: WorkerContext = {
      exec,
      profile,
      connect: this.gate!.connect,
      staleResult: () => void this.counters.staleResults++,
      statements: this.router.statementsFor(profile),
      recheck: async () => {
        const now = await this.router.reread(exec, name);
        return now ? { profile: now, statements: this.router.statementsFor(now) } : null;
      },
      schema: this.config.schema,
      channel: this.config.channel,
      log: this.log,
      error: (err, context) => this.reportError(err, context),
    };
    const worker = new Worker(ctx, name, parsed, handler as JobHandler);
    this.workers.set(worker.id, worker);
    worker.start();
    return worker.id;
  }

  /** Stops the loops of a queue (by name) or one loop (by id), draining like shutdown does. */
  async offWork(nameOrId: string): Promise<void> {
    await this.stopLoops((w) => w.id === nameOrId || w.queue === nameOrId, this.config.shutdownTimeoutMs);
  }

  /** Stops the loops that `which` picks, each draining for at most `timeoutMs`. */
  private async stopLoops(which: (w: Worker) => boolean, timeoutMs: number): Promise<void> {
    await Promise.all(
      [...this.workers.values()].filter(which).map(async (w) => {
        await w.stop(timeoutMs);
        this.workers.delete(w.id);
      }),
    );
  }

  private async ensureNotifier(): Promise<void> {
    if (!this.config.useListenNotify || this.notifier || this.closing) return;
    const options = (this.pool as pg.Pool & { options: pg.ClientConfig }).options;
    this.notifier = new Notifier(
      { ...options },
      this.config.channel,
      (queue) => this.workers.forEach((w) => w.queue === queue && w.notify()),
      () => this.workers.forEach((w) => w.notify()),
      this.log,
    );
    try {
      await this.notifier.start();
    } catch (err) {
      // Polling still finds every job; the notifier keeps trying in the background.
      this.reportError(err, 'opening the LISTEN connection');
    }
  }

  /** Worker loops running in this instance. */
  get workerCount(): number {
    return this.workers.size;
  }

  /** Handlers running in this instance right now, across all loops. */
  get activeJobCount(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.activeCount;
    return n;
  }

  /** Stops every worker loop: no new claims, in-flight handlers drain or are handed back. `send` keeps working. */
  async stopWorkers(): Promise<void> {
    await this.stopAll(this.config.shutdownTimeoutMs);
  }

  private async stopAll(timeoutMs: number): Promise<void> {
    await this.stopLoops(() => true, timeoutMs);
    await this.notifier?.stop();
    this.notifier = null;
  }

  /**
   * Stops the loops and maintenance, waits for the calls already made to settle, then closes the pool if the
   * queue created it (never a pool it was handed); all of it within `shutdownTimeoutMs` (the loops' own drain
   * counts against it). Every call made once close() has begun rejects with QUEUE_CLOSED. A call made before
   * it and still in flight at the deadline rejects with QUEUE_CLOSED too when the queue ends its own pool; on
   * a pool it was handed, it runs there and settles when it does.
   */
  close(): Promise<void> {
    this.closing = true;
    this.closingDone ??= this.shutdown();
    return this.closingDone;
  }

  private async shutdown(): Promise<void> {
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    const left = () => Math.max(0, deadline - Date.now());
    await this.starting?.catch(() => undefined);
    // A maintenance pass on a connection that no longer answers must not hold close() past its deadline.
    const supervisor = this.supervisor?.stop();
    await Promise.all([this.stopAll(left()), supervisor && within(supervisor, left())]);
    this.supervisor = null;
    const owned = this.config.connectionString !== null;
    // The gate stays: a call that got past start() before close() began meets QUEUE_CLOSED there, not a null.
    const unsettled = (await this.gate?.shut(left(), owned)) ?? 0;
    if (unsettled > 0) {
      this.warning(owned
        ? `${unsettled} call(s) still waiting for the database when the queue closed were rejected`
        : `${unsettled} call(s) were still running when the queue closed; they finish on the pool it was given`);
    }
    this.closed = true;
    // pg-pool's end() waits for every connection still checked out (a statement the server has not answered);
    // past the deadline close() returns, and the pool ends when they do.
    if (owned && this.pool && !(await within(this.pool.end(), Math.max(left(), 250)))) {
      this.warning('the pool had connections still in use when the queue closed; it ends once they are answered');
    }
    this.pool = null;
  }
}


/** Waits for `promise` at most `ms`; true when it settled in time (a rejection counts as settled). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}



function differingSettings(o: ParsedQueueOptions, row: QueueRow): string[] {
  const stored = toQueueResult({ ...row, queued: 0, deferred: 0, ready: 0, ready_oldest: null, active: 0, failed: 0, total: 0, table_name: '', created_on: new Date(), updated_on: new Date() });
  return Object.entries(o)
    .filter(([key, value]) => value !== undefined && JSON.stringify(stored[key as keyof QueueResult]) !== JSON.stringify(value))
    .map(([key, value]) => `${key} is ${JSON.stringify(stored[key as keyof QueueResult])}, asked ${JSON.stringify(value)}`);
}
