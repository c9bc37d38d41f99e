/**
 * The claim: one statement that picks the next runnable jobs of a queue and marks them active under
 * this worker's lease.
 *
 * The pick is a MATERIALIZED CTE on purpose (Oban's warning): inlined, the planner may run the limited,
 * SKIP LOCKED subquery more than once and update more rows than were asked for. It walks jobs_ready_idx
 * in claim order (priority DESC, start_after, id) and skips rows that another claimer holds locked.
 *
 * $1 queue, $2 how many, $3 worker id, $4 min priority (null: none), $5 max priority (null: none)
 */
export const claimJobs = (s: string) => `
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id
  FROM ${s}.jobs j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= now()
    AND ($4::int IS NULL OR j.priority >= $4::int)
    AND ($5::int IS NULL OR j.priority <= $5::int)
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE ${s}.jobs j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = now(),
  lease_until = now() + j.expire_seconds * interval '1 second',
  heartbeat_until = now() + j.heartbeat_seconds * interval '1 second'
FROM next
WHERE j.queue = next.queue AND j.id = next.id
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key,
  j.created_on, j.started_on, j.start_after, j.expire_seconds, j.heartbeat_seconds`;

/**
 * The claim for queues whose policy allows one active job per key (singleton, stately): the same pick,
 * skipping keys that already have an active job and taking at most one job per key, so a batch never
 * breaks the policy's unique index. Two claimers racing for one key both pass the check; the index
 * refuses the later one's statement as a whole (unique_violation), which the engine turns into an
 * empty claim. Candidates are over-fetched (4× the batch) so that a run of one key does not starve
 * the others.
 *
 * $1 queue, $2 how many, $3 worker id, $4 min priority (null: none), $5 max priority (null: none)
 */
export const claimJobsOnePerKey = (s: string) => `
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.priority, j.start_after, j.singleton_key
  FROM ${s}.jobs j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= now()
    AND ($4::int IS NULL OR j.priority >= $4::int)
    AND ($5::int IS NULL OR j.priority <= $5::int)
    AND NOT EXISTS (
      SELECT 1 FROM ${s}.jobs a
      WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy
        AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key)
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT d.queue, d.id FROM (
    SELECT DISTINCT ON (c.singleton_key) c.queue, c.id, c.priority, c.start_after
    FROM candidates c
    ORDER BY c.singleton_key, c.priority DESC, c.start_after, c.id
  ) d
  ORDER BY d.priority DESC, d.start_after, d.id
  LIMIT $2
)
UPDATE ${s}.jobs j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = now(),
  lease_until = now() + j.expire_seconds * interval '1 second',
  heartbeat_until = now() + j.heartbeat_seconds * interval '1 second'
FROM next
WHERE j.queue = next.queue AND j.id = next.id
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key,
  j.created_on, j.started_on, j.start_after, j.expire_seconds, j.heartbeat_seconds`;
