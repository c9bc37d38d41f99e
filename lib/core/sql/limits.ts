/**
 * Claims of a queue with a concurrency or rate limit run in a transaction that first takes this lock,
 * then reads the room left in a new statement (so it sees every claim committed before the lock was
 * granted), claims at most that many, and records the starts. Claimers of the queue never all see room
 * at once. $1 queue
 */
export const lockQueueClaims = (_s: string) => `SELECT pg_advisory_xact_lock(1885824375, hashtext($2 || '.' || $1))`;

/**
 * How many more jobs of the queue may start now: the concurrency limit minus its active jobs, and the
 * rate limit minus the jobs started in the current window (windows are aligned to multiples of
 * rate_limit_seconds since the epoch). $1 queue
 */
export const claimRoom = (s: string, t = `${s}.jobs`) => `
SELECT least(
  CASE WHEN q.concurrency_limit IS NULL THEN 2147483647
    ELSE greatest(0, q.concurrency_limit - (SELECT count(*) FROM ${t} a WHERE a.queue = q.name AND a.state = 'active'))::int END,
  CASE WHEN q.rate_limit_count IS NULL THEN 2147483647
    ELSE greatest(0, q.rate_limit_count - coalesce((
      SELECT w.started FROM ${s}.rate_windows w
      WHERE w.queue = q.name
        AND w.window_start = to_timestamp(floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) * q.rate_limit_seconds)), 0)) END
)::int AS room
FROM ${s}.queues q WHERE q.name = $1`;

/**
 * Adds $2 starts to the queue's current rate window (a new window starts from zero). The window only moves
 * forward: a claimer whose clock reading is older never resets a newer window. $1 queue, $2 started
 */
export const recordStarts = (s: string) => `
INSERT INTO ${s}.rate_windows AS w (queue, window_start, started)
SELECT q.name, to_timestamp(floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) * q.rate_limit_seconds), $2
FROM ${s}.queues q WHERE q.name = $1 AND q.rate_limit_count IS NOT NULL
ON CONFLICT (queue) DO UPDATE SET
  started = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.started + EXCLUDED.started ELSE EXCLUDED.started END,
  window_start = EXCLUDED.window_start
WHERE EXCLUDED.window_start >= w.window_start`;
