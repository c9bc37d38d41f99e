import { RETRY_SLOT_FREE } from './fragments.js';

/** Leases: extending them while a handler runs, and handing jobs back on shutdown. */

/**
 * Heartbeat for many attempts of one worker at once; returns the attempts it still holds.
 * $1 queue, $2 ids bigint[], $3 claim counts int[], $4 worker id
 */
export const heartbeatJobs = (s: string) => `
UPDATE ${s}.jobs j SET heartbeat_until = now() + j.heartbeat_seconds * interval '1 second'
FROM unnest($2::bigint[], $3::int[]) AS u(id, claim_count)
WHERE j.queue = $1 AND j.id = u.id AND j.claim_count = u.claim_count AND j.worker_id = $4 AND j.state = 'active'
RETURNING j.id::text`;

/**
 * Hands unfinished attempts back to the queue at once, without counting an attempt, so another instance
 * takes them now instead of after the lease runs out; wakes that instance with a NOTIFY. Jobs of short
 * and stately queues go to `retry`, whose slot their policy does not share with `created`; a stately job
 * whose key already waits in retry stays active, and its lease decides.
 * $1 queue, $2 ids bigint[], $3 claim counts int[], $4 worker id, $5 channel
 */
export const releaseJobs = (s: string) => `
WITH released AS (
  UPDATE ${s}.jobs j SET
    state = CASE WHEN j.retry_count = 0 AND j.policy NOT IN ('short', 'stately') THEN 'created' ELSE 'retry' END::${s}.job_state,
    worker_id = NULL,
    started_on = NULL,
    lease_until = NULL,
    heartbeat_until = NULL
  FROM unnest($2::bigint[], $3::int[]) AS u(id, claim_count)
  WHERE j.queue = $1 AND j.id = u.id AND j.claim_count = u.claim_count AND j.worker_id = $4 AND j.state = 'active'
    AND ${RETRY_SLOT_FREE(s)}
  RETURNING j.id
)
SELECT released.id::text, pg_notify($5, $1)::text AS notified FROM released`;
