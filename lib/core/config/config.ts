import type pg from 'pg';
import { InvalidOptionError } from '../errors.js';
import { MODULE_OPTIONS } from './option-keys.js';
import type { QueueLogger } from '../types.js';
import { int, noUnknownKeys, optBool, optInt, record } from './validate.js';

/** How the queue reaches PostgreSQL and how it behaves; see docs/options.md for each default. */
export interface QueueModuleOptions {
  /** A PostgreSQL URL; the queue creates and closes its own pool. */
  connectionString?: string;
  /** An existing pool; the queue uses it and never closes it. */
  pool?: pg.Pool;
  /** A Drizzle node-postgres database; its pool is used and never closed. */
  db?: object;
  /** Schema that holds the queue's tables (default `pgqueue`). */
  schema?: string;
  /** Install or upgrade the tables at start (default true). */
  migrate?: boolean;
  /**
   * Run `@QueueHandler` loops in this instance (default true). With false, what only loops use is refused unless it
   * says off: startWorkers, useListenNotify and logJobFailures true, warningSlowClaimMs above 0.
   */
  workers?: boolean;
  /**
   * Start worker loops as they are made (default true). False: `work()` and `@QueueHandler` make them stopped,
   * claiming nothing, until `startWorking()`.
   */
  startWorkers?: boolean;
  /** Take part in maintenance (default true). */
  supervise?: boolean;
  /** Wake idle workers with LISTEN/NOTIFY; polling stays as the fallback (default true). */
  useListenNotify?: boolean;
  /**
   * Where the LISTEN connection goes, when not where the pool goes: a `pg.ClientConfig` (`{ connectionString }`
   * at least). Behind a transaction-mode pooler, point it straight at PostgreSQL: a LISTEN through the pooler
   * hears nothing, so without it the engine turns LISTEN off there (with a `pooler` warning) and idle loops poll.
   */
  listen?: pg.ClientConfig;
  /**
   * Seconds between monitor passes (default 60): one supervising instance counts each queue's jobs and caches the
   * counts that getQueues() and the health check read.
   */
  monitorIntervalSeconds?: number;
  /** Seconds between maintenance passes (default 60). */
  maintenanceIntervalSeconds?: number;
  /** How long shutdown waits for in-flight handlers, in ms (default 30000). */
  shutdownTimeoutMs?: number;
  /**
   * Keep a time series of monitor passes (default false): each pass stores a snapshot per queue with what was
   * created, completed and failed since the last, and histograms of wait and run times (getQueueStats).
   */
  persistQueueStats?: boolean;
  /**
   * The warningQueueSize of every queue that sets none (pg-boss's constructor option): a `queue-size` warning when its
   * waiting jobs reach this many, as a monitor pass of this instance counts them; an integer ≥ 1 (default none).
   */
  warningQueueSize?: number;
  /** Days a monitor snapshot is kept, 1–3650 (default 7); only with persistQueueStats: true. */
  queueStatRetentionDays?: number;
  /** A worker's claim slower than this many milliseconds emits a `slow-claim` warning, 0–3600000; 0: never (default 1000). */
  warningSlowClaimMs?: number;
  /** Largest accepted `data`, serialised, in bytes (default 1048576). */
  maxPayloadBytes?: number;
  /** Connections in the pool the queue creates from `connectionString` (default 10); refused beside `pool` or `db`. */
  poolSize?: number;
  /**
   * Prepare the engine's statements, and open its connections with its session settings, on the pool it creates
   * from `connectionString`. Left out: yes, unless the engine finds a transaction-mode pooler on the way (PgBouncer
   * `pool_mode = transaction`), where a prepared statement or a session setting does not follow the session; it
   * then works without both and says so once (a `pooler` warning). `true`: the start fails behind such a pooler;
   * `false`: never. Beside `pool` or `db` the engine prepares nothing and keeps the pool's settings: `true` is
   * refused there.
   */
  preparedStatements?: boolean;
  /** Where the engine logs; Nest's Logger by default inside Nest, the console otherwise. */
  logger?: QueueLogger;
  /**
   * Log each failed attempt of a worker's job as a warning, and a job that failed for good as an error
   * (default true). The error itself is kept in the job either way (`output.error`).
   */
  logJobFailures?: boolean;
  /**
   * OpenTelemetry spans for sends and attempts, through `@opentelemetry/api` (an optional peer): unset, traced
   * when the API can be imported; `true` refuses to start without it; `false` never traces.
   */
  tracing?: boolean;
}

