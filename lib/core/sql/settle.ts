import {
  ACTIVE,
  DEAD_LETTER,
  FAILED_RETURNING,
  KEEP_FINISHED,
  NAMED,
  NO_CHILDREN,
  ORPHAN_DESCENDANTS,
  RELEASE_CHILDREN,
  RETRY_DELAY,
  RETRY_OR_FAIL,
  RETRY_SLOT_FREE,
  STAMP,
  STAMPED,
  WAKE_HOLDING,
  WAKE_PAYLOAD,
} from './fragments.js';

/**
 * Settling an attempt. Every statement takes arrays (unnest), so a worker can settle many jobs in one
 * round trip, and every statement is fenced: it changes a row only while it is still active and still the
 * attempt that was claimed. A worker fences on (claim_count, worker id); a caller by hand may fence on
 * retry_count. A stale worker gets 0 rows.
 */

/**
 * The rows a completion may change: fenced to the attempt (u: ATTEMPTS; see completeJobs for the parameters), in
 * the states `states` (ACTIVE, or QUEUED_OR_ACTIVE for complete() with includeQueued).
 */
const COMPLETABLE = (states: string) => `j.queue = u.queue AND j.id = u.id AND ${states}
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND ${STAMPED}`;

/** The attempts a completion names, with the stamps in parameter `stamps`. */
const ATTEMPTS = (stamps: string) =>
  NAMED('id, retry_count, output, claim_count, stamp', `$2::bigint[], $3::int[], $4::jsonb[], $6::int[], ${stamps}::bigint[]`);

/** The fenced completion, as the CTE `done`, for the rows that also meet `keep` (left open for what follows). */
const COMPLETE = (t: string, stamps: string, keep = 'true', states = ACTIVE) => `
WITH done AS (
UPDATE ${t} j SET
  state = 'completed',
  completed_on = now(),
  output = u.output,
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = ${KEEP_FINISHED}
FROM ${ATTEMPTS(stamps)}
WHERE ${COMPLETABLE(states)} AND ${keep}
RETURNING j.queue, j.id, j.claim_count, ${STAMP('j')}::text AS stamp`;

/**
 * removeOnComplete: the queue deletes its jobs when they complete, but for a job that holds a throttle slot
 * (kept so the slot stays taken) and a flow parent (kept: its children's release reads it).
 */
const REMOVABLE = (s: string) => `coalesce((SELECT q.remove_on_complete FROM ${s}.queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND ${NO_CHILDREN(s)}`;

/**
 * $1 queue, $2 ids bigint[], $3 retry counts int[] (null entry: any), $4 outputs jsonb[],
 * $5 worker id (null: any holder), $6 claim counts int[] (null entry: any), $7 channel,
 * $8 stamps bigint[] (null entry: any; see STAMPED), $9 the channel when the queue holds jobs back (WAKE_HOLDING),
 * else null
 *
 * A queue with removeOnComplete deletes the jobs it may (REMOVABLE) and completes the others. Children (flow)
 * whose last parent this completes become runnable, and their queues are notified. The worker's own
 * completions, for jobs it knows to be no flow parent, go through completeLeafJobs or removeLeafJobs.
 */
export const completeJobs = (s: string, t = `${s}.jobs`) => COMPLETE_ALL(s, t, ACTIVE);

const COMPLETE_ALL = (s: string, t: string, states: string) => `${COMPLETE(t, '$8', `NOT (${REMOVABLE(s)})`, states)}
), ${REMOVED(s, t, '$8', states)}, ${RELEASE_CHILDREN(s, 'done', '$1')}
-- the NOTIFY for released children, once per statement (an uncorrelated subquery: an InitPlan)
SELECT done.id::text, done.claim_count, done.stamp,
  (SELECT count(pg_notify($7, r.queue)) FROM (SELECT DISTINCT queue FROM released WHERE blocked_by = 0 AND state = 'created') r) AS woke,
  ${WAKE_HOLDING('$9')}
FROM done
UNION ALL
SELECT removed.id::text, removed.claim_count, removed.stamp, NULL, ${WAKE_HOLDING('$9')} FROM removed`;

/** completeJobs' removals: the rows REMOVABLE lets go, deleted, as the CTE `removed`. */
const REMOVED = (s: string, t: string, stamps: string, states = ACTIVE) => `removed AS (
  DELETE FROM ${t} j USING ${ATTEMPTS(stamps)}
  WHERE ${COMPLETABLE(states)} AND ${REMOVABLE(s)}
  RETURNING j.id, j.claim_count, ${STAMP('j')}::text AS stamp
)`;

/**
 * completeJobs without the release of children, whose update names `jobs` and so is planned with every
 * partition (docs/design.md, "Partitions: statements name the queue's table"): for
 * complete() by hand, which runs completeJobs for what this one leaves (flow parents, NO_CHILDREN).
 * Parameters $1-$6 of completeJobs, $7 the stamps, and $8 its $9 (WAKE_HOLDING).
 */
