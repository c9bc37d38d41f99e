// The engine's runtime: what every unit of the engine reads (configuration, logger, statements, the queue router,
// counters) and the lifecycle they share (the pool, the gate that close() waits on, the maintenance supervisor).
// Units receive it and read it; only start() and close() change it.
import pg from 'pg';
import type { ResolvedConfig } from '../config/config.js';
import { drizzlePool, openEnginePool, StatementNames, type Executor } from './db.js';
import { closedError, PoolGate } from './pool-gate.js';
import { within } from './deadline.js';
import { startupError } from './startup-error.js';
import { QueueError } from '../errors.js';
import { installedVersion, LATEST_VERSION, migrate, MIGRATION_LOCKS, type MigrationResult } from './migrate.js';
import { Maintenance, type MaintenanceResult } from '../passes/maintenance.js';
import { QueueMonitor, type MonitorResult } from '../passes/monitor.js';
import { QueueRouter } from '../queues/router.js';
import { buildStatements, type Statements } from '../sql/index.js';
import { engineSessionMarked } from '../sql/migrate.js';
import { loadTracing, type Tracing } from './tracing.js';
import type { EngineEvents } from '../events.js';
import { PassLane, Supervisor } from '../passes/supervisor.js';
import type { QueueLogger } from '../types.js';

/** The shared state of one engine, and its connection lifecycle. */
export class Runtime {
  readonly statements: Statements;
  /** Where each queue's jobs live, and the statements that reach them there. */
  readonly router: QueueRouter;
  /** Events counted since start: results refused by the fence (the worker no longer held the job). */
  readonly counters = { staleResults: 0 };
  /** What the installer did at start (null when `migrate` is off or before start). */
  migration: MigrationResult | null = null;
  /** Spans around sends and attempts, once started (null: tracing off, or @opentelemetry/api not installed). */
  tracing: Tracing | null = null;
  /** The maintenance pass (reaper, key_strict_fifo safety net, retention) this instance runs when it supervises. */
  private readonly maintenance: Maintenance;
  /** The monitor pass this instance runs when it supervises; getQueue's `force` recounts through it. */
  private readonly monitor: QueueMonitor;
  private pool: pg.Pool | null = null;
  /** The statements the engine's own pool prepares, until a pooler shows they do not last (null: none are). */
  private names: StatementNames | null = null;
  /** How the start found the engine's session settings refused or dropped on the pool's way (null: they hold, or none asked). */
  private sessionLost: string | null = null;
  /** Whether a LISTEN on the pool's way was found to hear nothing (WakeListener's hearing check). */
  private listenDeafFound = false;
  /** The LISTEN connection's keeper, told when it must check again or close. */
  private readonly listenWatchers: { check(): void; deaf(): void }[] = [];
  /** The engine's statements and checkouts on `pool`, which close() waits for before it ends the pool. */
  private gate: PoolGate | null = null;
  private starting: Promise<void> | null = null;
  private supervisor: Supervisor | null = null;
  private monitorSupervisor: Supervisor | null = null;
  /** Units that run beside the engine from its start to its close (the cluster registry). */
  private readonly attached: { start(): void; stop(): Promise<void> }[] = [];
  /** Set when close() begins: every call made from then on rejects with QUEUE_CLOSED. */
  private closingFlag = false;
  private closed = false;
  private closingDone: Promise<void> | null = null;
  /** The pool's 'error' listener (see open()): one function, so that close() can take it off a pool handed in. */
  private readonly onIdleError = (err: Error): void => {
    if (!this.closed) this.events.warning(`idle connection error: ${err.message}`);
  };

  constructor(
    readonly config: ResolvedConfig,
    readonly log: QueueLogger,
    readonly events: EngineEvents,
  ) {
    this.statements = buildStatements(config.schemaIdent);
    this.router = new QueueRouter(config.schemaIdent, this.statements);
    this.maintenance = new Maintenance({
      statements: this.statements,
      schema: config.schema,
      channel: config.channel,
      intervalSeconds: config.maintenanceIntervalSeconds,
      warning: (message) => events.warning(message),
      error: (err, context) => events.error(err, context),
      events,
    });
    this.monitor = new QueueMonitor({
      statements: this.statements,
      schema: config.schema,
      intervalSeconds: config.monitorIntervalSeconds,
      persistQueueStats: config.persistQueueStats,
      warningQueueSize: config.warningQueueSize,
      queueStatRetentionDays: config.queueStatRetentionDays,
      warning: (warning) => events.warning(warning),
      error: (err, context) => events.error(err, context),
    });
  }

