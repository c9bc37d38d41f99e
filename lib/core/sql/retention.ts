import {
  APPEND_ERROR,
  DEAD_LETTER,
  DELETE_DOOMED,
  LAST_ERROR,
  FAILED_RETURNING,
  FIFO_HEAD,
  KEEP_FAILED,
  ORPHAN_DESCENDANTS,
  NO_LONGER_NEEDED,
} from './fragments.js';

/**
 * Deletes up to $1 finished jobs (completed, cancelled, failed) whose keep_until has passed, oldest first, through
 * jobs_finished_keep_idx (migration 5). Rows another transaction holds are skipped (SKIP LOCKED): a batch never
 * waits for a worker, an operator or another instance's pass. A job something still depends on is kept however old
 * (NO_LONGER_NEEDED: a throttle slot, a failed key_strict_fifo job holding its key, a flow parent), and a deleted
 * job's links to its children go with it (docs/design.md, "Maintenance").
 *
 * $1 most jobs per batch
 */
export const deleteFinishedJobs = (s: string) => `
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM ${s}.jobs j
  WHERE j.state > 'active' AND j.keep_until < now()
    AND ${NO_LONGER_NEEDED(s)}
  ORDER BY j.keep_until
  LIMIT $1
  FOR UPDATE OF j SKIP LOCKED
), ${DELETE_DOOMED(s)}
SELECT count(*)::int AS deleted FROM gone`;

/**
 * Fails the jobs that waited unstarted (created, retry) past their keep_until, the end of their retention, among
 * the next $1 jobs of the table in primary-key order after the cursor ($2, $3): each ends `failed` with a
 * RetentionExpiredError in its output, goes to its dead-letter queue like any job that failed for good, and takes
 * down the flow children that waited for it. A job waiting for its flow parents has keep_until infinity until they
 * complete. Rows held elsewhere are skipped (a claim taking one now wins; the next walk sees it again).
 *
 * A walk of bounded slices, not a search: an index of waiting jobs by keep_until would cost every insert, and one
 * statement over every waiting job would run into its timeout. A key_strict_fifo job expires only as its key's head
 * (FIFO_HEAD), one per key per statement, and then blocks its key as a failure would (docs/design.md, "Maintenance").
 *
 * $1 jobs to walk, $2 cursor queue, $3 cursor id ('' and 0 to start). Returns one row: the expired jobs (a JSON
 * array of { id, queue }), how many jobs were walked, and the last one.
 */
export const expireWaitingJobs = (s: string) => `
WITH RECURSIVE walked AS MATERIALIZED (
  SELECT j.queue, j.id FROM ${s}.jobs j
  WHERE (j.queue, j.id) > ($2::text, $3::bigint)
  ORDER BY j.queue, j.id
  LIMIT $1
), candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.policy, j.singleton_key, j.keep_until, j.retry_count
  FROM walked w JOIN ${s}.jobs j ON j.queue = w.queue AND j.id = w.id
  WHERE j.state < 'active' AND j.keep_until < now()
    AND (j.policy <> 'key_strict_fifo' OR (j.fifo_wait = 0 AND ${FIFO_HEAD(`${s}.jobs`, 'j')}))
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
    output = ${APPEND_ERROR('e.error')},
    last_error = ${LAST_ERROR('e.error')}
  FROM expired e
  WHERE j.queue = e.queue AND j.id = e.id AND j.state < 'active'
  RETURNING ${FAILED_RETURNING}
), ${DEAD_LETTER(s, 'ended')}, ${ORPHAN_DESCENDANTS(s, 'ended')}
SELECT coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id::text, 'queue', r.queue)) FROM ended r), '[]'::jsonb) AS expired,
  (SELECT count(*)::int FROM walked) AS walked,
  (SELECT w.queue FROM walked w ORDER BY w.queue DESC, w.id DESC LIMIT 1) AS last_queue,
  (SELECT w.id::text FROM walked w ORDER BY w.queue DESC, w.id DESC LIMIT 1) AS last_id`;

/**
 * Where a walk of $1 jobs after the cursor ($2, $3) ends, without changing anything: expireWaitingJobs' cursor
 * moves past a slice whose statement failed, so that one row it cannot change (reported) holds no other back.
 */
export const walkEnd = (s: string) => `
SELECT j.queue AS last_queue, j.id::text AS last_id FROM ${s}.jobs j
WHERE (j.queue, j.id) > ($2::text, $3::bigint)
ORDER BY j.queue, j.id
OFFSET $1 - 1 LIMIT 1`;
