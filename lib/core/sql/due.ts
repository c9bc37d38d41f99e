/**
 * How many distinct priorities of waiting jobs nextDue looks at. Each costs two index probes; a queue whose
 * waiting jobs use more priorities than this has the rest found by its workers' polls, as before wake-ups.
 */
const DUE_PRIORITIES = 32;

/**
 * In how many milliseconds (from this statement, on the database's clock) queue $1 next has a job that may
 * become claimable without anyone announcing it: its earliest waiting job not due yet, and for a rate-limited
 * queue whose latest window is full, the window's end (null: neither). Also `read_at`, this statement's time
 * (microseconds since the epoch, as text), which the worker hands back as $2 at its next read (DueClock).
 *
 * It looks for jobs due after the previous read ($2; null: any), which came before the worker's claim, and reports
 * one already due as due now: a job that became due between claim and read is not missed. It walks the distinct
 * priorities of jobs_ready_idx (a loose index scan), two probes each: docs/design.md, "Due times: the loop's timer".
 */
export const nextDue = (s: string, t = `${s}.jobs`) => `
WITH RECURSIVE bound AS (
  SELECT coalesce('epoch'::timestamptz + $2::bigint * interval '1 microsecond', '-infinity') AS since
), levels AS (
  SELECT 1 AS n, (SELECT j.priority FROM ${t} j WHERE j.queue = $1 AND j.state < 'active' ORDER BY j.priority DESC LIMIT 1) AS priority
  UNION ALL
  SELECT l.n + 1, (SELECT j.priority FROM ${t} j WHERE j.queue = $1 AND j.state < 'active' AND j.priority < l.priority
    ORDER BY j.priority DESC LIMIT 1)
  FROM levels l WHERE l.priority IS NOT NULL AND l.n < ${DUE_PRIORITIES}
), deferred AS (
  SELECT min((SELECT j.start_after FROM ${t} j
    WHERE j.queue = $1 AND j.state < 'active' AND j.priority = l.priority
      AND j.start_after > (SELECT since FROM bound) AND j.start_after < 'infinity'
    ORDER BY j.start_after LIMIT 1)) AS due
  FROM levels l WHERE l.priority IS NOT NULL
), full_window AS (
  SELECT w.window_start + q.rate_limit_seconds * interval '1 second' AS opens
  FROM ${s}.queues q JOIN ${s}.rate_windows w ON w.queue = q.name
  WHERE q.name = $1 AND w.started >= q.rate_limit_count
    AND w.window_start + q.rate_limit_seconds * interval '1 second' > (SELECT since FROM bound)
)
SELECT ceil(extract(epoch FROM least(d.due, (SELECT f.opens FROM full_window f)) - statement_timestamp()) * 1000)::float8 AS due_in_ms,
  (extract(epoch FROM statement_timestamp()) * 1000000)::bigint::text AS read_at
FROM deferred d`;