export const completeNonParentJobs = (s: string, t = `${s}.jobs`) => COMPLETE_NON_PARENT(s, t, ACTIVE);

const COMPLETE_NON_PARENT = (
  s: string,
  t: string,
  states: string,
) => `${COMPLETE(t, '$7', `NOT (${REMOVABLE(s)}) AND ${NO_CHILDREN(s)}`, states)}
), ${REMOVED(s, t, '$7', states)}
SELECT done.id::text, done.claim_count, done.stamp, ${WAKE_HOLDING('$8')} FROM done
UNION ALL
SELECT removed.id::text, removed.claim_count, removed.stamp, ${WAKE_HOLDING('$8')} FROM removed`;

/**
 * "Row `j` has not finished": queued (created, retry) or active, compared as text for the reason ACTIVE gives.
 * complete() with includeQueued (pg-boss's option) also completes jobs that never started.
 */
const QUEUED_OR_ACTIVE = `j.state::text IN ('created', 'retry', 'active')`;

/**
 * completeJobs for complete() with includeQueued: also completes queued jobs (QUEUED_OR_ACTIVE), with the same
 * parameters, fence and release of children. Statements of their own, so that completeJobs keeps its text and its
 * plans: the state test is a filter after the key probe, and a parameter in it would change the plan cached for
 * every completion a worker sends.
 */
export const completeQueuedJobs = (s: string, t = `${s}.jobs`) => COMPLETE_ALL(s, t, QUEUED_OR_ACTIVE);

/** completeNonParentJobs with includeQueued (see completeQueuedJobs); its parameters. */
export const completeQueuedNonParentJobs = (s: string, t = `${s}.jobs`) => COMPLETE_NON_PARENT(s, t, QUEUED_OR_ACTIVE);

/**
 * completeJobs for attempts of jobs that no other job waits for and that their claim found kept on completion
 * (ClaimedRow.parent, ClaimedRow.remove): the same fenced update without the flow's release of children, whose
 * planning costs every completion (docs/design.md, "Settling: one statement per batch, three kinds of completion").
 * Parameters $1-$6 of completeJobs, $7 the stamps, and $8 its $9 (WAKE_HOLDING).
 */
export const completeLeafJobs = (s: string, t = `${s}.jobs`) => `${COMPLETE(t, '$7', NO_CHILDREN(s))}
)
SELECT done.id::text, done.claim_count, done.stamp, ${WAKE_HOLDING('$8')} FROM done`;

/**
 * The worker's completion for a queue with removeOnComplete: the attempts' jobs are deleted (fenced as a
 * completion is), for jobs that their claim found removable and that no other job waits for. Parameters
 * $1-$6 of completeJobs ($4, the outputs, are not kept), $7 the stamps, and $8 completeJobs' $9 (WAKE_HOLDING).
 */
export const removeLeafJobs = (s: string, t = `${s}.jobs`) => `
WITH removed AS (
DELETE FROM ${t} j USING ${ATTEMPTS('$7')}
WHERE ${COMPLETABLE(ACTIVE)} AND ${NO_CHILDREN(s)}
RETURNING j.id, j.claim_count, ${STAMP('j')}::text AS stamp
)
SELECT removed.id::text, removed.claim_count, removed.stamp, ${WAKE_HOLDING('$8')} FROM removed`;

/**
 * Fails attempts: back to `retry` (after an error's retryAfterSeconds, else RETRY_DELAY) while retries remain and
 * the error allows it, else `failed`, copied into its dead-letter queue in the same statement. Each attempt's error
 * is appended to output.errors; output.error is the latest. A retry wakes the queue's idle workers: one NOTIFY for
 * the retries that may run now, one naming when the earliest of the others becomes due.
 *
 * $1 queue, $2 ids bigint[], $3 retry counts int[] (null entry: any), $4 errors jsonb[], $5 permanent boolean[],
 * $6 retry-after seconds int[], $7 worker id (null: any holder), $8 claim counts int[] (null entry: any),
 * $9 channel, $10 stamps bigint[] (null entry: any; see STAMPED), $11 the channel when the queue holds jobs back
 * (WAKE_HOLDING), else null: a job failed for good may have released another
 */
export const failJobs = (s: string, t = `${s}.jobs`) => FAIL(s, t, true);

/**
 * failJobs without the failure of blocked descendants, whose update names `jobs` and so is planned with every
 * partition: it fails only jobs that no job waits for (NO_CHILDREN), and its callers (a worker, for jobs its
 * claim found to be no flow parent; fail() by hand) run failJobs for what it leaves. The same parameters.
 */
export const failLeafJobs = (s: string, t = `${s}.jobs`) => FAIL(s, t, false);

