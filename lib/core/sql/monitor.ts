import { BIN_COUNT, BIN_EPSILON, BIN_RATIO, FIRST_EDGE_SECONDS } from '../stats/bins.js';

/** The bin (lib/core/stats/bins.ts, binOf) of a duration of `seconds` (a float8 expression). */
const BIN = (seconds: string) => `CASE WHEN ${seconds} < ${FIRST_EDGE_SECONDS} THEN 0
      ELSE least(${BIN_COUNT - 1}, 1 + floor(ln(${seconds} / ${FIRST_EDGE_SECONDS}) / ln(${BIN_RATIO.toPrecision(17)}) + ${BIN_EPSILON})::int) END`;

/** A histogram of CTE `b`'s counts of kind `kind` for the queue of row `c`, one entry per bin; null without a window. */
const HISTOGRAM = (kind: string) => `CASE WHEN c.since IS NULL THEN NULL ELSE (
      SELECT array_agg(coalesce(b.n, 0) ORDER BY g.k) FROM generate_series(0, ${BIN_COUNT - 1}) g(k)
      LEFT JOIN b ON b.name = c.name AND b.kind = '${kind}' AND b.bin = g.k) END`;

/**
 * One pass of the monitor over the queues named in $1 (null: all): counts each queue's jobs and caches the counts on
 * its row (counted_on = now). With $2 (persistQueueStats) it also records, on the row and as a snapshot in
 * queue_stats, the window since the previous pass: jobs created, completed and failed for good, and histograms of
 * their wait and run times. The window ends 10 seconds ago, so that what was stamped inside it has in all likelihood
 * committed; $2 false clears the deltas, $2 null (a recount) leaves them. How the window is bounded, and what it
 * misses: docs/design.md, "Maintenance". Returns each queue's counts.
 *
 * $1 queue names text[] or null, $2 persist boolean or null, $3 monitor interval in seconds, $4 (a recount) the fewest
 * seconds since a queue was last counted for it to be counted again (null: any)
 */
