import { APPEND_ERROR, DEAD_LETTER, FAILED_RETURNING, KEEP_FAILED, ORPHAN_DESCENDANTS } from './fragments.js';

/**
 * Settings for the rest of a maintenance or monitor transaction. A statement timeout: a batch or count that cannot
 * finish in time (a lock it waits for, a plan gone wrong) is cancelled and its transaction rolled back, and the
 * next pass starts again. And no JIT: the engine's sessions disable sequential scans (ENGINE_SESSION in db.ts), so a
 * plan that reads a whole small table (the queues) is costed at 10^10 and crosses jit_above_cost; JIT compilation
 * then took 1,860 ms of a monitor pass whose execution took 2 ms (EXPLAIN ANALYZE of monitorQueues over 20
 * queues; test/core/monitor.spec.ts "is never compiled"). $1 statement timeout in milliseconds
 */
export const setPassSettings = (_s: string) => `SELECT set_config('statement_timeout', $1::text, true), set_config('jit', 'off', true)`;

/**
 * Deletes up to $1 finished jobs (completed, cancelled, failed) whose keep_until has passed, oldest first, through
 * jobs_finished_keep_idx (migration 5). Rows another transaction holds are skipped (SKIP LOCKED): a batch never
 * waits for a worker, an operator or another instance's pass. Kept however old, while something depends on them:
 * - a throttled job until its slot ends (slot_until): its row holds the slot, and a send into a slot whose row is
 *   gone would start a second job in it;
 * - a key_strict_fifo job that failed while jobs of its key still wait: it blocks the key (the waiting jobs run
 *   only once it is retried or deleted by hand), and its deletion would release them unseen;
 * - a flow parent while a child still waits or runs; and one that did not complete (failed, cancelled: an operator
 *   may retry or resume it) while a child cancelled before its release still counts parents, since resuming that
 *   child makes it wait for them again. A completed parent has counted down every child already.
 * A deleted job's links to its children go with it (job_deps is keyed by the parent); links from its parents go
 * when they are deleted.
 *
 * $1 most jobs per batch
 */
export const deleteFinishedJobs = (s: string) => `
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM ${s}.jobs j
  WHERE j.state > 'active' AND j.keep_until < now()
    AND (j.slot_until IS NULL OR j.slot_until <= now())
    AND NOT (j.policy = 'key_strict_fifo' AND j.state = 'failed' AND EXISTS (
      SELECT 1 FROM ${s}.jobs w
      WHERE w.queue = j.queue AND w.singleton_key = j.singleton_key AND w.state = 'created' AND w.policy = 'key_strict_fifo'))
    AND NOT EXISTS (
      SELECT 1 FROM ${s}.job_deps d JOIN ${s}.jobs c ON c.queue = d.child_queue AND c.id = d.child_id
      WHERE d.parent_queue = j.queue AND d.parent_id = j.id
        AND (c.state < 'completed' OR (j.state <> 'completed' AND c.state = 'cancelled' AND c.blocked_by > 0)))
  ORDER BY j.keep_until
  LIMIT $1
  FOR UPDATE OF j SKIP LOCKED
), gone AS (
  DELETE FROM ${s}.jobs j USING doomed d
  WHERE j.queue = d.queue AND j.id = d.id
  RETURNING j.queue, j.id
), links AS (
  DELETE FROM ${s}.job_deps dep USING gone g
  WHERE dep.parent_queue = g.queue AND dep.parent_id = g.id
)
SELECT count(*)::int AS deleted FROM gone`;

/**
 * Fails up to $1 jobs that waited unstarted (created, retry) past their keep_until, the end of their retention:
 * each ends `failed` with a RetentionExpiredError in its output, goes to its dead-letter queue like any job that
 * failed for good, and takes down the flow children that waited for it. A job waiting for its flow parents has
 * keep_until infinity until they complete. Rows held elsewhere are skipped (a claim taking one now wins).
 *
 * Found by reading the waiting jobs through the claim's index (jobs_ready_idx), in no particular order, up to the
 * first $1 found: no index of its own, since one costs every insert (migration 5). A pass that finds none reads
 * every waiting job once: a whole pass took 41 ms over 10,000 waiting jobs, 109 ms over 100,000 and 1,120 ms
 * over 1,000,000 (bench/soak.mjs --backlog N --minutes 0, embedded PostgreSQL 18).
 *
 * A key_strict_fifo job expires only as the head of its key (nothing of the key in retry, active or failed; one
 * per key per batch): it fails and then blocks its key, as a failure would. The jobs behind it wait for an
 * operator, as behind any failure of their key, and do not expire while they wait.
 *
 * $1 most jobs per batch. Returns the expired jobs' ids and queues.
 */
export const expireWaitingJobs = (s: string) => `
WITH RECURSIVE candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.policy, j.singleton_key, j.keep_until, j.retry_count FROM ${s}.jobs j
  WHERE j.state < 'active' AND j.keep_until < now()
    AND (j.policy <> 'key_strict_fifo' OR (j.fifo_wait = 0 AND NOT EXISTS (
      SELECT 1 FROM ${s}.jobs b
      WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.state IN ('retry', 'active', 'failed')
        AND b.policy = 'key_strict_fifo' AND b.id <> j.id)))
  LIMIT $1
  FOR UPDATE OF j SKIP LOCKED
), expired AS (
  SELECT c.queue, c.id, jsonb_build_object(
      'name', 'RetentionExpiredError',
      'message', format('not started before its retention ran out at %s', c.keep_until),
      'retryCount', c.retry_count) AS error
  FROM candidates c
  WHERE c.policy <> 'key_strict_fifo' OR c.id = (
    SELECT min(o.id) FROM candidates o WHERE o.queue = c.queue AND o.singleton_key = c.singleton_key AND o.policy = 'key_strict_fifo')
), ended AS (
  UPDATE ${s}.jobs j SET
    state = 'failed',
    completed_on = now(),
    keep_until = ${KEEP_FAILED(s)},
    output = ${APPEND_ERROR('e.error')}
  FROM expired e
  WHERE j.queue = e.queue AND j.id = e.id AND j.state < 'active'
  RETURNING ${FAILED_RETURNING}
), ${DEAD_LETTER(s, 'ended')}, ${ORPHAN_DESCENDANTS(s, 'ended')}
SELECT r.id::text, r.queue FROM ended r`;
