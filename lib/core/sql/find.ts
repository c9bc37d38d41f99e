import { JOB_COLUMNS } from './fragments.js';

// findJobs' statements, one text per shape of what is asked: the engine's sessions plan every statement once for
// any values (force_generic_plan, db.ts), so a partial index is used only where the text itself says it applies.
// Parameters of all: $1 queue, $2 states (null: any), $3 singleton key, $4 dedupe key, $5 the cursor (the last id
// of the previous page; null: from the newest), $6 how many, $7 how many bytes of JSON (data, output, the dead-letter
// source's output, the last error) the page may hold: a page stops at the job that would go past them (the first job
// is always in it), and `found` says how many the rows asked for would have held, so the caller knows a next page
// is there. The keyed statements and findJobsByData also take $8, a JSON object the payload must contain (`@>`;
// null: any payload).

/** Below the cursor: an index condition on the id in any plan (a null cursor is the largest id). */
const BELOW = `j.id < coalesce($5::bigint, 9223372036854775807)`;

/** In the states asked ($2), or any. */
const IN_STATES = (s: string) => `($2::${s}.job_state[] IS NULL OR j.state = ANY($2::${s}.job_state[]))`;

/** The payload contains $8 (findJobs' `data`), or $8 is null. */
const HOLDS_DATA = `($8::jsonb IS NULL OR j.data @> $8::jsonb)`;

/** $3 and $4 are the keyed statements'; null here. */
const NO_KEYS = `$3::text IS NULL AND $4::text IS NULL`;

/**
 * The rows of `rows` (JOB_COLUMNS and the id as `n`, at most $6 of them) that fit in $7 bytes, newest first. The bytes
 * are measured only of the rows the index gave, never of the rest of the table.
 */
const WITHIN_BYTES = (rows: string) => `
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (${rows}) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC`;

/** A page of queue $1's jobs, newest first: the primary key read backwards from the cursor, until the page is full. */
export const findJobs = (s: string, t = `${s}.jobs`) =>
  WITHIN_BYTES(`SELECT ${JOB_COLUMNS}, j.id AS n FROM ${t} j
    WHERE j.queue = $1 AND ${BELOW} AND ${IN_STATES(s)} AND ${NO_KEYS}
    ORDER BY j.id DESC
    LIMIT $6`);

/**
 * findJobs with `data` ($8, never null here), keys aside, on a table with no index on the payload: the primary key read
 * backwards from the cursor, each row's payload tested, until the page is full. A payload most jobs hold costs a page
 * of rows; one that few hold reads much of the queue's history (docs/guide.md, "Job control", says so).
 */
export const findJobsByData = (s: string, t = `${s}.jobs`) =>
  WITHIN_BYTES(`SELECT ${JOB_COLUMNS}, j.id AS n FROM ${t} j
    WHERE j.queue = $1 AND ${BELOW} AND ${IN_STATES(s)} AND ${NO_KEYS} AND j.data @> $8::jsonb
    ORDER BY j.id DESC
    LIMIT $6`);

/**
 * findJobsByData on a table with a GIN index on the payload (payloadIndexed): the jobs that hold $8 below the cursor
 * are found through that index first (a MATERIALIZED CTE, with no order and no limit), then the newest of them are
 * read by id. In the CTE the queue and the cursor are written as expressions no index holds (`queue || ''`, `id + 0`):
 * a generic plan estimates `queue = $1 AND id < $5` on the primary key as a small share of a table of many queues and
 * walks it whatever the payload index, reading the whole queue, where the payload index reads only the jobs that hold
 * $8.
 */
export const findJobsByDataIndexed = (s: string, t = `${s}.jobs`) =>
  WITHIN_BYTES(`WITH held AS MATERIALIZED (
      SELECT j.id FROM ${t} j
      WHERE (j.queue || '') = $1 AND (j.id + 0) < coalesce($5::bigint, 9223372036854775807) AND ${IN_STATES(s)} AND ${NO_KEYS}
        AND j.data @> $8::jsonb
    )
    SELECT ${JOB_COLUMNS}, j.id AS n FROM ${t} j
    WHERE j.queue = $1 AND j.id IN (SELECT h.id FROM held h ORDER BY h.id DESC LIMIT $6)
    ORDER BY j.id DESC
    LIMIT $6`);

