/**
 * A queue's monitor snapshots (queue_stats), most recent first, captured within [$2, $3] (null: unbounded), at most
 * $4. Read through the primary key (queue, captured_on).
 */
export const readQueueStats = (s: string) => `
SELECT x.queue AS name, x.captured_on, x.queued_count, x.deferred_count, x.blocked_count, x.ready_count, x.active_count,
  x.failed_count, x.total_count, x.ready_oldest_seconds, x.created_delta, x.completed_delta, x.failed_delta, x.delta_seconds,
  x.delta_on, x.wait_bins, x.run_bins
FROM ${s}.queue_stats x
WHERE x.queue = $1 AND ($2::timestamptz IS NULL OR x.captured_on >= $2) AND ($3::timestamptz IS NULL OR x.captured_on <= $3)
ORDER BY x.captured_on DESC
LIMIT $4`;

/**
 * How many seconds ago queue $1's newest snapshot was captured (null: none), by the primary key: getQueueStats'
 * `force` with persistQueueStats runs no pass within a minute of one (a count without a snapshot, by getQueue's
 * force or by an instance that keeps none, does not count).
 */
export const snapshotSecondsAgo = (s: string) =>
  `SELECT extract(epoch FROM now() - max(x.captured_on))::float8 AS seconds FROM ${s}.queue_stats x WHERE x.queue = $1`;

/**
 * Jobs failed for good per queue in the windows of the snapshots that ended in the last $1 minutes (the health
 * check's maxFailedLastMinutes). $2 queue names text[] or null (all)
 */
export const failedSince = (s: string) => `
SELECT x.queue, sum(x.failed_delta)::int AS failed FROM ${s}.queue_stats x
WHERE x.delta_on > now() - $1::float8 * interval '1 minute' AND x.delta_seconds IS NOT NULL
  AND ($2::text[] IS NULL OR x.queue = ANY($2::text[]))
GROUP BY x.queue`;
