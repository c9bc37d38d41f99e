import { LIVE_WORKER } from './fragments.js';

/**
 * What the dashboard samples once a second while someone watches (lib/core/dashboard/sampler.ts). Each statement
 * reads an index and a bounded number of rows, whatever the table holds: counts stop at a cap, lists at a limit,
 * time windows read jobs_finished_on_idx (migration 12). They run in a READ ONLY transaction with a short
 * statement_timeout, so the dashboard can neither write nor hold the database up. Times come back as milliseconds
 * since the epoch on the database's clock.
 */

/**
 * Per queue: its waiting jobs (created or retry, deferred and blocked ones too) counted up to $1 + 1 (more than $1:
 * "over the cap"; one index walk, which also counts the ready ones among them), with the monitor's last count for a
 * queue past the cap; its running jobs; when its oldest ready job became due (a loose index scan over its waiting
 * jobs' priorities, two probes each, as nextDue does); and whether it is paused. Also the statement's time. $1 cap
 */
export const dashboardQueues = (s: string) => `
SELECT q.name, q.policy, q.paused, q.queued_count AS counted_queued,
  w.waiting, w.ready,
  (SELECT count(*)::int FROM ${s}.jobs j WHERE j.queue = q.name AND j.state = 'active') AS running,
  (extract(epoch FROM o.first_due) * 1000)::float8 AS first_due_ms,
  (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms
FROM ${s}.queues q
CROSS JOIN LATERAL (
  SELECT count(*)::int AS waiting, count(*) FILTER (WHERE c.start_after <= now())::int AS ready
  FROM (SELECT j.start_after FROM ${s}.jobs j WHERE j.queue = q.name AND j.state < 'active' LIMIT $1 + 1) c
) w
CROSS JOIN LATERAL (
  WITH RECURSIVE levels AS (
    SELECT 1 AS n, (SELECT j.priority FROM ${s}.jobs j WHERE j.queue = q.name AND j.state < 'active' ORDER BY j.priority DESC LIMIT 1) AS priority
    UNION ALL
    SELECT l.n + 1, (SELECT j.priority FROM ${s}.jobs j WHERE j.queue = q.name AND j.state < 'active' AND j.priority < l.priority
      ORDER BY j.priority DESC LIMIT 1)
    FROM levels l WHERE l.priority IS NOT NULL AND l.n < 32
  )
  SELECT min((SELECT j.start_after FROM ${s}.jobs j WHERE j.queue = q.name AND j.state < 'active' AND j.priority = l.priority
    ORDER BY j.start_after LIMIT 1)) AS first_due
  FROM levels l WHERE l.priority IS NOT NULL
) o
ORDER BY q.name`;

/** The statement's time, when there is no queue to read it with. */
export const dashboardNow = (_s: string) => `SELECT (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms`;

/** The running jobs (each holds a lease), the longest running first, at most $1. */
export const dashboardRunning = (s: string) => `
SELECT j.id::text, j.queue, j.worker_id, j.retry_count,
  (extract(epoch FROM j.started_on) * 1000)::float8 AS started_ms,
  (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_ms,
  (extract(epoch FROM j.heartbeat_until) * 1000)::float8 AS heartbeat_ms
FROM ${s}.jobs j
WHERE j.state = 'active'
ORDER BY j.started_on, j.id
LIMIT $1`;

/** The live feed's starts: jobs running that started after $1 (ms since the epoch), at most $2, newest first. */
export const dashboardStarted = (s: string) => `
SELECT j.id::text, j.queue, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_ms
FROM ${s}.jobs j
WHERE j.state = 'active' AND j.started_on > to_timestamp($1::float8 / 1000)
ORDER BY j.started_on DESC
LIMIT $2`;

/** How many leases each worker id holds, for the workers' table. */
export const dashboardLeases = (s: string) => `
SELECT j.worker_id, count(*)::int AS leases FROM ${s}.jobs j WHERE j.state = 'active' GROUP BY j.worker_id`;

/**
 * Problems: the jobs that failed for good most recently, at most $1. Each queue's newest failures come through its
 * partial index (by id, then by when they failed), and only the rows shown are read whole.
 */
export const dashboardProblems = (s: string) => `
WITH c AS (
  SELECT p.* FROM ${s}.queues q
  CROSS JOIN LATERAL (
    SELECT j.queue, j.id, j.completed_on FROM ${s}.jobs j WHERE j.queue = q.name AND j.state = 'failed' ORDER BY j.id DESC LIMIT $1
  ) p
  ORDER BY p.completed_on DESC
  LIMIT $1
)
SELECT j.id::text, j.queue, j.retry_count, j.last_error, (extract(epoch FROM c.completed_on) * 1000)::float8 AS on_ms
FROM c JOIN ${s}.jobs j ON j.queue = c.queue AND j.id = c.id AND j.state = 'failed'
ORDER BY c.completed_on DESC`;

/**
 * Jobs finished from $1 (ms since the epoch, inclusive) to the start of the statement's second, counted per second
 * (completed; failed for good), and the latest failed attempt of those that were retried before they finished (its
 * job id and time: the sampler's count of retries). Reads at most $2 of the newest such jobs: `oldest_ms` is the
 * oldest one read, and seconds before it were not all read when `capped`.
 */
