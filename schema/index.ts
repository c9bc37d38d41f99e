/**
 * Drizzle definitions of the queue's tables, for typed queries and for users' drizzle-kit config.
 * The tables are installed by the versioned migrations in ./migrations (run at start), which also
 * create what Drizzle cannot describe: the list partitioning of `jobs` and its NOTIFY trigger. When
 * drizzle-kit manages your own schema, keep it off this one (`schemaFilter`).
 *
 * The schema name is configurable, so the tables come from a factory: `createQueueSchema('myschema')`.
 */
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** The counts, deltas and histograms a monitor pass stores, on a queue's row and on each snapshot. */
function monitorCounts() {
  return {
    queuedCount: integer('queued_count').notNull().default(0),
    deferredCount: integer('deferred_count').notNull().default(0),
    blockedCount: integer('blocked_count').notNull().default(0),
    readyCount: integer('ready_count').notNull().default(0),
    activeCount: integer('active_count').notNull().default(0),
    failedCount: integer('failed_count').notNull().default(0),
    totalCount: integer('total_count').notNull().default(0),
    readyOldestSeconds: doublePrecision('ready_oldest_seconds').notNull().default(0),
    createdDelta: integer('created_delta').notNull().default(0),
    completedDelta: integer('completed_delta').notNull().default(0),
    failedDelta: integer('failed_delta').notNull().default(0),
    deltaSeconds: doublePrecision('delta_seconds'),
    deltaOn: timestamp('delta_on', { withTimezone: true }),
    waitBins: integer('wait_bins').array(),
    runBins: integer('run_bins').array(),
  };
}