  /** True once close() has begun. */
  get closing(): boolean {
    return this.closingFlag;
  }

  /**
   * Connects and installs the tables (when `migrate`); idempotent. Rejects once close() has begun, and on a server
   * older than the queue supports (migrate() and installedVersion() read its version in their first statement).
   */
  start(): Promise<void> {
    if (this.closingFlag) return Promise.reject(closedError());
    this.starting ??= this.open().catch(async (err) => {
      // Forgotten before the pool ends, so a close() that begins meanwhile finds nothing of it to end again.
      const pool = this.pool;
      this.starting = null;
      this.pool = null;
      this.gate = null;
      if (this.config.connectionString) await pool?.end().catch(() => undefined);
      else pool?.removeListener('error', this.onIdleError);
      throw err;
    });
    return this.starting;
  }

  /**
   * The engine as started, for a call already under way (sendDebounced's second send): unlike start(), it does
   * not refuse once close() has begun, as the call began before it.
   */
  ready(): Promise<void> {
    return this.starting ?? this.start();
  }

  /** The engine's executor, starting the engine if need be. */
  async db(): Promise<Executor> {
    await this.start();
    return this.gate!.exec;
  }

  /** The engine's executor once started (its callers have awaited start() or ready()). */
  get exec(): Executor {
    if (!this.gate) throw new Error('the engine has not started');
    return this.gate.exec;
  }

  /** The executor for statements the engine sends on its own, not for a caller (see PoolGate.background). */
  get background(): Executor {
    if (!this.gate) throw new Error('the engine has not started');
    return this.gate.background;
  }

  /** Connections of the engine's own (in flight until released), once started: for statements that share a transaction. */
  get connect(): () => Promise<pg.PoolClient> {
    if (!this.gate) throw new Error('the engine has not started');
    return this.gate.connect;
  }

  /**
   * Whether statements are prepared (named) on the engine's connections: only on a pool the engine made with
   * its session settings, and not behind a transaction-mode pooler (found, or preparedStatements: false).
   */
  get namesStatements(): boolean {
    return this.names?.active ?? false;
  }

  /** The settings the engine's pool connects with. */
  get connectionOptions(): pg.ClientConfig {
    return { ...(this.pool as pg.Pool & { options: pg.ClientConfig }).options };
  }

  /**
   * Where the LISTEN connection goes: the `listen` option's server, else the pool's, unless a LISTEN there was
   * found deaf (null: off, as behind a transaction-mode pooler, where it hears nothing).
   */
  listenTarget(): pg.ClientConfig | null {
    if (this.config.listen) return { ...this.config.listen };
    return this.listenDeafFound ? null : this.connectionOptions;
  }

  /**
   * Whether the LISTEN connection must show that it hears what the pool sends (WakeListener's hearing check): unless
   * the start showed the engine's own pool reaching a server that keeps its session settings (openEnginePool).
   */
  get listenUnproven(): boolean {
    const cfg = this.config;
    return (
      cfg.connectionString === null ||
      cfg.listen !== null ||
      cfg.preparedStatements === false ||
      this.sessionLost !== null ||
      (this.names !== null && !this.names.active)
    );
  }

  /** A statement prepared on one of the pool's connections was lost (see StatementNames): none is named from now on. */
  lostPreparedStatement(err: unknown): void {
    this.names?.lose(err);
  }

  /** Told when LISTEN must be checked again (`check`), and when it was found deaf (`deaf`). */
  watchListen(watcher: { check(): void; deaf(): void }): void {
    this.listenWatchers.push(watcher);
  }

  /** A pooler warning, with where LISTEN goes now ('pool': still to be checked, which the message then says). */
  private poolerWarning(message: string): void {
    const cfg = this.config;
    const listen = !cfg.useListenNotify || !cfg.workers || this.listenDeafFound ? 'off' : cfg.listen ? 'direct' : 'pool';
    const checked =
      listen === 'pool'
        ? '; the LISTEN connection is checked once open (a NOTIFY sent through the pool must reach it) and turned off if it hears nothing'
        : '';
    this.events.warning({ type: 'pooler', message: `${message}${checked}`, listen });
  }

