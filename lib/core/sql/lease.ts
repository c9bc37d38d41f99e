import { ACTIVE, NAMED, RETRY_SLOT_FREE, STAMP, STAMPED } from './fragments.js';

/** True when the stately key of row `j` has no job in `state` (other than `j`). */
const SLOT_FREE = (t: string, state: string) => `NOT EXISTS (
      SELECT 1 FROM ${t} o
      WHERE o.queue = j.queue AND o.policy = 'stately' AND o.state = '${state}'
        AND o.singleton_key IS NOT DISTINCT FROM j.singleton_key AND o.id <> j.id)`;

/** Leases: extending them while a handler runs, and handing jobs back on shutdown. */

/**
 * Heartbeat for many attempts of one worker at once; returns the attempts it still holds (id, claim count, stamp).
 * $1 queue, $2 ids bigint[], $3 claim counts int[], $4 worker id, $5 stamps bigint[] (see STAMPED)
 */
export const heartbeatJobs = (s: string, t = `${s}.jobs`) => `
UPDATE ${t} j SET heartbeat_until = now() + j.heartbeat_seconds * interval '1 second'
FROM ${NAMED('id, claim_count, stamp', '$2::bigint[], $3::int[], $5::bigint[]')}
WHERE j.queue = u.queue AND j.id = u.id AND j.claim_count = u.claim_count AND j.worker_id = $4 AND ${ACTIVE}
  AND ${STAMPED}
RETURNING j.id::text, j.claim_count, ${STAMP('j')}::text AS stamp`;

/**
 * touch() by hand: extends the heartbeat of active jobs named by id, as heartbeatJobs does for a worker, fenced as
 * complete() by hand is (on retry_count when the caller gave one; any holder). The lease is left alone: it bounds
 * the attempt (expireInSeconds). A job without heartbeatSeconds keeps a null heartbeat and is returned as still
 * active, so the caller learns which jobs it still holds either way. From statement_timestamp(), not now(): in a
 * caller's transaction (`db`) now() is when it began, and a heartbeat from then may be over before it commits.
 * $1 queue, $2 ids bigint[], $3 retry counts int[] (null entry: any)
 */
export const touchJobs = (s: string, t = `${s}.jobs`) => `
UPDATE ${t} j SET heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
FROM ${NAMED('id, retry_count', '$2::bigint[], $3::int[]')}
WHERE j.queue = u.queue AND j.id = u.id AND ${ACTIVE} AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
RETURNING j.id::text`;

/**
 * Hands unfinished attempts back to the queue at once, without counting an attempt, so another instance
 * takes them now instead of after the lease runs out; wakes that instance with a NOTIFY. Jobs of short
 * queues go to `retry` (a slot short does not limit); a stately job goes to whichever of its key's created
 * and retry slots is free, and stays active (its lease decides) only when both are taken.
 * $1 queue, $2 ids bigint[], $3 claim counts int[], $4 worker id, $5 channel, $6 stamps bigint[] (see STAMPED)
 */
export const releaseJobs = (s: string, t = `${s}.jobs`) => `
WITH released AS (
  UPDATE ${t} j SET
    state = CASE
      WHEN j.policy = 'short' THEN 'retry'
      WHEN j.policy = 'stately' AND NOT ${SLOT_FREE(t, 'created')} THEN 'retry'
      WHEN j.policy = 'stately' THEN 'created'
      WHEN j.retry_count = 0 THEN 'created'
      ELSE 'retry' END::${s}.job_state,
    worker_id = NULL,
    started_on = NULL,
    lease_until = NULL,
    heartbeat_until = NULL
  FROM ${NAMED('id, claim_count, stamp', '$2::bigint[], $3::int[], $6::bigint[]')}
  WHERE j.queue = u.queue AND j.id = u.id AND j.claim_count = u.claim_count AND j.worker_id = $4 AND ${ACTIVE}
    AND ${STAMPED} AND (${RETRY_SLOT_FREE(t)} OR ${SLOT_FREE(t, 'created')})
  RETURNING j.id
)
SELECT released.id::text, pg_notify($5, $1)::text AS notified FROM released`;

// ---- arguments: each statement's $n order, written once ----

/** An attempt as its worker holds it: the job, its claim count and its stamp (see STAMPED). */
export interface HeldAttempt {
  id: string;
  claim_count: number;
  stamp: string;
}

/** The arguments of heartbeatJobs ($1-$5). */
export function heartbeatArgs(queue: string, attempts: readonly HeldAttempt[], workerId: string): unknown[] {
  return [queue, attempts.map((a) => a.id), attempts.map((a) => a.claim_count), workerId, attempts.map((a) => a.stamp)];
}

/** The arguments of touchJobs ($1-$3): the jobs by id, each with the attempt (retryCount) to touch or null (any). */
export function touchArgs(queue: string, refs: readonly { id: string; retryCount: number | null }[]): unknown[] {
  return [queue, refs.map((r) => r.id), refs.map((r) => r.retryCount)];
}

/** The arguments of releaseJobs ($1-$6). */
export function releaseArgs(queue: string, attempts: readonly HeldAttempt[], workerId: string, channel: string): unknown[] {
  return [queue, attempts.map((a) => a.id), attempts.map((a) => a.claim_count), workerId, channel, attempts.map((a) => a.stamp)];
}
