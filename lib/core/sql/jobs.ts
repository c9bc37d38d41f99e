import { KEEP_FINISHED, NAMED, NO_CHILDREN, ORPHAN_DESCENDANTS, WAKE_PAYLOAD } from './fragments.js';

/**
 * Job control by id: inspection, cancel, resume, delete. A statement given many ids ($2) joins them as NAMED
 * (`j.queue = u.queue AND j.id = u.id`): one probe of the primary key per id, however large the queue.
 */

/** The ids of $2, as relation `u` (queue $1, id). */
const IDS = NAMED('id', '$2::bigint[]');

/**
 * Queue $1's row, as relation `q`, for statements that join it to jobs named by id. Joined as
 * `q.name = j.queue`, the queue's name would let the planner read every job of the queue from it and only then
 * match the ids (docs/design.md, "Statements that name their jobs"; test/core/settle.spec.ts "plans").
 */
const QUEUE = (s: string) => `(SELECT q.retention_seconds FROM ${s}.queues q WHERE q.name = $1) q`;

/** The states of the given jobs, to explain why a change touched fewer rows than asked. $1 queue, $2 ids (distinct) */
export const getJobStates = (s: string, t = `${s}.jobs`) => `
SELECT j.id::text, j.state::text FROM ${t} j JOIN ${IDS} ON j.queue = u.queue AND j.id = u.id`;

/** Cancels jobs that have not finished; a running handler's result is then refused by the fence. */
export const cancelJobs = (s: string, t = `${s}.jobs`) => CANCEL(s, t, true);

/**
 * cancelJobs without the cancel of blocked descendants, whose update names `jobs` and so is planned with every
 * partition: it cancels only jobs that no job waits for (NO_CHILDREN); cancel() runs cancelJobs for the rest.
 */
export const cancelLeafJobs = (s: string, t = `${s}.jobs`) => CANCEL(s, t, false);

const CANCEL = (s: string, t: string, orphans: boolean) => `
WITH${orphans ? ' RECURSIVE' : ''} cancelled AS (
UPDATE ${t} j SET
  state = 'cancelled',
  completed_on = now(),
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = ${KEEP_FINISHED}
FROM ${IDS}
WHERE j.queue = u.queue AND j.id = u.id AND j.state < 'completed'${orphans ? '' : ` AND ${NO_CHILDREN(s)}`}
RETURNING j.queue, j.id, j.state, j.singleton_key
)${orphans ? `, ${ORPHAN_DESCENDANTS(s, 'cancelled')}` : ''}
SELECT cancelled.id::text FROM cancelled`;

/** When a resumed job may start: a flow child whose parents all completed while it was cancelled, now. */
const RELEASED_START = `CASE WHEN j.blocked_by = 0 AND j.start_after = 'infinity' THEN now() ELSE j.start_after END`;

/**
 * Brings cancelled jobs back to the queue, with the queue's retention counted from now; wakes its workers. A flow
 * child cancelled while it waited waits again for the parents its blocked_by still counts (RELEASE_CHILDREN counts
 * it down while it is cancelled), or runs now when every parent completed meanwhile. $3 channel
 */
export const resumeJobs = (s: string, t = `${s}.jobs`) => `
WITH resumed AS (
UPDATE ${t} j SET
  state = CASE WHEN j.retry_count = 0 THEN 'created' ELSE 'retry' END::${s}.job_state,
  completed_on = NULL,
  start_after = ${RELEASED_START},
  keep_until = greatest(${RELEASED_START}, now()) + q.retention_seconds * interval '1 second'
FROM ${QUEUE(s)}, ${IDS}
WHERE j.queue = u.queue AND j.id = u.id AND j.state = 'cancelled'
RETURNING j.id, j.start_after
)
-- a CTE is run once: one NOTIFY for the jobs that may run now, one naming the delay of the earliest that waits
, woke AS (
  SELECT pg_notify($3, ${WAKE_PAYLOAD('$1', 'min(r.start_after)')})::text AS notified
  FROM resumed r WHERE r.start_after < 'infinity' GROUP BY r.start_after > now()
)
SELECT resumed.id::text, (SELECT min(w.notified) FROM woke w) AS notified FROM resumed`;

export const deleteJobs = (s: string, t = `${s}.jobs`) => `
DELETE FROM ${t} j USING ${IDS} WHERE j.queue = u.queue AND j.id = u.id RETURNING j.id::text`;

/**
 * Puts failed jobs back to `retry`, all or none: when any id is missing or not failed, nothing changes
 * (the caller then reads the states to say which). Wakes the queue's workers.
 *
 * Each gets a fresh attempt budget: the retry is counted (a new attempt, so a result held for the failed one is
 * refused by the fence), the budget starts from this count (retry_base), and retry_limit moves up with it, so
 * that "retries remain while retryCount < retryLimit" holds for the job's handler as before (migration 11).
 * $1 queue, $2 ids bigint[] (distinct), $3 channel
 */