export const monitorQueues = (s: string) => `
WITH win AS MATERIALIZED (
  SELECT q.name, now() - interval '10 seconds' AS until, q.queued_count AS prev_queued, q.counted_on AS prev_counted_on,
    CASE WHEN $2::boolean AND q.delta_on >= now() - interval '10 seconds' - greatest(interval '2 hours', $3::float8 * 2 * interval '1 second')
      THEN q.delta_on END AS since
  FROM ${s}.queues q
  WHERE ($1::text[] IS NULL OR q.name = ANY($1::text[]))
    AND ($4::float8 IS NULL OR q.counted_on IS NULL OR q.counted_on <= now() - $4::float8 * interval '1 second')
), c AS MATERIALIZED (
  SELECT w.name, w.since, w.until, x.* FROM win w
  CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE j.state < 'active')::int AS queued,
      count(*) FILTER (WHERE j.state < 'active' AND j.blocked_by = 0 AND j.start_after > now())::int AS deferred,
      count(*) FILTER (WHERE j.state < 'active' AND j.blocked_by > 0)::int AS blocked,
      count(*) FILTER (WHERE j.state < 'active' AND j.blocked_by = 0 AND j.start_after <= now())::int AS ready,
      -- waited since it became due (a deferred job, a retry: at start_after), 0 when nothing waits
      coalesce(extract(epoch FROM now() - min(greatest(j.created_on, j.start_after))
        FILTER (WHERE j.state < 'active' AND j.blocked_by = 0 AND j.start_after <= now())), 0)::float8 AS ready_oldest,
      count(*) FILTER (WHERE j.state = 'active')::int AS active,
      count(*) FILTER (WHERE j.state = 'failed')::int AS failed,
      count(*)::int AS total,
      array_agg(DISTINCT j.singleton_key ORDER BY j.singleton_key)
        FILTER (WHERE j.state = 'active' AND j.policy IN ('singleton', 'stately') AND j.singleton_key IS NOT NULL) AS singletons,
      count(*) FILTER (WHERE j.created_on > w.since AND j.created_on <= w.until)::int AS created_delta,
      count(*) FILTER (WHERE j.state = 'completed' AND j.completed_on > w.since AND j.completed_on <= w.until)::int AS completed_delta,
      count(*) FILTER (WHERE j.state = 'failed' AND j.completed_on > w.since AND j.completed_on <= w.until)::int AS failed_delta
    FROM ${s}.jobs j WHERE j.queue = w.name
  ) x
), b AS MATERIALIZED (
  SELECT w.name, v.kind, v.bin, count(*)::int AS n
  FROM win w
  JOIN ${s}.jobs j ON j.queue = w.name
  CROSS JOIN LATERAL (VALUES
    ('wait', ${BIN('extract(epoch FROM j.started_on - greatest(j.created_on, j.start_after))::float8')}),
    ('run', ${BIN('extract(epoch FROM j.completed_on - j.started_on)::float8')})) v(kind, bin)
  -- an end that closed an attempt: a job failed while it waited for a retry (by hand, by retention) started last
  -- before its due time, and its wait and run would span the retry's delay
  WHERE w.since IS NOT NULL AND j.state IN ('completed', 'failed') AND j.started_on >= greatest(j.created_on, j.start_after)
    AND j.completed_on > w.since AND j.completed_on <= w.until
  GROUP BY 1, 2, 3
), counted AS (
  UPDATE ${s}.queues q SET
    queued_count = c.queued, deferred_count = c.deferred, blocked_count = c.blocked, ready_count = c.ready,
    active_count = c.active, failed_count = c.failed, total_count = c.total, ready_oldest_seconds = c.ready_oldest,
    singletons_active = c.singletons, counted_on = now(),
    created_delta = CASE WHEN $2 THEN c.created_delta WHEN $2 IS NULL THEN q.created_delta ELSE 0 END,
    completed_delta = CASE WHEN $2 THEN c.completed_delta WHEN $2 IS NULL THEN q.completed_delta ELSE 0 END,
    failed_delta = CASE WHEN $2 THEN c.failed_delta WHEN $2 IS NULL THEN q.failed_delta ELSE 0 END,
    delta_seconds = CASE WHEN $2 THEN extract(epoch FROM c.until - c.since)::float8 WHEN $2 IS NULL THEN q.delta_seconds END,
    delta_on = CASE WHEN $2 THEN c.until WHEN $2 IS NULL THEN q.delta_on END,
    wait_bins = CASE WHEN $2 THEN ${HISTOGRAM('wait')} WHEN $2 IS NULL THEN q.wait_bins END,
    run_bins = CASE WHEN $2 THEN ${HISTOGRAM('run')} WHEN $2 IS NULL THEN q.run_bins END
  FROM c
  WHERE q.name = c.name
  RETURNING q.*
), snapshot AS (
  INSERT INTO ${s}.queue_stats (queue, captured_on, queued_count, deferred_count, blocked_count, ready_count, active_count,
    failed_count, total_count, ready_oldest_seconds, created_delta, completed_delta, failed_delta, delta_seconds, delta_on,
    wait_bins, run_bins)
  SELECT k.name, k.counted_on, k.queued_count, k.deferred_count, k.blocked_count, k.ready_count, k.active_count,
    k.failed_count, k.total_count, k.ready_oldest_seconds, k.created_delta, k.completed_delta, k.failed_delta, k.delta_seconds,
    k.delta_on, k.wait_bins, k.run_bins
  FROM counted k WHERE $2 IS TRUE
  ON CONFLICT (queue, captured_on) DO NOTHING
)
-- the counts before this pass: a queue-size warning goes out once per crossing, whichever instance counts
SELECT k.name, k.queued_count, k.ready_count, k.warning_queue_size,
  (SELECT w.prev_queued FROM win w WHERE w.name = k.name AND w.prev_counted_on IS NOT NULL) AS prev_queued
FROM counted k ORDER BY k.name`;

