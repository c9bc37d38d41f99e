import { insertStatement } from './insert-jobs.js';

/**
 * The insert: one statement for one job or many. Each array holds one entry per job; a null entry
 * inherits the queue's setting, so the queue's row is read in the same statement that inserts, and an
 * unknown queue inserts nothing. The queue's policy is copied onto each job, where the partial unique
 * indexes enforce it: a job that would break the policy, a dedupe key or a throttle slot is skipped
 * (ON CONFLICT DO NOTHING), never an error. The NOTIFY comes from the statement trigger on `jobs`. A throttled
 * job occupies the time slot floor(now / seconds) + slot_offset; one sent into the next slot (offset 1) starts then.
 *
 * $1 queue, $2 data (one jsonb array, an element per job), $3-$22 one array per column in insertArgs' order (null
 * when no job sets it: unnest pads it), $23 the sender's trace context (tracing.ts).
 */
export const insertJobs = (s: string) => insertStatement(s, true, false);

/**
 * The same insert without ON CONFLICT, for a batch none of whose jobs can meet a unique index: a queue whose
 * policy constrains no queued job (standard, singleton, key_strict_fifo), and no dedupeKey or throttle slot: the
 * conflict check is a large part of a bulk insert's cost (docs/design.md, "Policies").
 */
export const insertJobsUnchecked = (s: string) => insertStatement(s, false, false);

/**
 * The inserts for a batch of two or more jobs with singleton keys: only there may a key_strict_fifo job wait
 * behind another job of its insert (FIFO_WAIT), which takes a window over the batch. Without keys, or for one
 * job, the other statements set fifo_wait to 0 with no window: statements are planned once (generic plans,
 * db.ts), so the planner can no longer fold that case away by looking at the values.
 */
export const insertJobsKeyed = (s: string) => insertStatement(s, true, true);
export const insertJobsKeyedUnchecked = (s: string) => insertStatement(s, false, true);

/** flow(): records which job waits for which. $1 parent queues, $2 parent ids, $3 child queues, $4 child ids */
export const insertJobDeps = (s: string) => `
INSERT INTO ${s}.job_deps (parent_queue, parent_id, child_queue, child_id)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[])`;

/**
 * What enqueue() answers of a job just sent: its state, and when it may start in ms since the epoch (null: it waits
 * for flow parents), as numbers and text whatever the executor (a Drizzle transaction reads timestamps as
 * strings). $1 queue, $2 id
 */
export const enqueuedJob = (s: string, t = `${s}.jobs`) => `
SELECT j.state::text,
  CASE WHEN j.start_after = 'infinity' THEN NULL ELSE (extract(epoch FROM j.start_after) * 1000)::float8 END AS start_ms
FROM ${t} j WHERE j.queue = $1 AND j.id = $2::bigint`;

/** The pending (created, retry, active) job that holds a dedupe key. $1 queue, $2 dedupe key */
export const findPendingByDedupeKey = (s: string, t = `${s}.jobs`) => `
SELECT j.id::text FROM ${t} j WHERE j.queue = $1 AND j.dedupe_key = $2 AND j.state <= 'active'`;

/**
 * How a queue's jobs are claimed, fixed once it is created: its policy, and whether claims must respect
 * a concurrency or rate limit. $1 queue
 */
export const getClaimProfile = (s: string) => `
SELECT policy, (concurrency_limit IS NOT NULL OR rate_limit_count IS NOT NULL) AS limited,
  CASE WHEN partition THEN quote_ident(${s}.queue_partition_name(name)) ELSE 'jobs_default' END AS "jobsTable"
FROM ${s}.queues WHERE name = $1`;

// ---- arguments: each statement's $n order, written once ----

/** The job options an insert takes as columns, by the name send options give them. */
export type InsertColumn =
  | 'priority'
  | 'startAt'
  | 'startIn'
  | 'singletonKey'
  | 'retryLimit'
  | 'retryDelay'
  | 'retryBackoff'
  | 'retryDelayMax'
  | 'expireInSeconds'
  | 'heartbeatSeconds'
  | 'deleteAfterSeconds'
  | 'retentionSeconds'
  | 'deadLetter'
  | 'dedupeKey'
  | 'throttle'
  | 'groupId'
  | 'groupTier'
  | 'blockedBy'
  | 'onParentFailure';

/**
 * The arguments of insertJobs and its variants ($1-$23). `data` is the one jsonb array of the jobs' data;
 * `column(name)` gives a column's entries, one per job, or null when no job sets it (unnest pads it);
 * `slotOffsets` always has an entry per job.
 */
export function insertArgs(
  queue: string,
  data: string,
  column: (name: InsertColumn) => readonly unknown[] | null,
  slotOffsets: readonly number[],
  traceContext: string | null,
): unknown[] {
  const c = column;
  return [
    queue,
    data,
    c('priority'),
    c('startAt'),
    c('startIn'),
    c('singletonKey'),
    c('retryLimit'),
    c('retryDelay'),
    c('retryBackoff'),
    c('retryDelayMax'),
    c('expireInSeconds'),
    c('heartbeatSeconds'),
    c('deleteAfterSeconds'),
    c('retentionSeconds'),
    c('deadLetter'),
    c('dedupeKey'),
    c('throttle'),
    slotOffsets,
    c('groupId'),
    c('groupTier'),
    c('blockedBy'),
    c('onParentFailure'),
    traceContext,
  ];
}
