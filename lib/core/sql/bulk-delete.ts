import { DELETE_DOOMED, ORPHAN_DESCENDANTS, NO_LONGER_NEEDED } from './fragments.js';

/**
 * Bulk deletes by queue (bulk-delete.ts): each statement deletes at most $2 jobs of queue $1 and skips the rows
 * another transaction holds (SKIP LOCKED), so that a call never waits for a worker or an operator and never holds
 * more than one batch of rows; the caller runs batches while they come back full.
 */

/** The highest job id of queue $1 ('0' when it has none): where a bulk delete of its waiting jobs stops. */
export const queueLastId = (s: string) => `SELECT coalesce(max(j.id), 0)::text AS last_id FROM ${s}.jobs j WHERE j.queue = $1`;

/**
 * Deletes up to $2 waiting jobs (created, retry) of queue $1, walking in id order after cursor $3 up to id $4 (the
 * queue's last id when the call began: jobs sent meanwhile are not chased, so a busy queue's call ends). Keeps a
 * flow parent that a child cancelled before its release still counts: a resume would make that child wait for it
 * again (as retention keeps it). Returns the deleted ids and the cursor of the next batch: the same transaction then
 * runs orphanDeletedParents on the ids, for the flow children that waited for them. (In this statement, the update
 * of a child deleted by the same batch would meet its delete, whose outcome PostgreSQL leaves undefined.)
 * $1 queue, $2 most jobs, $3 cursor id, $4 last id
 */
export const deleteQueuedBatch = (s: string) => `
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM ${s}.jobs j
  WHERE j.queue = $1 AND j.id > $3::bigint AND j.id <= $4::bigint AND j.state < 'active'
    AND NOT EXISTS (
      SELECT 1 FROM ${s}.job_deps d JOIN ${s}.jobs c ON c.queue = d.child_queue AND c.id = d.child_id
      WHERE d.parent_queue = j.queue AND d.parent_id = j.id AND c.state = 'cancelled' AND c.blocked_by > 0)
  ORDER BY j.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
), gone AS (
  DELETE FROM ${s}.jobs j USING doomed d
  WHERE j.queue = d.queue AND j.id = d.id
  RETURNING j.id
)
SELECT coalesce(array_agg(g.id::text), '{}') AS ids, (SELECT max(d.id)::text FROM doomed d) AS last_id FROM gone g`;

/**
 * After deleteQueuedBatch, in its transaction: the flow children still waiting for the deleted jobs $2 of queue
 * $1 (and their own blocked descendants) fail or are cancelled, as each asked, as when a parent is cancelled (a
 * deleted parent can no longer complete: they would wait forever); then the deleted jobs' links to their children
 * go. Children deleted by the batch are gone from this statement's snapshot and left alone.
 * $1 queue, $2 deleted ids (text[])
 */
export const orphanDeletedParents = (s: string) => `
WITH RECURSIVE deleted AS (
  SELECT $1::text AS queue, x.id::bigint AS id, 'cancelled'::text AS state, NULL::text AS singleton_key
  FROM unnest($2::text[]) AS x(id)
), ${ORPHAN_DESCENDANTS(s, 'deleted')}, links AS (
  DELETE FROM ${s}.job_deps dep USING deleted g
  WHERE dep.parent_queue = g.queue AND dep.parent_id = g.id
)
SELECT count(*)::int AS orphaned FROM orphaned`;

/**
 * Deletes up to $2 finished jobs (completed, cancelled, failed) of queue $1, whatever their keep_until, and keeps
 * what retention keeps however old (sql/retention.ts, deleteFinishedJobs, says why): a throttled job until its
 * slot ends, a failed key_strict_fifo job while jobs of its key wait, a flow parent while a child waits or runs
 * (or, for a parent that did not complete, while a child cancelled before its release still counts it). A deleted
 * job's links to its children go with it.
 *
 * Batches walk the queue in id order from cursor $3 (the last id of the batch before; '0' to start): the rows a
 * batch kept, and the waiting and active ones among the finished, are read once per call, not once per batch.
 * $1 queue, $2 most jobs, $3 cursor id. Returns how many were deleted, and the cursor of the next batch.
 */
export const deleteStoredBatch = (s: string) => `
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM ${s}.jobs j
  WHERE j.queue = $1 AND j.id > $3::bigint AND j.state > 'active'
    AND ${NO_LONGER_NEEDED(s)}
  ORDER BY j.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
), ${DELETE_DOOMED(s)}
SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT max(d.id)::text FROM doomed d) AS last_id`;

/** Every queue's name, for deleteAllJobs without one. */
export const allQueueNames = (s: string) => `SELECT name FROM ${s}.queues ORDER BY name`;