/** The longest a window is counted again after it ended, in seconds: an hour, as pg-boss takes in late commits. */
const LATE_COMMIT_SECONDS = 3600;

/**
 * Late commits: counts again the windows of the snapshots earlier passes recorded (captured before this transaction)
 * whose window ended in the last hour, or in the queue's deleteAfterSeconds, failedDeleteAfterSeconds or
 * retentionSeconds if one is shorter (pg-boss bounds it by the first and the last; a deletion after the first two
 * would lower the count), never on a queue with removeOnComplete (its completed jobs are gone), and raises each delta
 * the count exceeds to it. A job stamped inside a window whose transaction committed after the pass that recorded it
 * (a transactional handler running longer than the 10 s the window leaves) so rises into the snapshot its stamp
 * belongs to, unless as many of the window's jobs were deleted or sent back since: a delta never falls, and is never
 * more than the window's jobs as the table holds them now. The histograms are left as recorded.
 *
 * What it reads: the snapshots through queue_stats' partitions of the last hour (captured_on is delta_on + 10 s); the
 * jobs finished since the oldest window began, through jobs_finished_on_idx (a job created in a window and finished
 * since is among them, unless its finish was stamped before the window began: a transaction older than the job that
 * cancelled or failed it); the queue's waiting jobs through jobs_ready_idx, whose start_after (at or after the job's
 * creation, unless it was sent with a start in the past) rules out in the index those due before the oldest window;
 * and its running jobs through jobs_lease_idx. A row it does not read can only leave a delta as it was. Each row finds
 * its windows by a binary search of their starts (CTE x). Every queue; returns how many snapshots rose.
 */
