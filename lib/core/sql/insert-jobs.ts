// The one INSERT behind every way jobs are made (send, insert, flows, publish). Not registered in index.ts: it
// holds no statement of its own; enqueue.ts and pub-sub.ts build theirs from it.

/** Where an insert's queues come from, and what it answers (see insertStatement). */
export interface InsertSource {
  from: string;
  where: string;
  order: string;
  returning: string;
}

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
 * Only the keyed statements compute it (see insertJobsKeyed): the window would cost every other send for nothing.
 */
const FIFO_WAIT = `CASE WHEN x.policy = 'key_strict_fifo' AND x.blocked_by = 0
      AND x.sibling_start <= greatest(coalesce(x.slot_start, x.start_after), now()) THEN 1 ELSE 0 END`;

/**
 * The text of the inserts of enqueue.ts and of publish (pub-sub.ts): the rows of ROWS FROM (one per job, $2-$22, see
 * insertJobs) each joined to a queue of `source`, a FROM item that names the queues as q and is filtered by
 * `where`; the inserted rows in `order`, returning `returning`.
 */
export const insertStatement = (
  s: string,
  skipConflicts: boolean,
  keyed: boolean,
  source: InsertSource = { from: `${s}.queues q`, where: 'q.name = $1', order: 'x.ord', returning: 'id::text' },
) => `
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
  FROM ${source.from}
  -- the data travel as one JSON array: parsed once, where a jsonb[] of JSON texts needs every quote escaped
  -- by the client and every element parsed twice (array, then jsonb) by the server
  CROSS JOIN ROWS FROM (jsonb_array_elements($2::jsonb), unnest($3::int[]), unnest($4::timestamptz[]), unnest($5::int[]),
    unnest($6::text[]), unnest($7::int[]), unnest($8::int[]), unnest($9::boolean[]), unnest($10::int[]), unnest($11::int[]),
    unnest($12::int[]), unnest($13::int[]), unnest($14::int[]), unnest($15::text[]), unnest($16::text[]), unnest($17::int[]),
    unnest($18::int[]), unnest($19::text[]), unnest($20::text[]), unnest($21::int[]), unnest($22::text[]))
    WITH ORDINALITY AS i(data, priority, start_at, start_in, singleton_key, retry_limit, retry_delay, retry_backoff,
      retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds, dead_letter,
      dedupe_key, throttle, slot_offset, group_id, group_tier, blocked_by, on_parent_failure, ord)
  WHERE ${source.where}
) x
ORDER BY ${source.order}
${skipConflicts ? 'ON CONFLICT DO NOTHING' : ''}
RETURNING ${source.returning}`;
