import { JOB_COLUMNS, JOB_VIEW_LINKS } from './fragments.js';

/**
 * The dashboard's job view: the job, and every fact that may hold it back from running, read in the dashboard's
 * READ ONLY transaction (lib/core/dashboard/job-view.ts turns them into reasons). Each fact is one index probe or
 * a bounded walk, and only read where it can apply: the running count of the queue only under a concurrency
 * limit, the rate window only under a rate limit, the key's holders only under the policy that holds keys back,
 * the group's running count only for a job in a group, and the ready jobs ahead of it (counted up to 1,001 of each higher and equal priority) only while it
 * is ready. Times are milliseconds since the epoch on the database's clock. $1 queue, $2 id
 */
export const dashboardJob = (s: string) => `
SELECT ${JOB_COLUMNS}, j.policy, j.group_id, j.group_tier, j.blocked_by, j.heartbeat_until, j.attempts,
  (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after_ms,
  q.paused, q.concurrency_limit, q.rate_limit_count, q.rate_limit_seconds,
  CASE WHEN q.concurrency_limit IS NOT NULL AND j.state < 'active' THEN
    (SELECT count(*)::int FROM ${s}.jobs a WHERE a.queue = j.queue AND a.state = 'active') END AS queue_running,
  CASE WHEN q.rate_limit_count IS NOT NULL AND j.state < 'active' THEN coalesce((
    SELECT w.started FROM ${s}.rate_windows w
    WHERE w.queue = q.name
      AND w.window_start = to_timestamp(floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) * q.rate_limit_seconds)), 0) END
    AS window_started,
  CASE WHEN q.rate_limit_count IS NOT NULL THEN
    ((floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) + 1) * q.rate_limit_seconds * 1000)::float8 END AS window_ends_ms,
  CASE WHEN j.state < 'active' AND j.policy IN ('singleton', 'stately') THEN (
    SELECT a.id::text FROM ${s}.jobs a
    WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key
    LIMIT 1) END AS key_running_id,
  CASE WHEN j.state < 'active' AND j.policy = 'key_strict_fifo' THEN (
    SELECT jsonb_build_object('id', b.id::text, 'state', b.state) FROM ${s}.jobs b
    WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
      AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
    ORDER BY b.state DESC
    LIMIT 1) END AS key_holder,
  CASE WHEN j.state = 'created' AND j.policy = 'key_strict_fifo' THEN (
    SELECT e.id::text FROM ${s}.jobs e
    WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
      AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after <= statement_timestamp()
    LIMIT 1) END AS key_earlier_id,
  CASE WHEN j.state < 'active' AND j.group_id IS NOT NULL THEN
    (SELECT count(*)::int FROM ${s}.jobs a WHERE a.queue = j.queue AND a.group_id = j.group_id AND a.state = 'active') END AS group_running,
  -- the ready jobs ahead in claim order, as two counts whose conditions bound a walk of jobs_ready_idx each (one
  -- condition with OR could not: it would walk the rest of the queue's waiting jobs when fewer than the cap are ahead)
  CASE WHEN j.state < 'active' AND j.start_after <= statement_timestamp() THEN (
    SELECT count(*)::int FROM (
      SELECT 1 FROM ${s}.jobs r
      WHERE r.queue = j.queue AND r.state < 'active' AND r.priority > j.priority AND r.start_after <= statement_timestamp()
      LIMIT 1001) x) END AS ahead_higher,
  CASE WHEN j.state < 'active' AND j.start_after <= statement_timestamp() THEN (
    SELECT count(*)::int FROM (
      SELECT 1 FROM ${s}.jobs r
      WHERE r.queue = j.queue AND r.state < 'active' AND r.priority = j.priority AND (r.start_after, r.id) < (j.start_after, j.id)
      LIMIT 1001) x) END AS ahead_equal
FROM ${s}.jobs j
JOIN ${s}.queues q ON q.name = j.queue
WHERE j.queue = $1 AND j.id = $2::bigint`;

/**
 * The jobs linked to job $2 of queue $1, for the job view: its flow's parents (job_deps_child_idx) and children
 * (job_deps' primary key), and its dead-letter copies (jobs_source_idx, migration 18), each kind at most
 * JOB_VIEW_LINKS + 1, with its state; the links are cut before the jobs are read, so a job with a million parents
 * costs what one with fifty does (its parents are then some of them, in no order the index keeps: the index holds
 * the child's side alone). A linked job deleted since is left out.
 */
export const dashboardJobLinks = (s: string) => `
SELECT 'parent' AS kind, j.queue, j.id::text AS id, j.state
FROM (SELECT d.parent_queue, d.parent_id FROM ${s}.job_deps d WHERE d.child_queue = $1 AND d.child_id = $2::bigint
  LIMIT ${JOB_VIEW_LINKS + 1}) d
JOIN ${s}.jobs j ON j.queue = d.parent_queue AND j.id = d.parent_id
UNION ALL
SELECT 'child', j.queue, j.id::text, j.state
FROM (SELECT d.child_queue, d.child_id FROM ${s}.job_deps d WHERE d.parent_queue = $1 AND d.parent_id = $2::bigint
  ORDER BY d.child_queue, d.child_id LIMIT ${JOB_VIEW_LINKS + 1}) d
JOIN ${s}.jobs j ON j.queue = d.child_queue AND j.id = d.child_id
UNION ALL
(SELECT 'copy', c.queue, c.id::text, c.state FROM ${s}.jobs c
  WHERE c.source_name = $1 AND c.source_id = $2::bigint
  LIMIT ${JOB_VIEW_LINKS + 1})`;