export const reconcileLateStats = (s: string) => `
WITH w AS MATERIALIZED (
  SELECT x.queue, x.captured_on, x.delta_on - x.delta_seconds * interval '1 second' AS since, x.delta_on AS until
  FROM ${s}.queues q JOIN ${s}.queue_stats x ON x.queue = q.name
  WHERE NOT q.remove_on_complete AND x.captured_on < now() AND x.delta_seconds IS NOT NULL
    AND x.captured_on > now() - interval '${LATE_COMMIT_SECONDS + 10} seconds'
    AND x.delta_on > now() - least(${LATE_COMMIT_SECONDS}, nullif(q.delete_after_seconds, 0), nullif(q.failed_delete_after_seconds, 0),
      q.retention_seconds) * interval '1 second'
), k AS MATERIALIZED (
  SELECT w.queue, array_agg(w.since ORDER BY w.since, w.captured_on) AS starts, array_agg(w.until ORDER BY w.since, w.captured_on) AS ends,
    array_agg(w.captured_on ORDER BY w.since, w.captured_on) AS captured, min(w.since) AS lo, max(w.until) AS hi
  FROM w GROUP BY w.queue
), j AS (
  SELECT j.queue, j.state, j.created_on, j.completed_on FROM ${s}.jobs j
  WHERE j.state > 'active' AND j.completed_on > (SELECT min(k.lo) FROM k) AND j.queue IN (SELECT k.queue FROM k)
  UNION ALL
  SELECT j.queue, j.state, j.created_on, j.completed_on FROM k JOIN ${s}.jobs j ON j.queue = k.queue
  WHERE j.state < 'active' AND j.start_after > k.lo AND j.created_on > k.lo
  UNION ALL
  SELECT j.queue, j.state, j.created_on, j.completed_on FROM k JOIN ${s}.jobs j ON j.queue = k.queue
  WHERE j.state = 'active' AND j.created_on > k.lo
), x AS (
  -- each row's windows: a binary search of the windows' starts (width_bucket: the last start at or before the time;
  -- a time equal to a start is the previous window's end), then both bounds checked, so that a time between two
  -- windows, or before the first, has none. OFFSET 0 keeps each search done once per row (a flattened subquery would
  -- repeat it in every expression that reads it).
  SELECT j.queue, j.state,
    CASE WHEN a.ci >= 1 AND j.created_on > k.starts[a.ci] AND j.created_on <= k.ends[a.ci] THEN a.ci END AS ci,
    CASE WHEN a.di >= 1 AND j.completed_on > k.starts[a.di] AND j.completed_on <= k.ends[a.di] THEN a.di END AS di
  FROM j JOIN k ON k.queue = j.queue
  CROSS JOIN LATERAL (SELECT width_bucket(j.created_on, k.starts) AS cb, width_bucket(j.completed_on, k.starts) AS db OFFSET 0) b
  CROSS JOIN LATERAL (SELECT b.cb - (j.created_on = k.starts[b.cb])::int AS ci, b.db - (j.completed_on = k.starts[b.db])::int AS di
    OFFSET 0) a
), g AS (
  SELECT x.queue, x.ci, x.di, x.state, count(*)::int AS n FROM x
  WHERE x.ci IS NOT NULL OR (x.di IS NOT NULL AND x.state IN ('completed', 'failed'))
  GROUP BY 1, 2, 3, 4
), n AS (
  SELECT u.queue, k.captured[u.i] AS captured_on, sum(u.c)::int AS created, sum(u.d)::int AS completed, sum(u.f)::int AS failed
  FROM (
    SELECT g.queue, g.ci AS i, g.n AS c, 0 AS d, 0 AS f FROM g WHERE g.ci IS NOT NULL
    UNION ALL
    SELECT g.queue, g.di, 0, CASE WHEN g.state = 'completed' THEN g.n ELSE 0 END, CASE WHEN g.state = 'failed' THEN g.n ELSE 0 END
    FROM g WHERE g.di IS NOT NULL AND g.state IN ('completed', 'failed')
  ) u JOIN k ON k.queue = u.queue
  GROUP BY 1, 2
), raised AS (
  UPDATE ${s}.queue_stats x SET created_delta = greatest(x.created_delta, n.created),
    completed_delta = greatest(x.completed_delta, n.completed), failed_delta = greatest(x.failed_delta, n.failed)
  FROM n
  WHERE x.queue = n.queue AND x.captured_on = n.captured_on AND x.captured_on > now() - interval '${LATE_COMMIT_SECONDS + 10} seconds'
    AND (n.created > x.created_delta OR n.completed > x.completed_delta OR n.failed > x.failed_delta)
  RETURNING 1
)
SELECT count(*)::int AS raised FROM raised`;

/**
 * Keeps queue_stats' day partitions (migration 17): makes those of today and the next two UTC days that do not exist,
 * and drops those that ended more than $1 days ago. Returns how many it made and dropped. $1 queueStatRetentionDays
 */
export const keepStatsPartitions = (s: string) => `
WITH made AS (
  SELECT count(*) FILTER (WHERE ${s}.create_stats_partition((now() AT TIME ZONE 'UTC')::date + d))::int AS n
  FROM generate_series(0, 2) d
)
SELECT (SELECT n FROM made) AS made, ${s}.drop_stats_partitions(now() - $1::float8 * interval '1 day') AS dropped`;

/** Deletes the snapshots older than $1 days from queue_stats' DEFAULT partition (keepStatsPartitions), by its index. */
export const deleteOldDefaultStats = (s: string) =>
  `DELETE FROM ${s}.queue_stats_default WHERE captured_on < now() - $1::float8 * interval '1 day'`;

/** Takes the monitor's cluster-wide lock for this transaction, if it is free. $1 schema name */
export const tryMonitorLock = (_s: string) => `SELECT pg_try_advisory_xact_lock(1885824376, hashtext($1)) AS locked`;

/** Takes the monitor's lock for this transaction, waiting for a pass under way to end (a forced pass). $1 schema name */
export const waitMonitorLock = (_s: string) => `SELECT true AS locked FROM pg_advisory_xact_lock(1885824376, hashtext($1))`;