  /** The start found the engine's session settings refused or dropped on the pool's way (`how`): said once. */
  private sessionSettingsLost(how: string): void {
    // a start tried again (its migration failed) finds the same: said once
    if (this.sessionLost !== null) return;
    this.sessionLost = how;
    this.poolerWarning(
      `the way to PostgreSQL ${how}, as a pooler does: the engine's statements run unnamed and without its session settings`,
    );
  }

  /** A prepared statement was lost (StatementNames): said once, and LISTEN checked again. */
  private preparedStatementsLost(err: unknown): void {
    this.poolerWarning(
      `a statement the engine had prepared was lost (${(err as Error).message}), as behind a transaction-mode pooler, after a DEALLOCATE ALL by the app on one of the engine's connections (a transactional handler's), or after a migration changed the columns a statement returns: the engine's statements run unnamed from now on`,
    );
    for (const watcher of this.listenWatchers) watcher.check();
  }

  /**
   * The LISTEN connection heard no NOTIFY sent through the pool within `waitedMs`, twice (WakeListener's hearing
   * check). On the pool's way, as through a transaction-mode pooler: LISTEN goes off and idle loops poll. With the
   * listen option: said, and LISTEN stays (polling finds every job anyway).
   */
  listenDeaf(waitedMs: number): void {
    const heardNothing = `the LISTEN connection heard no NOTIFY sent through the pool within ${waitedMs / 1000} s, twice`;
    if (this.config.listen !== null) {
      this.poolerWarning(
        `${heardNothing}, with the listen option: does listen name the pool's database, straight and not through a transaction-mode pooler? Idle worker loops find jobs by polling (pollingIntervalSeconds) meanwhile`,
      );
      return;
    }
    if (this.listenDeafFound) return;
    this.listenDeafFound = true;
    this.poolerWarning(
      `${heardNothing}, as through a transaction-mode pooler: LISTEN is off, and idle worker loops poll (pollingIntervalSeconds); give listen: { connectionString } straight to PostgreSQL for wake-ups in milliseconds`,
    );
    for (const watcher of this.listenWatchers) watcher.deaf();
  }

  /** One maintenance pass now (see PgQueue.maintain). */
  async maintain(force: boolean): Promise<MaintenanceResult> {
    await this.start();
    return this.maintenance.run(this.gate!.connect, force);
  }

  /** Starts `unit` when the engine starts (call it before start()), and stops it when the engine closes, before the pool. */
  attach(unit: { start(): void; stop(): Promise<void> }): void {
    this.attached.push(unit);
  }

  /** One monitor pass now (see PgQueue.monitor). */
  async monitorPass(force: boolean): Promise<MonitorResult> {
    await this.start();
    return this.monitor.run(this.gate!.connect, force);
  }

  /** Counts the named queues now (getQueue's `force`); with `minAgeSeconds`, those counted longer ago only. */
  async recount(names: readonly string[], minAgeSeconds: number | null = null): Promise<void> {
    await this.start();
    await this.monitor.recount(this.gate!.connect, names, minAgeSeconds);
  }

  private async open(): Promise<void> {
    const cfg = this.config;
    this.tracing = await loadTracing(cfg.tracing);
    let pooler: string | null = null;
    if (cfg.connectionString) {
      // Its connections open with the engine's session settings (ENGINE_SESSION), unless preparedStatements
      // is off or a transaction-mode pooler is on the way (openEnginePool).
      let opened;
      try {
        opened = await openEnginePool(cfg.connectionString, cfg.poolSize, cfg.preparedStatements, engineSessionMarked);
      } catch (err) {
        throw startupError(err, cfg.connectionString);
      }
      this.pool = opened.pool;
      pooler = opened.pooler;
      if (pooler === null && cfg.preparedStatements !== false)
        this.names = new StatementNames(this.router.preparedTexts, (err) => this.preparedStatementsLost(err));
    } else {
      this.pool = cfg.pool ?? drizzlePool(cfg.db!);
    }
    // An idle connection that the server drops (a restart, a terminated backend) makes pg.Pool emit 'error', which
    // ends the process when nothing listens; the next query reconnects. A pool handed in is listened to as long as
    // the engine uses it: close() takes the listener off, leaving the pool as it was found.
    this.pool.on('error', this.onIdleError);
    // A pool the caller gave keeps its own session settings: statements on it stay unnamed.
    this.gate = new PoolGate(this.pool, this.names ?? undefined);
    if (pooler !== null) this.sessionSettingsLost(pooler);
    if (cfg.migrate) {
      try {
        this.migration = await migrate(this.pool, cfg.schema, cfg.schemaIdent, this.log, MIGRATION_LOCKS, () => this.closingFlag);
      } catch (err) {
        throw startupError(err, cfg.connectionString);
      }
    } else {
      await this.checkInstalled(this.pool);
    }
    // the passes and units run on timers: started outside the trace of whatever call started the engine
    if (this.tracing) this.tracing.detached(() => this.startBackground());
    else this.startBackground();
  }