/**
 * Whether table `t` has a GIN index on the whole payload (`USING gin (data)` or `(data jsonb_path_ops)`, made by the
 * user, docs/guide.md), for findJobs to choose findJobsByDataIndexed. A partial index is left out (its predicate may
 * not hold for what is asked), and so is one not valid or not ready (a CREATE INDEX CONCURRENTLY that failed or runs).
 */
export const payloadIndexed = (s: string, t = `${s}.jobs`) => `
SELECT EXISTS (
  SELECT 1 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
  WHERE i.indrelid = '${t}'::regclass AND am.amname = 'gin' AND i.indpred IS NULL AND i.indisvalid AND i.indisready
    AND pg_get_indexdef(i.indexrelid) ~ 'USING gin \\(data( jsonb_path_ops| jsonb_ops)?\\)( WITH \\(.*\\))?$'
) AS indexed`;

/** findJobs for failed jobs ($2 is '{failed}'): jobs_failed_find_idx, which holds only those. */
export const findFailedJobs = (s: string, t = `${s}.jobs`) =>
  WITHIN_BYTES(`SELECT ${JOB_COLUMNS}, j.id AS n FROM ${t} j
    WHERE j.queue = $1 AND j.state = 'failed' AND ${BELOW} AND ${IN_STATES(s)} AND ${NO_KEYS}
    ORDER BY j.id DESC
    LIMIT $6`);

/**
 * findJobs for the jobs of a key (`key`: the singleton key, $3, or the dedupe key, $4; the other, when given, is a
 * filter), in three parts, each on an index: finished jobs (jobs_key_find_idx, jobs_dedupe_find_idx, which hold
 * finished keyed jobs only, so that a keyed job's claim and retries write nothing more), active ones
 * (jobs_lease_idx: as many as run), and waiting ones (for a dedupe key jobs_dedupe_key; for a singleton key
 * jobs_ready_idx: the queue's whole backlog, none of its history). A part whose states $2 leaves out is skipped
 * before it reads anything. $8 (`data`) filters the rows the key's indexes give.
 */
const BY_KEY = (s: string, t: string, key: 'singleton_key' | 'dedupe_key') => {
  const [own, other] = key === 'singleton_key' ? ['$3', '$4'] : ['$4', '$3'];
  const otherColumn = key === 'singleton_key' ? 'dedupe_key' : 'singleton_key';
  const part = (state: string, states: string) => `(SELECT ${JOB_COLUMNS}, j.id AS n FROM ${t} j
  WHERE j.queue = $1 AND ${state} AND j.${key} = ${own}::text AND (${other}::text IS NULL OR j.${otherColumn} = ${other}::text)
    AND ${BELOW} AND ${IN_STATES(s)} AND ${HOLDS_DATA} AND ($2::${s}.job_state[] IS NULL OR $2::${s}.job_state[] && '${states}'::${s}.job_state[])
  ORDER BY j.id DESC LIMIT $6)`;
  return WITHIN_BYTES(`SELECT * FROM (
    ${part("j.state > 'active'", '{completed,cancelled,failed}')}
    UNION ALL ${part("j.state = 'active'", '{active}')}
    UNION ALL ${part("j.state < 'active'", '{created,retry}')}
  ) k
  ORDER BY k.n DESC
  LIMIT $6`);
};

/** findJobs for the jobs of singleton key $3 (and dedupe key $4, when given): see BY_KEY. */
export const findJobsBySingletonKey = (s: string, t = `${s}.jobs`) => BY_KEY(s, t, 'singleton_key');

/** findJobs for the jobs of dedupe key $4 (and singleton key $3, when given): see BY_KEY. */
export const findJobsByDedupeKey = (s: string, t = `${s}.jobs`) => BY_KEY(s, t, 'dedupe_key');