export const dashboardFinished = (s: string) => `
WITH f AS MATERIALIZED (
  SELECT j.id, j.state, j.completed_on, j.last_error FROM ${s}.jobs j
  WHERE j.state > 'active' AND j.completed_on >= to_timestamp($1::float8 / 1000)
    AND j.completed_on < date_trunc('second', statement_timestamp())
  ORDER BY j.completed_on DESC
  LIMIT $2
)
SELECT floor(extract(epoch FROM f.completed_on))::bigint * 1000 AS second_ms,
  count(*) FILTER (WHERE f.state = 'completed')::int AS completed,
  count(*) FILTER (WHERE f.state = 'failed')::int AS failed,
  coalesce(jsonb_agg(jsonb_build_array(f.id::text, f.last_error->>'on')) FILTER (WHERE f.state <> 'failed' AND f.last_error IS NOT NULL),
    '[]') AS retried,
  (SELECT count(*) FROM f) >= $2 AS capped,
  (SELECT (extract(epoch FROM min(x.completed_on)) * 1000)::float8 FROM f x) AS oldest_ms,
  (extract(epoch FROM date_trunc('second', statement_timestamp())) * 1000)::float8 AS until_ms
FROM f
GROUP BY 1
ORDER BY 1`;

/**
 * Jobs whose failed attempt was retried and has not finished: waiting for the retry, or running it, each kind read
 * through its partial index, at most $1 of each (past that, the count of retries is a lower bound). A retry due more
 * than 60 seconds ago failed before that (it is due after its failure); of the others, those due soonest come first,
 * so that a backlog of long backoffs does not fill the read. Their job id and
 * the failure's time as stored: the sampler parses it and keeps the last 60 seconds' (parsed here, it cost about
 * 1.5 µs a row of `node bench/dashboard-sample.mjs`'s retry storm).
 */
export const dashboardRetrying = (s: string) => `
(SELECT j.id::text, j.last_error->>'on' AS on FROM ${s}.jobs j
 WHERE j.state = 'retry' AND j.start_after > statement_timestamp() - interval '60 seconds' AND j.last_error IS NOT NULL
 ORDER BY j.start_after LIMIT $1)
UNION ALL
(SELECT j.id::text, j.last_error->>'on' AS on FROM ${s}.jobs j WHERE j.state = 'active' AND j.last_error IS NOT NULL LIMIT $1)`;

/**
 * The latest finishes (at most $1, in the last 60 seconds): how long each waited from due to claimed, and how long
 * it ran, as percentiles p50 and p95 in seconds, and how many were read. Jobs that finished without an attempt
 * (expired waiting, cancelled) are left out, among a walk bounded to 4 × $1 finishes.
 */
export const dashboardTimings = (s: string) => `
WITH latest AS (
  SELECT j.created_on, j.start_after, j.started_on, j.completed_on
  FROM ${s}.jobs j
  WHERE j.state > 'active' AND j.completed_on > statement_timestamp() - interval '60 seconds'
  ORDER BY j.completed_on DESC
  LIMIT 4 * $1
), f AS (
  SELECT extract(epoch FROM l.started_on - greatest(l.created_on, l.start_after))::float8 AS wait,
    extract(epoch FROM l.completed_on - l.started_on)::float8 AS run
  FROM latest l
  WHERE l.started_on IS NOT NULL AND l.started_on >= greatest(l.created_on, l.start_after)
  ORDER BY l.completed_on DESC
  LIMIT $1
)
SELECT count(*)::int AS n,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY f.wait) AS wait_p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY f.wait) AS wait_p95,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY f.run) AS run_p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY f.run) AS run_p95
FROM f`;

/**
 * The live feed's new jobs: those with an id above $1 (0: the latest), at most $2, newest first, each queue read
 * through its primary key.
 */
export const dashboardSent = (s: string) => `
SELECT n.* FROM ${s}.queues q
CROSS JOIN LATERAL (
  SELECT j.id::text, j.id AS seq, j.queue, (extract(epoch FROM j.created_on) * 1000)::float8 AS on_ms
  FROM ${s}.jobs j WHERE j.queue = q.name AND j.id > $1::bigint ORDER BY j.id DESC LIMIT $2
) n
ORDER BY n.seq DESC
LIMIT $2`;

/** The live feed's finishes: jobs finished after $1 (ms since the epoch), at most $2, newest first. */
export const dashboardFinishes = (s: string) => `
SELECT j.id::text, j.queue, j.state::text, (extract(epoch FROM j.completed_on) * 1000)::float8 AS on_ms,
  j.last_error->'error'->>'message' AS message
FROM ${s}.jobs j
WHERE j.state > 'active' AND j.completed_on > to_timestamp($1::float8 / 1000)
ORDER BY j.completed_on DESC
LIMIT $2`;

/** The live instances and their loops (the cluster registry), with the age of each one's heartbeat. */
export const dashboardWorkers = (s: string) => `
SELECT w.id, w.host, w.pid, w.version, w.loops, w.stopped, w.started_on,
  extract(epoch FROM statement_timestamp() - w.heartbeat_on)::float8 AS heartbeat_age
FROM ${s}.workers w
WHERE ${LIVE_WORKER('w')}
ORDER BY w.started_on, w.id`;

/** The cron schedules, at most $1, the next to run first. */
export const dashboardSchedules = (s: string) => `
SELECT c.name, c.key, c.cron, c.tz, (extract(epoch FROM c.next_run_on) * 1000)::float8 AS next_ms,
  (extract(epoch FROM c.last_run_on) * 1000)::float8 AS last_ms, c.last_job_id::text
FROM ${s}.schedules c
ORDER BY c.next_run_on, c.name, c.key
LIMIT $1`;