export const retryJobs = (s: string, t = `${s}.jobs`) => `
WITH target AS (
  SELECT j.queue, j.id, j.state FROM ${t} j JOIN ${IDS} ON j.queue = u.queue AND j.id = u.id
  FOR UPDATE OF j
), verdict AS (
  SELECT count(*) = cardinality($2::bigint[]) AND coalesce(bool_and(t.state = 'failed'), false) AS ok FROM target t
), retried AS (
  UPDATE ${t} j SET
    state = 'retry',
    retry_count = j.retry_count + 1,
    retry_base = j.retry_count + 1,
    retry_limit = j.retry_count + 1 + (j.retry_limit - j.retry_base),
    start_after = now(),
    completed_on = NULL,
    keep_until = now() + q.retention_seconds * interval '1 second'
  FROM target t, verdict v, ${QUEUE(s)}
  WHERE v.ok AND j.queue = t.queue AND j.id = t.id
  RETURNING j.id
)
SELECT retried.id::text, pg_notify($3, $1)::text AS notified FROM retried`;

/**
 * The dead-lettered jobs of a dead-letter queue that redrive may move, waiting or failed there, in id order: those
 * that carry a source, from source queue `source` when it is not null, and whose way back (queue `destination`
 * when it is not null, else their source queue) exists.
 */
const REDRIVABLE = (s: string, source: string, destination: string) => `
JOIN ${s}.queues back ON back.name = coalesce(${destination}::text, d.source_name)
WHERE d.state IN ('created', 'retry', 'failed') AND d.source_name IS NOT NULL
  AND (${source}::text IS NULL OR d.source_name = ${source}::text)`;

/** REDRIVABLE jobs of dead-letter queue $1. $2 most, $3 source queue (null: any), $4 destination (null: their source) */
export const listDeadLettered = (s: string, t = `${s}.jobs`) => `
SELECT d.id::text FROM ${t} d${REDRIVABLE(s, '$3', '$4')}
  AND d.queue = $1
ORDER BY d.id
LIMIT $2`;

/**
 * listDeadLettered among the ids $2 (bigint[], distinct): one probe per id, not a walk of the queue. $3 most,
 * $4 source queue (null: any), $5 destination (null: their source)
 */
export const listDeadLetteredByIds = (s: string, t = `${s}.jobs`) => `
SELECT d.id::text FROM ${t} d
JOIN ${IDS} ON d.queue = u.queue AND d.id = u.id${REDRIVABLE(s, '$4', '$5')}
ORDER BY d.id
LIMIT $3`;

/**
 * Moves one dead-lettered job back to its source queue (or to queue $3 when it is not null), as a new job under
 * that queue's current settings that keeps the chain's root id. The copy and the delete happen together, and only
 * when the copy was inserted: a copy the queue's policy refuses leaves the job where it is.
 * $1 dead-letter queue, $2 id, $3 destination (null: the job's source queue)
 */
export const redriveJob = (s: string, t = `${s}.jobs`) => `
WITH d AS (
  SELECT d.queue, d.id, d.data, d.priority, d.singleton_key, d.group_id, d.group_tier, d.source_name, d.source_id, d.source_root_id,
    d.trace_context
  FROM ${t} d
  WHERE d.queue = $1 AND d.id = $2 AND d.state IN ('created', 'retry', 'failed') AND d.source_name IS NOT NULL
  FOR UPDATE OF d SKIP LOCKED
), inserted AS (
  INSERT INTO ${s}.jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, source_root_id, trace_context)
  SELECT q.name, q.policy, d.data, d.priority, d.singleton_key, d.group_id, d.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, coalesce(d.source_root_id, d.source_id), d.trace_context
  FROM d
  JOIN ${s}.queues q ON q.name = coalesce($3::text, d.source_name)
  -- a key_strict_fifo queue takes no job without a key (as send refuses it): such a job stays where it is
  WHERE q.policy <> 'key_strict_fifo' OR d.singleton_key IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING id
), removed AS (
  DELETE FROM ${t} x USING d
  WHERE x.queue = d.queue AND x.id = d.id AND EXISTS (SELECT 1 FROM inserted)
  RETURNING x.id
)
SELECT inserted.id::text FROM inserted`;

/**
 * The queue of job $1, for callers that know only its id (ids come from one sequence, so an id names one job).
 * The primary key leads with the queue, so the lookup probes it once per queue: its cost follows the number of
 * queues, not of jobs. $1 id
 */
export const getJobQueue = (s: string) => `
SELECT q.name FROM ${s}.queues q
WHERE EXISTS (SELECT 1 FROM ${s}.jobs j WHERE j.queue = q.name AND j.id = $1::bigint)
LIMIT 1`;