/** The resolved configuration: every option present, validated, frozen. */
export interface ResolvedConfig {
  readonly connectionString: string | null;
  readonly pool: pg.Pool | null;
  readonly db: object | null;
  readonly schema: string;
  /** The schema name quoted as an identifier, ready to prefix table names. */
  readonly schemaIdent: string;
  /** The LISTEN/NOTIFY channel of this schema. */
  readonly channel: string;
  readonly migrate: boolean;
  readonly workers: boolean;
  readonly startWorkers: boolean;
  readonly supervise: boolean;
  readonly useListenNotify: boolean;
  /** The LISTEN connection's own settings; null: those of the pool. */
  readonly listen: pg.ClientConfig | null;
  readonly monitorIntervalSeconds: number;
  readonly maintenanceIntervalSeconds: number;
  readonly shutdownTimeoutMs: number;
  readonly persistQueueStats: boolean;
  /** The warningQueueSize of queues that set none (null: none). */
  readonly warningQueueSize: number | null;
  readonly queueStatRetentionDays: number;
  readonly warningSlowClaimMs: number;
  readonly maxPayloadBytes: number;
  readonly poolSize: number;
  /** null: left out (prepared unless a pooler is found at start). */
  readonly preparedStatements: boolean | null;
  readonly logger: QueueLogger | null;
  readonly logJobFailures: boolean;
  /** undefined: trace when @opentelemetry/api can be imported. */
  readonly tracing: boolean | undefined;
}

/** Schema names are spliced into SQL as identifiers, so only this shape is accepted (and the channel name must fit 63 bytes). */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,49}$/;

/** A schema name the engine accepts (InvalidOptionError naming `field` otherwise). */
export function schemaName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !SCHEMA_PATTERN.test(value)) {
    throw new InvalidOptionError(field, 'a lower-case identifier of 1 to 50 characters from [a-z0-9_], not starting with a digit', value);
  }
  return value;
}

/** A schema name (as schemaName accepts it) quoted as an identifier, ready to prefix table names. */
export function quotedSchema(schema: string): string {
  return `"${schema}"`;
}

/** Parses module options once, at the edge: `forRoot`, `forRootAsync` and plain scripts all call this. */
export function resolveConfig(input: unknown): ResolvedConfig {
  const o = record('QueueModuleOptions', input) as QueueModuleOptions & Record<string, unknown>;
  noUnknownKeys('QueueModuleOptions', o, MODULE_OPTIONS.keys, MODULE_OPTIONS.hints);
  const given = (['connectionString', 'pool', 'db'] as const).filter((k) => o[k] !== undefined && o[k] !== null);
  if (given.length !== 1) {
    throw new InvalidOptionError(
      'connectionString/pool/db',
      'exactly one way to reach PostgreSQL',
      given.length ? given.join(' and ') : 'none',
    );
  }
  if (o.connectionString !== undefined && (typeof o.connectionString !== 'string' || o.connectionString.length === 0)) {
    throw new InvalidOptionError('connectionString', 'a non-empty PostgreSQL URL', o.connectionString);
  }
  if (o.pool !== undefined && (typeof o.pool !== 'object' || typeof (o.pool as { query?: unknown }).query !== 'function')) {
    throw new InvalidOptionError('pool', 'a pg.Pool', o.pool);
  }
  if (o.db !== undefined && (typeof o.db !== 'object' || !('$client' in o.db))) {
    throw new InvalidOptionError('db', 'a Drizzle node-postgres database (with $client)', o.db);
  }
  const schema = schemaName('schema', o.schema ?? 'pgqueue');
  const logger = o.logger as Partial<Record<keyof QueueLogger, unknown>> | undefined;
  if (
    logger !== undefined &&
    (typeof logger !== 'object' ||
      logger === null ||
      typeof logger.log !== 'function' ||
      typeof logger.warn !== 'function' ||
      typeof logger.error !== 'function')
  ) {
    throw new InvalidOptionError('logger', 'an object with log, warn and error methods', o.logger);
  }
  const config: ResolvedConfig = Object.freeze({
    connectionString: o.connectionString ?? null,
    pool: o.pool ?? null,
    db: o.db ?? null,
    schema,
    schemaIdent: quotedSchema(schema),
    channel: `pgqueue_${schema}`,
    migrate: optBool('migrate', o.migrate) ?? true,
    workers: optBool('workers', o.workers) ?? true,
    startWorkers: optBool('startWorkers', o.startWorkers) ?? true,
    supervise: optBool('supervise', o.supervise) ?? true,
    useListenNotify: optBool('useListenNotify', o.useListenNotify) ?? true,
    listen: listenConfig(o.listen),
    logJobFailures: optBool('logJobFailures', o.logJobFailures) ?? true,
    tracing: optBool('tracing', o.tracing),
    monitorIntervalSeconds: optInt('monitorIntervalSeconds', o.monitorIntervalSeconds, 1, 86_400) ?? 60,
    maintenanceIntervalSeconds: optInt('maintenanceIntervalSeconds', o.maintenanceIntervalSeconds, 1, 86_400) ?? 60,
    shutdownTimeoutMs: optInt('shutdownTimeoutMs', o.shutdownTimeoutMs, 0, 3_600_000) ?? 30_000,
    persistQueueStats: optBool('persistQueueStats', o.persistQueueStats) ?? false,
    warningQueueSize: optInt('warningQueueSize', o.warningQueueSize, 1) ?? null,
    queueStatRetentionDays: optInt('queueStatRetentionDays', o.queueStatRetentionDays, 1, 3650) ?? 7,
    warningSlowClaimMs: optInt('warningSlowClaimMs', o.warningSlowClaimMs, 0, 3_600_000) ?? 1000,
    maxPayloadBytes: o.maxPayloadBytes === undefined ? 1_048_576 : int('maxPayloadBytes', o.maxPayloadBytes, 1, 256 * 1_048_576),
    poolSize: optInt('poolSize', o.poolSize, 1, 1000) ?? 10,
    preparedStatements: optBool('preparedStatements', o.preparedStatements) ?? null,
    logger: o.logger ?? null,
  });
  refuseIneffective(o);
  return config;
}