const FAIL = (s: string, t: string, orphans: boolean) => `
WITH${orphans ? ' RECURSIVE' : ''} f AS (
  SELECT j.queue, j.id, u.error,
    (j.retry_count < j.retry_limit AND NOT coalesce(u.permanent, false) AND ${RETRY_SLOT_FREE(t)}) AS retrying,
    CASE WHEN u.retry_after IS NOT NULL THEN u.retry_after::float8 ELSE ${RETRY_DELAY} END AS delay
  FROM ${t} j
  JOIN ${NAMED('id, retry_count, error, permanent, retry_after, claim_count, stamp', '$2::bigint[], $3::int[], $4::jsonb[], $5::boolean[], $6::int[], $8::int[], $10::bigint[]')}
    ON j.queue = u.queue AND j.id = u.id
  WHERE j.state < 'completed'${orphans ? '' : ` AND ${NO_CHILDREN(s)}`}
    AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
    AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
    AND ($7::text IS NULL OR (j.worker_id = $7::text AND ${ACTIVE})) AND ${STAMPED}
  FOR UPDATE OF j
)
, failed AS (
UPDATE ${t} j SET
  ${RETRY_OR_FAIL(s, 'f')}
FROM f
WHERE j.queue = f.queue AND j.id = f.id
RETURNING ${FAILED_RETURNING}
), ${DEAD_LETTER(s, 'failed')}${orphans ? `, ${ORPHAN_DESCENDANTS(s, 'failed')}` : ''}
-- a CTE is run once: per queue, one NOTIFY for the retries that may run now, one naming the delay of the earliest
-- that waits (a NOTIFY for both would hide the second's time)
, woke AS (
  SELECT pg_notify($9, ${WAKE_PAYLOAD('r.queue', 'min(r.start_after)')})::text AS notified
  FROM failed r WHERE r.state = 'retry' GROUP BY r.queue, r.start_after > statement_timestamp()
)
-- a CTE that only reads runs only when it is read: woke is read here, so its NOTIFYs go out
SELECT failed.id::text, failed.claim_count, failed.stamp, failed.state::text, (SELECT min(w.notified) FROM woke w) AS notified,
  -- for the worker's log: when a retry runs (seconds from now, on the database's clock), where a failure went
  CASE WHEN failed.state = 'retry' THEN greatest(0, ceil(extract(epoch FROM failed.start_after - statement_timestamp())))::int END AS retry_in,
  failed.dead_letter,
  ${WAKE_HOLDING('$11')}
FROM failed`;

// ---- arguments: each statement's $n order, written once ----

/**
 * The jobs a settle statement names, an entry per job, and the fence of each: `retryCounts`, `claimCounts` and
 * `stamps` null (any) or with null entries (any), `workerId` null (any holder). An array goes as a JS array or
 * as a PostgreSQL array literal the caller built (ids, claim counts and stamps are digits).
 */
export interface SettleTarget {
  queue: string;
  ids: string | readonly string[];
  retryCounts: readonly (number | null)[] | null;
  workerId: string | null;
  claimCounts: string | readonly (number | null)[] | null;
  stamps: string | readonly (string | null)[] | null;
}

/**
 * The arguments of completeJobs ($1-$9); `outputs` null when no job has one (unnest pads it). `wake`: the channel
 * when the queue holds jobs back, so that the statement wakes its workers (WAKE_HOLDING), else null.
 */
export function completeArgs(t: SettleTarget, outputs: readonly (string | null)[] | null, channel: string, wake: string | null): unknown[] {
  return [t.queue, t.ids, t.retryCounts, outputs, t.workerId, t.claimCounts, channel, t.stamps, wake];
}

/**
 * The arguments of completeNonParentJobs, completeLeafJobs and removeLeafJobs ($1-$8): completeJobs' without the
 * channel of released children.
 */
export function completeLeafArgs(t: SettleTarget, outputs: readonly (string | null)[] | null, wake: string | null): unknown[] {
  return [t.queue, t.ids, t.retryCounts, outputs, t.workerId, t.claimCounts, t.stamps, wake];
}

/** Per job: the error to record (JSON text), whether it fails for good, and a retry delay that overrides the policy. */
export interface Failures {
  errors: readonly string[];
  permanent: readonly boolean[];
  retryAfterSeconds: readonly (number | null)[];
}

/** The arguments of failJobs and failLeafJobs ($1-$11); `wake` as completeArgs'. */
export function failArgs(t: SettleTarget, f: Failures, channel: string, wake: string | null): unknown[] {
  return [t.queue, t.ids, t.retryCounts, f.errors, f.permanent, f.retryAfterSeconds, t.workerId, t.claimCounts, channel, t.stamps, wake];
}

/**
 * Wakes the workers of queue $2 in every process (NOTIFY on channel $1): sent after a change by hand on a
 * queue that holds jobs back (cancel, delete; JobControl), since it may have released the next job. Its own
 * statement, after the commit: were it lost, the next job waits for a poll, and is never lost itself.
 */
export const wakeQueue = (_s: string) => `SELECT pg_notify($1, $2)`;
