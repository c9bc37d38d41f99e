import { LIVE_WORKER } from './fragments.js';

/** Queue management: one row per queue in `queues`; its settings are the defaults its jobs inherit. */

const QUEUE_COLUMNS = `name, policy, partition, dead_letter, warning_queue_size, notify, retry_limit, retry_delay,
  retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds,
  concurrency_limit, rate_limit_count, rate_limit_seconds, remove_on_complete, failed_delete_after_seconds, fail_unworked_after_seconds`;

/** Inserts the queue unless it exists; returns the row that is stored either way, and whether it is new. */
export const createQueue = (s: string) => `
WITH ins AS (
  INSERT INTO ${s}.queues (${QUEUE_COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
  ON CONFLICT (name) DO NOTHING
  RETURNING ${QUEUE_COLUMNS}, true AS created
)
SELECT * FROM ins
UNION ALL
SELECT ${QUEUE_COLUMNS}, false AS created FROM ${s}.queues WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM ins)`;

/** A queue's settings as createQueue stores them: every one given, defaults applied. */
export interface StoredQueueSettings {
  policy: string;
  partition: boolean;
  deadLetter: string | null;
  warningQueueSize: number | null;
  notify: boolean;
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
  removeOnComplete: boolean;
  failedDeleteAfterSeconds: number;
  failUnworkedAfterSeconds: number | null;
}

/** The arguments of createQueue, in the order of QUEUE_COLUMNS. */
export function createQueueArgs(name: string, q: StoredQueueSettings): unknown[] {
  return [
    name,
    q.policy,
    q.partition,
    q.deadLetter,
    q.warningQueueSize,
    q.notify,
    q.retryLimit,
    q.retryDelay,
    q.retryBackoff,
    q.retryDelayMax,
    q.expireInSeconds,
    q.heartbeatSeconds,
    q.deleteAfterSeconds,
    q.retentionSeconds,
    q.concurrencyLimit,
    q.rateLimit?.count ?? null,
    q.rateLimit?.perSeconds ?? null,
    q.removeOnComplete,
    q.failedDeleteAfterSeconds,
    q.failUnworkedAfterSeconds,
  ];
}

/** Changes only the settings present as keys of the jsonb patch ($2); returns the name when the queue exists. */
export const updateQueue = (s: string) => `
UPDATE ${s}.queues SET
  dead_letter = CASE WHEN $2::jsonb ? 'deadLetter' THEN $2::jsonb->>'deadLetter' ELSE dead_letter END,
  warning_queue_size = CASE WHEN $2::jsonb ? 'warningQueueSize' THEN ($2::jsonb->>'warningQueueSize')::int ELSE warning_queue_size END,
  notify = CASE WHEN $2::jsonb ? 'notify' THEN ($2::jsonb->>'notify')::boolean ELSE notify END,
  remove_on_complete = CASE WHEN $2::jsonb ? 'removeOnComplete' THEN ($2::jsonb->>'removeOnComplete')::boolean ELSE remove_on_complete END,
  failed_delete_after_seconds = CASE WHEN $2::jsonb ? 'failedDeleteAfterSeconds' THEN ($2::jsonb->>'failedDeleteAfterSeconds')::int
    ELSE failed_delete_after_seconds END,
  retry_limit = CASE WHEN $2::jsonb ? 'retryLimit' THEN ($2::jsonb->>'retryLimit')::int ELSE retry_limit END,
  retry_delay = CASE WHEN $2::jsonb ? 'retryDelay' THEN ($2::jsonb->>'retryDelay')::int ELSE retry_delay END,
  retry_backoff = CASE WHEN $2::jsonb ? 'retryBackoff' THEN ($2::jsonb->>'retryBackoff')::boolean ELSE retry_backoff END,
  retry_delay_max = CASE WHEN $2::jsonb ? 'retryDelayMax' THEN ($2::jsonb->>'retryDelayMax')::int ELSE retry_delay_max END,
  expire_seconds = CASE WHEN $2::jsonb ? 'expireInSeconds' THEN ($2::jsonb->>'expireInSeconds')::int ELSE expire_seconds END,
  heartbeat_seconds = CASE WHEN $2::jsonb ? 'heartbeatSeconds' THEN ($2::jsonb->>'heartbeatSeconds')::int ELSE heartbeat_seconds END,
  delete_after_seconds = CASE WHEN $2::jsonb ? 'deleteAfterSeconds' THEN ($2::jsonb->>'deleteAfterSeconds')::int ELSE delete_after_seconds END,
  retention_seconds = CASE WHEN $2::jsonb ? 'retentionSeconds' THEN ($2::jsonb->>'retentionSeconds')::int ELSE retention_seconds END,
  concurrency_limit = CASE WHEN $2::jsonb ? 'concurrencyLimit' THEN ($2::jsonb->>'concurrencyLimit')::int ELSE concurrency_limit END,
  rate_limit_count = CASE WHEN $2::jsonb ? 'rateLimit' THEN ($2::jsonb->'rateLimit'->>'count')::int ELSE rate_limit_count END,
  rate_limit_seconds = CASE WHEN $2::jsonb ? 'rateLimit' THEN ($2::jsonb->'rateLimit'->>'perSeconds')::int ELSE rate_limit_seconds END,
  fail_unworked_after_seconds = CASE WHEN $2::jsonb ? 'failUnworkedAfterSeconds' THEN ($2::jsonb->>'failUnworkedAfterSeconds')::int
    ELSE fail_unworked_after_seconds END,
  -- the time without a worker counts again from the next pass under the new setting
  unworked_since = CASE WHEN $2::jsonb ? 'failUnworkedAfterSeconds' THEN NULL ELSE unworked_since END,
  updated_on = now()
WHERE name = $1
RETURNING name`;