export function createQueueSchema<S extends string = 'pgqueue'>(name: S = 'pgqueue' as S) {
  const schema = pgSchema(name);
  // `jobs.id` is filled by the sequence the migration creates beside the table, as a quoted literal for nextval
  const jobsIdSeq = `"${name.replace(/"/g, '""')}".jobs_id_seq`;
  const jobsIdSeqLiteral = `'${jobsIdSeq.replace(/'/g, "''")}'`;

  const jobState = schema.enum('job_state', ['created', 'retry', 'active', 'completed', 'cancelled', 'failed']);

  const queues = schema.table('queues', {
    name: text('name').primaryKey(),
    policy: text('policy').notNull().default('standard'),
    partition: boolean('partition').notNull().default(false),
    deadLetter: text('dead_letter').references((): AnyPgColumn => queues.name),
    warningQueueSize: integer('warning_queue_size'),
    notify: boolean('notify').notNull().default(true),
    removeOnComplete: boolean('remove_on_complete').notNull().default(false),
    retryLimit: integer('retry_limit').notNull().default(2),
    retryDelay: integer('retry_delay').notNull().default(0),
    retryBackoff: boolean('retry_backoff').notNull().default(false),
    retryDelayMax: integer('retry_delay_max'),
    expireSeconds: integer('expire_seconds').notNull().default(900),
    heartbeatSeconds: integer('heartbeat_seconds'),
    deleteAfterSeconds: integer('delete_after_seconds').notNull().default(604800),
    failedDeleteAfterSeconds: integer('failed_delete_after_seconds').notNull().default(2592000),
    retentionSeconds: integer('retention_seconds').notNull().default(1209600),
    concurrencyLimit: integer('concurrency_limit'),
    rateLimitCount: integer('rate_limit_count'),
    rateLimitSeconds: integer('rate_limit_seconds'),
    createdOn: timestamp('created_on', { withTimezone: true }).notNull().defaultNow(),
    updatedOn: timestamp('updated_on', { withTimezone: true }).notNull().defaultNow(),
    // the counts of the last monitor pass (migration 6)
    ...monitorCounts(),
    singletonsActive: text('singletons_active').array(),
    countedOn: timestamp('counted_on', { withTimezone: true }),
    // pauseQueue / resumeQueue (migration 9)
    paused: boolean('paused').notNull().default(false),
    // failUnworkedAfterSeconds, and when the maintenance pass first found the queue with no live worker (migration 16)
    failUnworkedAfterSeconds: integer('fail_unworked_after_seconds'),
    unworkedSince: timestamp('unworked_since', { withTimezone: true }),
  });

  // one snapshot per queue and monitor pass, with persistQueueStats (migration 6); partitioned by UTC day (migration
  // 17: Drizzle declares the partitioned table, whose day partitions the monitor pass makes and drops)
  const queueStats = schema.table(
    'queue_stats',
    {
      queue: text('queue')
        .notNull()
        .references(() => queues.name, { onDelete: 'cascade' }),
      capturedOn: timestamp('captured_on', { withTimezone: true }).notNull(),
      ...monitorCounts(),
    },
    (t) => [primaryKey({ name: 'queue_stats_pkey', columns: [t.queue, t.capturedOn] }), index('queue_stats_captured_idx').on(t.capturedOn)],
  );

  const jobs = schema.table(
    'jobs',
    {
      id: bigint('id', { mode: 'bigint' })
        .notNull()
        .default(sql.raw(`nextval(${jobsIdSeqLiteral}::regclass)`)),
      queue: text('queue').notNull(),
      state: jobState('state').notNull().default('created'),
      policy: text('policy').notNull().default('standard'),
      priority: integer('priority').notNull().default(0),
      data: jsonb('data'),
      output: jsonb('output'),
      singletonKey: text('singleton_key'),
      dedupeKey: text('dedupe_key'),
      groupId: text('group_id'),
      groupTier: text('group_tier'),
      blockedBy: integer('blocked_by').notNull().default(0),
      onParentFailure: text('on_parent_failure'),
      singletonOn: timestamp('singleton_on', { withTimezone: true }),
      // a throttled job's slot ends here: retention keeps the row (which holds the slot) until then (migration 5)
      slotUntil: timestamp('slot_until', { withTimezone: true }),
      startAfter: timestamp('start_after', { withTimezone: true }).notNull().defaultNow(),
      retryCount: integer('retry_count').notNull().default(0),
      claimCount: integer('claim_count').notNull().default(0),
      retryLimit: integer('retry_limit').notNull(),
      // the retry count this attempt budget starts from: retry() raises it with retry_limit (migration 11)
      retryBase: integer('retry_base').notNull().default(0),
      // the sender's trace context (migration 13)
      traceContext: text('trace_context'),
      retryDelay: integer('retry_delay').notNull(),
      retryBackoff: boolean('retry_backoff').notNull(),
      retryDelayMax: integer('retry_delay_max'),
      expireSeconds: integer('expire_seconds').notNull(),
      heartbeatSeconds: integer('heartbeat_seconds'),
      deleteAfterSeconds: integer('delete_after_seconds').notNull(),
      leaseUntil: timestamp('lease_until', { withTimezone: true }),
      heartbeatUntil: timestamp('heartbeat_until', { withTimezone: true }),
      workerId: text('worker_id'),
      createdOn: timestamp('created_on', { withTimezone: true }).notNull().defaultNow(),
      startedOn: timestamp('started_on', { withTimezone: true }),
      completedOn: timestamp('completed_on', { withTimezone: true }),
      keepUntil: timestamp('keep_until', { withTimezone: true }).notNull(),
      deadLetter: text('dead_letter'),
      sourceName: text('source_name'),
      sourceId: bigint('source_id', { mode: 'bigint' }),
      sourceCreatedOn: timestamp('source_created_on', { withTimezone: true }),
      sourceRetryCount: integer('source_retry_count'),
      sourceOutput: jsonb('source_output'),
      sourceRootId: bigint('source_root_id', { mode: 'bigint' }),
      // key_strict_fifo: > 0 while the queued job waits behind an earlier job of its key (kept by triggers; migration 2)
      fifoWait: smallint('fifo_wait').notNull().default(0),
      // the last failed attempt's error, with when and which attempt (migration 10)
      lastError: jsonb('last_error'),
      // the attempts that failed, the 20 most recent (migration 18)
      attempts: jsonb('attempts'),
    },
    (t) => [
      primaryKey({ name: 'jobs_pkey', columns: [t.queue, t.id] }),
      // nullsFirst: PostgreSQL's own default for DESC, as the migration has it (drizzle would say NULLS LAST)
      index('jobs_ready_idx')
        .on(t.queue, t.priority.desc().nullsFirst(), t.startAfter, t.id)
        .where(sql`state < 'active'`),
      // retention's deletes (migration 5): finished jobs past their deletion time
      index('jobs_finished_keep_idx')
        .on(t.keepUntil)
        .where(sql`state > 'active'`),
      index('jobs_lease_idx')
        .on(t.queue, t.leaseUntil)
        .where(sql`state = 'active'`),
      // findJobs' pages (migration 10): failed jobs, and the finished jobs of a key
      index('jobs_failed_find_idx')
        .on(t.queue, t.id)
        .where(sql`state = 'failed'`),
      index('jobs_key_find_idx')
        .on(t.queue, t.singletonKey, t.id)
        .where(sql`singleton_key IS NOT NULL AND state > 'active'`),
      index('jobs_dedupe_find_idx')
        .on(t.queue, t.dedupeKey, t.id)
        .where(sql`dedupe_key IS NOT NULL AND state > 'active'`),
      // the dashboard's samples (migration 12): jobs finished in a window of time, jobs waiting for a retry
      index('jobs_finished_on_idx')
        .on(t.completedOn)
        .where(sql`state > 'active'`),
      // a dead-letter copy by its source, for the job view (migration 18)
      index('jobs_source_idx')
        .on(t.sourceName, t.sourceId)
        .where(sql`source_id IS NOT NULL`),
      index('jobs_retry_idx')
        .on(t.startAfter)
        .where(sql`state = 'retry'`),
      // NULLS NOT DISTINCT in the migration: a job without a singletonKey shares the one null key.
      uniqueIndex('jobs_short_key')
        .on(t.queue, t.singletonKey)
        .where(sql`state = 'created' AND policy = 'short'`),
      uniqueIndex('jobs_singleton_key')
        .on(t.queue, t.singletonKey)
        .where(sql`state = 'active' AND policy = 'singleton'`),
      uniqueIndex('jobs_stately_key')
        .on(t.queue, t.state, t.singletonKey)
        .where(sql`state <= 'active' AND policy = 'stately'`),
      uniqueIndex('jobs_exclusive_key')
        .on(t.queue, t.singletonKey)
        .where(sql`state <= 'active' AND policy = 'exclusive'`),
      uniqueIndex('jobs_fifo_active_key')
        .on(t.queue, t.singletonKey)
        .where(sql`state = 'active' AND policy = 'key_strict_fifo'`),
      uniqueIndex('jobs_fifo_blocking_idx')
        .on(t.queue, t.singletonKey)
        .where(sql`state = ANY (ARRAY['retry', 'active', 'failed']) AND policy = 'key_strict_fifo'`),
      index('jobs_fifo_ready_idx')
        .on(t.queue, t.priority.desc().nullsFirst(), t.startAfter, t.id)
        .where(sql`state < 'active' AND fifo_wait = 0 AND policy = 'key_strict_fifo'`),
      index('jobs_fifo_created_idx')
        .on(t.queue, t.singletonKey, t.id)
        .where(sql`state = 'created' AND policy = 'key_strict_fifo'`),
      index('jobs_group_active_idx')
        .on(t.queue, t.groupId)
        .where(sql`state = 'active' AND group_id IS NOT NULL`),
      uniqueIndex('jobs_dedupe_key')
        .on(t.queue, t.dedupeKey)
        .where(sql`state <= 'active' AND dedupe_key IS NOT NULL`),
      uniqueIndex('jobs_throttle_slot')
        .on(t.queue, t.singletonOn, t.singletonKey)
        .where(sql`singleton_on IS NOT NULL AND state <> 'cancelled'`),
    ],
  );

  const jobDeps = schema.table(
    'job_deps',
    {
      parentQueue: text('parent_queue').notNull(),
      parentId: bigint('parent_id', { mode: 'bigint' }).notNull(),
      childQueue: text('child_queue').notNull(),
      childId: bigint('child_id', { mode: 'bigint' }).notNull(),
    },
    (t) => [
      primaryKey({ name: 'job_deps_pkey', columns: [t.parentQueue, t.parentId, t.childQueue, t.childId] }),
      // a flow child's parents (getDependencies; migration 14)
      index('job_deps_child_idx').on(t.childQueue, t.childId),
    ],
  );

  // publish/subscribe: the queues each event fans out to (migration 14)
  const subscriptions = schema.table(
    'subscriptions',
    {
      event: text('event').notNull(),
      queue: text('queue')
        .notNull()
        .references(() => queues.name, { onDelete: 'cascade' }),
      createdOn: timestamp('created_on', { withTimezone: true }).notNull().defaultNow(),
    },
    (t) => [primaryKey({ name: 'subscriptions_pkey', columns: [t.event, t.queue] }), index('subscriptions_queue_idx').on(t.queue)],
  );

  const rateWindows = schema.table('rate_windows', {
    queue: text('queue')
      .primaryKey()
      .references(() => queues.name, { onDelete: 'cascade' }),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    started: integer('started').notNull(),
  });

  const maintenance = schema.table('maintenance', {
    task: text('task').primaryKey(),
    lastRunOn: timestamp('last_run_on', { withTimezone: true }).notNull(),
  });

  // a row per running instance, refreshed every few seconds (migration 7)
  const workers = schema.table('workers', {
    id: text('id').primaryKey(),
    host: text('host').notNull(),
    pid: integer('pid').notNull(),
    version: text('version').notNull(),
    loops: jsonb('loops')
      .notNull()
      .default(sql`'[]'::jsonb`),
    startedOn: timestamp('started_on', { withTimezone: true }).notNull().defaultNow(),
    heartbeatOn: timestamp('heartbeat_on', { withTimezone: true }).notNull().defaultNow(),
    // the queues whose loops the instance holds stopped (migration 9)
    stopped: jsonb('stopped')
      .notNull()
      .default(sql`'[]'::jsonb`),
  });

  // cron schedules: a row per queue and key, its next slot moved on as each fires (migration 8)
  const schedules = schema.table(
    'schedules',
    {
      name: text('name')
        .notNull()
        .references(() => queues.name, { onDelete: 'cascade' }),
      key: text('key').notNull().default(''),
      cron: text('cron').notNull(),
      tz: text('tz').notNull().default('UTC'),
      data: jsonb('data'),
      options: jsonb('options')
        .notNull()
        .default(sql`'{}'::jsonb`),
      missed: text('missed').notNull().default('once'),
      managed: boolean('managed').notNull().default(false),
      nextRunOn: timestamp('next_run_on', { withTimezone: true }).notNull(),
      lastRunOn: timestamp('last_run_on', { withTimezone: true }),
      lastJobId: bigint('last_job_id', { mode: 'bigint' }),
      createdOn: timestamp('created_on', { withTimezone: true }).notNull().defaultNow(),
      updatedOn: timestamp('updated_on', { withTimezone: true }).notNull().defaultNow(),
    },
    (t) => [
      primaryKey({ name: 'schedules_pkey', columns: [t.name, t.key] }),
      index('schedules_next_run_idx').on(t.nextRunOn),
      check('schedules_missed_check', sql`${t.missed} IN ('once', 'skip')`),
    ],
  );

  const migrations = schema.table('migrations', {
    version: integer('version').primaryKey(),
    name: text('name').notNull(),
    appliedOn: timestamp('applied_on', { withTimezone: true }).notNull().defaultNow(),
  });

  return { schema, jobState, queues, queueStats, jobs, jobDeps, subscriptions, rateWindows, maintenance, workers, schedules, migrations };
}

const defaults = createQueueSchema();

/** The tables in the default schema `pgqueue`. */
export const pgqueueSchema = defaults.schema;
export const jobState = defaults.jobState;
export const queues = defaults.queues;
export const queueStats = defaults.queueStats;
export const jobs = defaults.jobs;
export const jobDeps = defaults.jobDeps;
export const subscriptions = defaults.subscriptions;
export const rateWindows = defaults.rateWindows;
export const maintenance = defaults.maintenance;
export const workers = defaults.workers;
export const schedules = defaults.schedules;
export const migrations = defaults.migrations;
export { MIGRATIONS, type Migration } from './migrations/index.js';
