import { KEEP_FINISHED } from './fragments.js';

/** Job control by id: inspection, cancel, resume, delete. */

const JOB_COLUMNS = `j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text`;

/** $1 queue, $2 id */
export const getJobById = (s: string) => `SELECT ${JOB_COLUMNS} FROM ${s}.jobs j WHERE j.queue = $1 AND j.id = $2::bigint`;

/** The states of the given jobs, to explain why a change touched fewer rows than asked. $1 queue, $2 ids */
export const getJobStates = (s: string) => `
SELECT j.id::text, j.state::text FROM ${s}.jobs j WHERE j.queue = $1 AND j.id = ANY($2::bigint[])`;

/** Cancels jobs that have not finished; a running handler's result is then refused by the fence. */
export const cancelJobs = (s: string) => `
UPDATE ${s}.jobs j SET
  state = 'cancelled',
  completed_on = now(),
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = ${KEEP_FINISHED}
WHERE j.queue = $1 AND j.id = ANY($2::bigint[]) AND j.state < 'completed'
RETURNING j.id::text`;

/** Brings cancelled jobs back to the queue, with the queue's retention counted from now; wakes its workers. $3 channel */
export const resumeJobs = (s: string) => `
WITH resumed AS (
UPDATE ${s}.jobs j SET
  state = CASE WHEN j.retry_count = 0 THEN 'created' ELSE 'retry' END::${s}.job_state,
  completed_on = NULL,
  keep_until = greatest(j.start_after, now()) + q.retention_seconds * interval '1 second'
FROM ${s}.queues q
WHERE q.name = j.queue AND j.queue = $1 AND j.id = ANY($2::bigint[]) AND j.state = 'cancelled'
RETURNING j.id
)
SELECT resumed.id::text, pg_notify($3, $1)::text AS notified FROM resumed`;

export const deleteJobs = (s: string) => `
DELETE FROM ${s}.jobs j WHERE j.queue = $1 AND j.id = ANY($2::bigint[]) RETURNING j.id::text`;