/** Partition DDL waits at most this long for its lock, instead of queueing every claim behind it. */
export const setDdlLockTimeout = (_s: string) => `SET LOCAL lock_timeout = '5s'`;

/** Gives a queue created with partition: true its own partition (in the transaction that creates the queue). $1 queue */
export const createQueuePartition = (s: string) => `SELECT ${s}.create_queue_partition($1) AS table_name`;

/** Drops a queue's own partition, if it has one (in the transaction that deletes the queue). $1 queue */
export const dropQueuePartition = (s: string) => `SELECT ${s}.drop_queue_partition($1)`;

/** Deletes a queue's jobs, then the queue (run in one transaction). */
export const deleteQueueJobs = (s: string) => `DELETE FROM ${s}.jobs WHERE queue = $1`;
export const deleteQueue = (s: string) => `DELETE FROM ${s}.queues WHERE name = $1 RETURNING name`;

export const queueExists = (s: string) => `SELECT 1 FROM ${s}.queues WHERE name = $1`;

/** The keys of a key_strict_fifo queue held back by a job that failed for good. $1 queue */
export const getBlockedKeys = (s: string) => `
SELECT DISTINCT j.singleton_key AS key FROM ${s}.jobs j
WHERE j.queue = $1 AND j.state IN ('retry', 'active', 'failed') AND j.policy = 'key_strict_fifo' AND j.state = 'failed'
ORDER BY 1`;

/**
 * Pauses ($2 true) or resumes ($2 false) queue $1: the claim statements read `paused` (READY in claim.ts), so every
 * instance's next claim sees it. A resume wakes the queue's idle workers on channel $3, at its commit.
 */
export const setQueuePaused = (s: string) => `
UPDATE ${s}.queues SET paused = $2, updated_on = now() WHERE name = $1
RETURNING name, (SELECT pg_notify($3::text, $1) WHERE NOT $2)::text AS woke`;

/** The queues that name $1 as their dead-letter queue. */
export const queuesUsingDeadLetter = (s: string) => `SELECT name FROM ${s}.queues WHERE dead_letter = $1 ORDER BY name`;

/**
 * Queue rows with the counts the last monitor pass cached on them (sql/monitor.ts): a read of the queues table
 * alone, whatever the jobs table holds. $1 queue names text[] or null (all)
 */
export const getQueues = (s: string) => `
SELECT q.${QUEUE_COLUMNS.replace(/,\s*/g, ', q.')}, q.created_on, q.updated_on,
  q.queued_count AS queued, q.deferred_count AS deferred, q.blocked_count AS blocked, q.ready_count AS ready,
  q.ready_oldest_seconds AS ready_oldest, q.active_count AS active, q.failed_count AS failed, q.total_count AS total,
  q.singletons_active, q.created_delta, q.completed_delta, q.failed_delta, q.delta_seconds, q.delta_on, q.wait_bins, q.run_bins,
  q.counted_on, q.paused,
  (q.ready_count > 0 AND NOT EXISTS (
    SELECT 1 FROM ${s}.workers w
    WHERE ${LIVE_WORKER('w')} AND w.loops @> jsonb_build_array(jsonb_build_object('queue', q.name)))) AS unworked,
  CASE WHEN q.partition THEN '${s}.' || ${s}.queue_partition_name(q.name) ELSE '${s}.jobs_default' END AS table_name
FROM ${s}.queues q
WHERE $1::text[] IS NULL OR q.name = ANY($1::text[])
ORDER BY q.name`;
