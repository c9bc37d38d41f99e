/** SQL fragments shared by several statements; each reads the job row as `j`. */

/** How a finished job's keep_until is set: 0 seconds keeps it forever. */
export const KEEP_FINISHED = `CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END`;

/**
 * Seconds until the next attempt of row `j`: with backoff
 * min(retryDelayMax, retryDelay * (2^min(16,n)/2 + 2^min(16,n)/2 * random())) for the n-th retry,
 * else retryDelay. Shared by failures and expired leases.
 */
export const RETRY_DELAY = `CASE WHEN j.retry_backoff THEN least(
        coalesce(j.retry_delay_max, 2147483647)::float8,
        j.retry_delay * (power(2, least(16, j.retry_count + 1)) / 2
          + power(2, least(16, j.retry_count + 1)) / 2 * random()))
      ELSE j.retry_delay::float8 END`;

/** Appends one attempt's error (`e`) to a job's output: output.error is the latest, output.errors all of them. */
export const APPEND_ERROR = (e: string) => `jsonb_build_object(
    'error', ${e},
    'errors', coalesce(j.output -> 'errors', '[]'::jsonb) || jsonb_build_array(${e}))`;

