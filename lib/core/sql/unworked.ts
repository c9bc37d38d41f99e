import {
  DEAD_LETTER,
  FAILED_RETURNING,
  LIVE_WORKER,
  ORPHAN_DESCENDANTS,
  RETRY_DELAY,
  RETRY_OR_FAIL,
  RETRY_SLOT_FREE,
  PASS_FAILED,
} from './fragments.js';

/**
 * failUnworkedAfterSeconds, in the maintenance pass (passes/unworked.ts). For each queue with the setting: whether a
 * live loop of the cluster registry works it; `unworked_since` is set at the first pass that finds none (and the queue
 * not paused) and cleared at the first that finds one. Returns the queues unworked for at least their setting, with
 * how long, as the queues stood before this statement (a queue marked now waits its full setting from now). `marked`
 * runs though nothing reads it: PostgreSQL runs a data-modifying CTE to completion whatever the query reads.
 */
export const watchUnworkedQueues = (s: string) => `
WITH watched AS MATERIALIZED (
  SELECT q.name, q.fail_unworked_after_seconds AS after, q.unworked_since,
    q.paused OR EXISTS (SELECT 1 FROM ${s}.workers w
      WHERE ${LIVE_WORKER('w')} AND w.loops @> jsonb_build_array(jsonb_build_object('queue', q.name))) AS waits_rightly
  FROM ${s}.queues q
  WHERE q.fail_unworked_after_seconds IS NOT NULL
), marked AS (
  UPDATE ${s}.queues q SET unworked_since = CASE WHEN w.waits_rightly THEN NULL ELSE now() END
  FROM watched w
  WHERE q.name = w.name AND (w.waits_rightly = (w.unworked_since IS NOT NULL))
  RETURNING q.name
)
SELECT w.name, w.after, extract(epoch FROM now() - w.unworked_since)::float8 AS unworked_seconds, now() AS pass_began
FROM watched w
WHERE NOT w.waits_rightly AND w.unworked_since <= now() - w.after * interval '1 second'
ORDER BY w.name`;

/**
 * Fails up to $2 ready jobs of queue $1 (waiting, due before the pass began, not held back by a flow parent: its
 * start_after is infinity) as an attempt each, with the
 * error message $4 (UnworkedQueueError): retried while retries remain, else failed for good and dead-lettered, as a
 * lease that ran out is (reapExpiredLeases). Rows are locked with SKIP LOCKED and re-checked, so a job claimed in the
 * instant between is left to its worker. Wakes the queue's workers as the reaper does (PASS_FAILED) on channel $3.
 * $1 queue, $2 most jobs, $3 channel, $4 message, $5 when the pass began (watchUnworkedQueues' pass_began)
 */
export const failUnworkedJobs = (s: string) => `
WITH RECURSIVE picked AS MATERIALIZED (
  SELECT j.queue, j.id,
    (j.retry_count < j.retry_limit AND ${RETRY_SLOT_FREE(`${s}.jobs`)}) AS retrying,
    ${RETRY_DELAY} AS delay,
    jsonb_build_object('name', 'UnworkedQueueError', 'message', $4::text, 'queue', j.queue, 'retryCount', j.retry_count) AS error
  FROM ${s}.jobs j
  -- due before the pass began ($5): a job a batch of this pass sent back to retry, even with no delay, is due after it,
  -- and waits for the next pass
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < $5::timestamptz
    -- checked again at each batch: the queue may have been paused, given a worker or its setting changed since
    AND EXISTS (SELECT 1 FROM ${s}.queues q WHERE q.name = $1 AND NOT q.paused AND q.fail_unworked_after_seconds IS NOT NULL
      AND q.unworked_since <= now() - q.fail_unworked_after_seconds * interval '1 second')
    AND NOT EXISTS (SELECT 1 FROM ${s}.workers w
      WHERE ${LIVE_WORKER('w')} AND w.loops @> jsonb_build_array(jsonb_build_object('queue', $1::text)))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), failed AS (
UPDATE ${s}.jobs j SET
  ${RETRY_OR_FAIL(s, 'e')}
FROM picked e
WHERE j.queue = e.queue AND j.id = e.id AND j.state::text IN ('created', 'retry')
RETURNING ${FAILED_RETURNING}
), ${DEAD_LETTER(s, 'failed')}, ${ORPHAN_DESCENDANTS(s, 'failed')}${PASS_FAILED('failed', '$3')}`;