/** node-postgres's ClientConfig keys: what the `listen` option may hold (pg's own names, not this package's). */
const LISTEN_KEYS: ReadonlySet<string> = new Set([
  'user',
  'database',
  'password',
  'port',
  'host',
  'connectionString',
  'keepAlive',
  'stream',
  'statement_timeout',
  'ssl',
  'enableChannelBinding',
  'sslnegotiation',
  'query_timeout',
  'lock_timeout',
  'keepAliveInitialDelayMillis',
  'idle_in_transaction_session_timeout',
  'application_name',
  'fallback_application_name',
  'connectionTimeoutMillis',
  'types',
  'options',
  'client_encoding',
  'pipeline',
]);

/** The `listen` option: a pg.ClientConfig that says where to connect (a connectionString or a host), copied. */
function listenConfig(value: unknown): pg.ClientConfig | null {
  if (value === undefined) return null;
  const accepted = 'a pg.ClientConfig with a connectionString or a host (the LISTEN connection straight to PostgreSQL)';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidOptionError('listen', accepted, value);
  noUnknownKeys('listen', value as Record<string, unknown>, LISTEN_KEYS);
  const c = value as pg.ClientConfig;
  if (c.connectionString !== undefined && (typeof c.connectionString !== 'string' || c.connectionString.length === 0))
    throw new InvalidOptionError('listen.connectionString', 'a non-empty PostgreSQL URL', c.connectionString);
  if (c.connectionString === undefined && (typeof c.host !== 'string' || c.host.length === 0))
    throw new InvalidOptionError('listen', accepted, value);
  return Object.freeze({ ...c });
}

/**
 * Refuses an option that, beside the others given, would do nothing (InvalidOptionError naming it, as for a
 * misspelt one): an option is never accepted and ignored. A value that says what happens anyway (false, 0) is
 * accepted: `preparedStatements: false` with a pool handed in, `useListenNotify: false` with `workers: false`.
 */
function refuseIneffective(o: QueueModuleOptions): void {
  const handed = o.pool !== undefined && o.pool !== null ? 'pool' : o.db !== undefined && o.db !== null ? 'db' : null;
  if (handed !== null && o.poolSize !== undefined)
    throw new InvalidOptionError('poolSize', `left out with ${handed}: the pool handed in keeps its own size (pg.Pool's max)`, o.poolSize);
  // the engine names statements and sets its session only on a pool it opens itself (runtime.ts, namesStatements)
  if (handed !== null && o.preparedStatements === true)
    throw new InvalidOptionError(
      'preparedStatements',
      `false or left out with ${handed}: on a pool handed in the engine prepares nothing and keeps the pool's own session settings`,
      true,
    );
  if (o.listen !== undefined && o.useListenNotify === false)
    throw new InvalidOptionError('listen', 'left out with useListenNotify: false (there is no LISTEN connection to place)', o.listen);
  if (o.queueStatRetentionDays !== undefined && o.persistQueueStats !== true)
    throw new InvalidOptionError(
      'queueStatRetentionDays',
      'left out unless persistQueueStats is true: without it no snapshot is recorded to keep',
      o.queueStatRetentionDays,
    );
  if (o.workers !== false) return;
  if (o.listen !== undefined)
    throw new InvalidOptionError(
      'listen',
      'left out with workers: false (the LISTEN connection wakes worker loops, and this instance runs none)',
      o.listen,
    );
  // what only this instance's worker loops use: with workers: false it runs none
  const loopsOnly: [keyof QueueModuleOptions, unknown, string][] = [
    ['startWorkers', false, 'there are no loops to start'],
    ['useListenNotify', false, 'the LISTEN connection wakes worker loops'],
    ['logJobFailures', false, "the failures it logs are its worker loops' jobs'"],
    ['warningSlowClaimMs', 0, "it times its worker loops' claims"],
  ];
  for (const [field, off, why] of loopsOnly) {
    if (o[field] !== undefined && o[field] !== off)
      throw new InvalidOptionError(field, `${String(off)} or left out with workers: false (${why}, and this instance runs none)`, o[field]);
  }
}
