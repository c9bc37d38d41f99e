/**
 * The insert: one statement for one job or many. Each array holds one entry per job; a null entry
 * inherits the queue's setting, so the queue's row is read in the same statement that inserts, and an
 * unknown queue inserts nothing. The queue's policy is copied onto each job, where the partial unique
 * indexes enforce it: a job that would break the policy, a dedupe key or a throttle slot is skipped
 * (ON CONFLICT DO NOTHING), never an error. The NOTIFY comes from the statement trigger on `jobs`.
 *
 * A throttled job occupies the time slot floor(now / seconds) + slot_offset; a debounced job sent into the
 * next slot (offset 1) starts when that slot begins.
 *
 * $1 queue, $2 data: one jsonb array, an element per job (JSON null: no data), $3 priority int[], $4 start_at timestamptz[], $5 start_in int[],
 * $6 singleton_key text[], $7 retry_limit int[], $8 retry_delay int[], $9 retry_backoff bool[],
 * $10 retry_delay_max int[], $11 expire_seconds int[], $12 heartbeat_seconds int[],
 * $13 delete_after_seconds int[], $14 retention_seconds int[], $15 dead_letter text[], $16 dedupe_key text[],
 * $17 throttle seconds int[], $18 slot offset int[], $19 group id text[], $20 group tier text[],
 * $21 blocked_by int[] (flow: parents not completed; such a job waits with start_after = infinity),
 * $22 on_parent_failure text[]. Every array but $2 and $18 may be null when all its entries are: unnest pads
 * it with nulls. $23 trace_context text: the sender's trace context, one for every job of the insert (tracing.ts).
 */
export const insertJobs = (s: string) => insertStatement(s, true, false);

/**
 * The same insert without ON CONFLICT, for a batch none of whose jobs can meet a unique index: a queue whose
 * policy constrains no queued job (standard, singleton, key_strict_fifo), and no dedupeKey or throttle slot.
 * The conflict check costs about a quarter of an insert of 1,000 jobs.
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

/**
 * key_strict_fifo: the earliest start among the jobs of this insert before this one with the same key that
 * nothing can refuse (no dedupe key, no throttle slot) and that wait for no parent (flow). Reads no table.
 */
const SIBLING_START = `min(coalesce(i.start_at, now() + coalesce(i.start_in, 0) * interval '1 second'))
      FILTER (WHERE i.dedupe_key IS NULL AND i.throttle IS NULL AND coalesce(i.blocked_by, 0) = 0)
      OVER (PARTITION BY CASE WHEN q.policy = 'key_strict_fifo' THEN i.singleton_key END ORDER BY i.ord
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`;

/**
 * key_strict_fifo (fifo_wait, migration 2): 1 marks a job that waits behind an earlier job of this insert that
 * may run no later than it, so that the claim never walks it while that job stays. The others go in as 0, and
 * the insert trigger marks those that wait behind a job stored before (jobs_fifo_mark_wait): so a backlog sent at
 * once costs one trigger call per key, not per job. A job waiting for parents starts at infinity: never marked.
 * Only the keyed statements compute it (see insertJobsKeyed); the window cost a one-job send 0.08 ms (+17%).
 */
const FIFO_WAIT = `CASE WHEN x.policy = 'key_strict_fifo' AND x.blocked_by = 0
      AND x.sibling_start <= greatest(coalesce(x.slot_start, x.start_after), now()) THEN 1 ELSE 0 END`;

const insertStatement = (s: string, skipConflicts: boolean, keyed: boolean) => `
INSERT INTO ${s}.jobs (queue, policy, data, priority, start_after, singleton_key, dedupe_key, group_id, group_tier, blocked_by, on_parent_failure, singleton_on, slot_until, retry_limit,
  retry_delay, retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, fifo_wait, trace_context)
SELECT x.queue, x.policy, x.data, x.priority, coalesce(x.slot_start, x.start_after), x.singleton_key, x.dedupe_key, x.group_id, x.group_tier,
  x.blocked_by, x.on_parent_failure, x.singleton_on, x.singleton_on + x.throttle * interval '1 second',
  x.retry_limit, x.retry_delay, x.retry_backoff, x.retry_delay_max, x.expire_seconds, x.heartbeat_seconds, x.delete_after_seconds,
  coalesce(x.slot_start, x.start_after) + x.retention_seconds * interval '1 second', x.dead_letter,
  ${keyed ? FIFO_WAIT : '0'}, $23::text
FROM (
  SELECT q.name AS queue, q.policy, nullif(i.data, 'null'::jsonb) AS data, coalesce(i.priority, 0) AS priority,
    CASE WHEN i.blocked_by > 0 THEN 'infinity'::timestamptz
      ELSE coalesce(i.start_at, now() + coalesce(i.start_in, 0) * interval '1 second') END AS start_after,
    i.singleton_key, i.dedupe_key, i.group_id, i.group_tier, coalesce(i.blocked_by, 0) AS blocked_by, i.on_parent_failure,
    to_timestamp((floor(extract(epoch FROM now()) / i.throttle) + i.slot_offset) * i.throttle) AS singleton_on,
    i.throttle,
    CASE WHEN i.slot_offset > 0 THEN to_timestamp((floor(extract(epoch FROM now()) / i.throttle) + i.slot_offset) * i.throttle) END AS slot_start,
    coalesce(i.retry_limit, q.retry_limit) AS retry_limit,
    coalesce(i.retry_delay, q.retry_delay) AS retry_delay,
    coalesce(i.retry_backoff, q.retry_backoff) AS retry_backoff,
    coalesce(i.retry_delay_max, q.retry_delay_max) AS retry_delay_max,
    coalesce(i.expire_seconds, q.expire_seconds) AS expire_seconds,
    coalesce(i.heartbeat_seconds, q.heartbeat_seconds) AS heartbeat_seconds,
    coalesce(i.delete_after_seconds, q.delete_after_seconds) AS delete_after_seconds,
    coalesce(i.retention_seconds, q.retention_seconds) AS retention_seconds,
    coalesce(i.dead_letter, q.dead_letter) AS dead_letter,
    ${keyed ? `${SIBLING_START} AS sibling_start,` : ''}
    i.ord
  FROM ${s}.queues q
  -- the data travel as one JSON array: parsed once, where a jsonb[] of JSON texts needs every quote escaped
  -- by the client and every element parsed twice (array, then jsonb) by the server
  CROSS JOIN ROWS FROM (jsonb_array_elements($2::jsonb), unnest($3::int[]), unnest($4::timestamptz[]), unnest($5::int[]),
    unnest($6::text[]), unnest($7::int[]), unnest($8::int[]), unnest($9::boolean[]), unnest($10::int[]), unnest($11::int[]),
    unnest($12::int[]), unnest($13::int[]), unnest($14::int[]), unnest($15::text[]), unnest($16::text[]), unnest($17::int[]),
    unnest($18::int[]), unnest($19::text[]), unnest($20::text[]), unnest($21::int[]), unnest($22::text[]))
    WITH ORDINALITY AS i(data, priority, start_at, start_in, singleton_key, retry_limit, retry_delay, retry_backoff,
      retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds, dead_letter,
      dedupe_key, throttle, slot_offset, group_id, group_tier, blocked_by, on_parent_failure, ord)
  WHERE q.name = $1
) x
ORDER BY x.ord
${skipConflicts ? 'ON CONFLICT DO NOTHING' : ''}
RETURNING id::text`;

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
  CASE WHEN partition THEN quote_ident(${s}.queue_partition_name(name)) ELSE 'jobs_default' END AS home
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