  /**
   * With `migrate: false`, the schema someone else installs: one older than this code would fail its first statement
   * that needs what is missing (every send and claim names the newest columns), so the start is refused instead,
   * in one line that says what to run. A newer one is warned of, as migrate() does.
   */
  private async checkInstalled(pool: pg.Pool): Promise<void> {
    const { schema, schemaIdent, connectionString } = this.config;
    let installed: number;
    try {
      installed = await installedVersion(pool, schema, schemaIdent);
    } catch (err) {
      throw startupError(err, connectionString);
    }
    if (installed < LATEST_VERSION)
      throw new QueueError(
        `schema ${schema} is at version ${installed} and this code needs version ${LATEST_VERSION}: apply the migrations first (npx pgqueue migrate, npx pgqueue migrate --print for the SQL, or migrate: true)`,
        'SCHEMA_OUTDATED',
      );
    if (installed > LATEST_VERSION) this.log.warn(`schema ${schema} is at version ${installed}, newer than this code (${LATEST_VERSION})`);
  }

  /** Starts the maintenance and monitor passes (when supervising) and the attached units. */
  private startBackground(): void {
    const cfg = this.config;
    if (cfg.supervise) {
      const gate = this.gate!;
      // One lane: an instance's passes never hold two of the pool's connections at once.
      const lane = new PassLane();
      // The passes run on the gate directly: one running when close() begins still ends.
      const every = (seconds: number, what: string, pass: () => Promise<unknown>) => {
        const supervisor = new Supervisor(
          () => pass().then(() => undefined),
          seconds * 1000,
          (err) => this.events.error(err, what),
          lane,
        );
        supervisor.start();
        return supervisor;
      };
      this.supervisor = every(cfg.maintenanceIntervalSeconds, 'maintenance pass', () => this.maintenance.run(gate.connect, false));
      this.monitorSupervisor = every(cfg.monitorIntervalSeconds, 'monitor pass', () => this.monitor.run(gate.connect, false));
    }
    for (const unit of this.attached) unit.start();
  }

  /**
   * Closes the engine (see PgQueue.close): `stopLoops` stops the worker loops within the time it is given, while
   * maintenance stops beside them; then the calls already made settle, and the pool ends if the engine made it.
   */
  close(stopLoops: (timeoutMs: number) => Promise<void>): Promise<void> {
    this.closingFlag = true;
    this.closingDone ??= this.shutdown(stopLoops);
    return this.closingDone;
  }

  private async shutdown(stopLoops: (timeoutMs: number) => Promise<void>): Promise<void> {
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    const left = () => Math.max(0, deadline - Date.now());
    await this.starting?.catch(() => undefined);
    // A maintenance pass on a connection that no longer answers must not hold close() past its deadline.
    this.maintenance.stop();
    const supervisor = this.supervisor?.stop();
    const monitor = this.monitorSupervisor?.stop();
    await Promise.all([stopLoops(left()), supervisor && within(supervisor, left()), monitor && within(monitor, left())]);
    this.supervisor = null;
    this.monitorSupervisor = null;
    await Promise.all(this.attached.map((unit) => within(unit.stop(), left())));
    const owned = this.config.connectionString !== null;
    // The gate stays: a call that got past start() before close() began meets QUEUE_CLOSED there, not a null.
    const unsettled = (await this.gate?.shut(left(), owned)) ?? 0;
    if (unsettled > 0) {
      this.events.warning(
        owned
          ? `${unsettled} call(s) still waiting for the database when the queue closed were rejected`
          : `${unsettled} call(s) were still running when the queue closed; they finish on the pool it was given`,
      );
    }
    this.closed = true;
    if (!owned) this.pool?.removeListener('error', this.onIdleError);
    // pg-pool's end() waits for every connection still checked out (a statement the server has not answered);
    // past the deadline close() returns, and the pool ends when they do.
    if (owned && this.pool && !(await within(this.pool.end(), Math.max(left(), 250)))) {
      this.events.warning('the pool had connections still in use when the queue closed; it ends once they are answered');
    }
    this.pool = null;
  }
}
