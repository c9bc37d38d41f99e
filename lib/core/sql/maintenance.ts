import {
  ACTIVE,
  DEAD_LETTER,
  FAILED_RETURNING,
  ORPHAN_DESCENDANTS,
  RETRY_DELAY,
  RETRY_OR_FAIL,
  RETRY_SLOT_FREE,
  PASS_FAILED,
} from './fragments.js';

/**
 * Puts active jobs whose lease or heartbeat ran out back to `retry` (attempt counted, after the retry
 * delay) or to `failed` when no retries remain, and records why in the output. Only the database's clock
 * is read. Rows are locked with SKIP LOCKED and re-checked, so a job completed in the instant between
 * this read and this write stays completed, and two reapers never reap one job twice.
 * A job failed for good goes to its dead-letter queue, as in failJobs. Wakes the queues' workers with a NOTIFY
 * (a retry that waits for its delay, with the time it becomes due).
 *
 * $1 most jobs per pass, $2 channel
 */
export const reapExpiredLeases = (s: string) => `
WITH RECURSIVE expired AS MATERIALIZED (
  SELECT j.queue, j.id,
    (j.retry_count < j.retry_limit AND ${RETRY_SLOT_FREE(`${s}.jobs`)}) AS retrying,
    -- the delay once per job: backoff draws a random share
    ${RETRY_DELAY} AS delay,
    jsonb_build_object(
      'name', 'LeaseExpiredError',
      'message', CASE WHEN j.lease_until < now()
        THEN format('lease of %s seconds ran out (worker %s)', j.expire_seconds, j.worker_id)
        ELSE format('no heartbeat for %s seconds (worker %s)', j.heartbeat_seconds, j.worker_id) END,
      'retryCount', j.retry_count) AS error
  FROM ${s}.jobs j
  WHERE j.state = 'active' AND (j.lease_until < now() OR j.heartbeat_until < now())
  ORDER BY j.lease_until
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), reaped AS (
UPDATE ${s}.jobs j SET
  ${RETRY_OR_FAIL(s, 'e')}
FROM expired e
WHERE j.queue = e.queue AND j.id = e.id AND ${ACTIVE}
RETURNING ${FAILED_RETURNING}
), ${DEAD_LETTER(s, 'reaped')}, ${ORPHAN_DESCENDANTS(s, 'reaped')}${PASS_FAILED('reaped', '$2')}`;

/**
 * Settings for the rest of a maintenance or monitor transaction. A statement timeout: a batch or count that cannot
 * finish in time (a lock it waits for, a plan gone wrong) is cancelled and its transaction rolled back, and the
 * next pass starts again. And no JIT, also on a pool handed in (the engine's own sessions have it off:
 * ENGINE_SESSION in db.ts; docs/design.md, "Planning: what is prepared and what is planned on each run").
 * $1 statement timeout in ms
 */
export const setPassSettings = (_s: string) => `SELECT set_config('statement_timeout', $1::text, true), set_config('jit', 'off', true)`;

/** One maintenance pass at a time per schema, cluster-wide; released at commit. $1 schema name */
export const tryMaintenanceLock = (_s: string) => `SELECT pg_try_advisory_xact_lock(1885824374, hashtext($1)) AS locked`;

/**
 * Bounds this transaction's waits for a lock (a forced pass's wait for a pass's lock) to $1 milliseconds, or to the
 * session's lock_timeout when that is shorter (a role's); returns the session's (`was`, ms) for endLockWait.
 */
export const setLockWait = (_s: string) => `
SELECT c.setting AS was,
  set_config('lock_timeout', (CASE WHEN c.setting::int = 0 THEN $1::int ELSE least(c.setting::int, $1::int) END)::text, true)
FROM pg_settings c WHERE c.name = 'lock_timeout'`;

/** The session's lock_timeout again for the rest of this transaction: $1 the milliseconds setLockWait returned. */
export const endLockWait = (_s: string) => `SELECT set_config('lock_timeout', $1::text, true)`;

/** Takes the maintenance lock for this transaction, waiting for a pass under way to end (a forced pass). $1 schema name */
export const waitMaintenanceLock = (_s: string) => `SELECT true AS locked FROM pg_advisory_xact_lock(1885824374, hashtext($1))`;

/**
 * Takes the turn of task $1 when it last ran at least $2 seconds ago (or never); returns a row when
 * this instance should run it now.
 */
export const takeMaintenanceTurn = (s: string) => `
INSERT INTO ${s}.maintenance AS m (task, last_run_on) VALUES ($1, now())
ON CONFLICT (task) DO UPDATE SET last_run_on = now()
  WHERE m.last_run_on <= now() - $2::float8 * interval '1 second'
RETURNING m.task`;

/**
 * key_strict_fifo safety net (migration 2's marks): walks up to $3 keys that have queued jobs, in (queue, key)
 * order after the cursor ($1, $2), and unmarks the first queued job of any key where nothing is visible to
 * the claim: its first queued job is marked as waiting, yet no job of the key is in retry, active or failed,
 * so there is nothing for it to wait behind. The triggers keep the marks right; if a race ever left such a
 * key, this unsticks it within a few passes. Clearing a mark is always safe: the claim still checks each job.
 * Returns the last key walked (null when the walk reached the end) and how many keys it unstuck.
 *
 * $1 cursor queue, $2 cursor key ('' and '' to start), $3 most keys per pass
 */
export const repairFifoMarks = (s: string) => `
WITH RECURSIVE keys(queue, k, n) AS (
  (SELECT j.queue, j.singleton_key, 1 FROM ${s}.jobs j
   WHERE j.state = 'created' AND j.policy = 'key_strict_fifo' AND (j.queue, j.singleton_key) > ($1::text, $2::text)
   ORDER BY j.queue, j.singleton_key LIMIT 1)
  UNION ALL
  SELECT nxt.queue, nxt.singleton_key, keys.n + 1 FROM keys
  CROSS JOIN LATERAL (
    SELECT j.queue, j.singleton_key FROM ${s}.jobs j
    WHERE j.state = 'created' AND j.policy = 'key_strict_fifo' AND (j.queue, j.singleton_key) > (keys.queue, keys.k)
    ORDER BY j.queue, j.singleton_key LIMIT 1
  ) nxt
  WHERE keys.n < $3
), heads AS (
  SELECT keys.queue, keys.k, first.id, first.fifo_wait FROM keys
  CROSS JOIN LATERAL (
    SELECT f.id, f.fifo_wait FROM ${s}.jobs f
    WHERE f.queue = keys.queue AND f.singleton_key = keys.k AND f.state = 'created' AND f.policy = 'key_strict_fifo'
    ORDER BY f.id LIMIT 1
  ) first
), unstuck AS (
  UPDATE ${s}.jobs j SET fifo_wait = 0
  FROM heads h
  WHERE h.fifo_wait > 0 AND j.queue = h.queue AND j.id = h.id AND j.state = 'created' AND j.fifo_wait > 0
    AND NOT EXISTS (
      SELECT 1 FROM ${s}.jobs b
      WHERE b.queue = h.queue AND b.singleton_key = h.k AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo')
  RETURNING j.id
)
SELECT (SELECT count(*)::int FROM unstuck) AS unstuck,
  (SELECT count(*)::int FROM keys) AS walked,
  (SELECT k.queue FROM keys k ORDER BY k.n DESC LIMIT 1) AS last_queue,
  (SELECT k.k FROM keys k ORDER BY k.n DESC LIMIT 1) AS last_key`;
