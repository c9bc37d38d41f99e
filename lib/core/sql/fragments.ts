/** SQL fragments shared by several statements; each reads the job row as `j`. */

/** An attempt's stamp: started_on of row `t` in microseconds since the epoch (see STAMPED). */
export const STAMP = (t: string) => `(extract(epoch FROM ${t}.started_on) * 1000000)::bigint`;

/** How a completed or cancelled job's keep_until is set: its deleteAfterSeconds, 0 keeping it forever. */
export const KEEP_FINISHED = `CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END`;

/**
 * How the keep_until of a job that fails for good is set: its queue's failedDeleteAfterSeconds (migration 5), 0
 * keeping it forever; failures are what operators come back for, so they have a setting of their own. One probe of
 * the queues' primary key per failed row; a job whose queue is gone keeps its deleteAfterSeconds.
 */
export const KEEP_FAILED = (s: string) => `coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM ${s}.queues q WHERE q.name = j.queue), ${KEEP_FINISHED})`;

/**
 * The keep_until of row `j` going to retry, due at `due`: its retention counted again from that due time (a job
 * waiting for a retry has not waited unstarted; keep_until − start_after is its retention while it waits, as the
 * insert sets them), never earlier than it was. Without it, a retry whose delay passed the first deadline expired.
 */
export const RETRY_KEEP = (due: string) => `CASE WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE greatest(j.keep_until, ${due} + (j.keep_until - j.start_after)) END`;

/**
 * Seconds until the next attempt of row `j`: with backoff
 * min(retryDelayMax, retryDelay * (2^min(16,n)/2 + 2^min(16,n)/2 * random())) for the n-th retry, where a
 * retryDelay of 0 counts as 1 (backoff from nothing would retry at once every time), else retryDelay. n counts from
 * the job's retry_base, so a job given a fresh budget by retry() backs off from its first delay again (migration 11).
 * Shared by failures and expired leases.
 */
export const RETRY_DELAY = `CASE WHEN j.retry_backoff THEN least(
        coalesce(j.retry_delay_max, 2147483647)::float8,
        greatest(j.retry_delay, 1) * (power(2, least(16, j.retry_count - j.retry_base + 1)) / 2
          + power(2, least(16, j.retry_count - j.retry_base + 1)) / 2 * random()))
      ELSE j.retry_delay::float8 END`;

/** A job's every stored field, as getJobById and findJobs select them (rows.ts, JobRow). */
export const JOB_COLUMNS = `j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error`;

/**
 * A failed attempt's error record (`e`) as the job's last_error, beside when it was written and which attempt it
 * ended (retryCount + 1 at the failure; a job retried by hand counts from 1 again). Kept when a later attempt
 * completes, unlike output.errors. The record is nested, so that an error's own `on` or `attempt` field is kept.
 */
export const LAST_ERROR = (e: string) => `jsonb_build_object('error', ${e}, 'on', now(), 'attempt', j.retry_count + 1)`;

/**
 * Errors of attempts a job keeps in output.errors: the most recent (docs/guide.md, "Working"). A job may fail without
 * end (a high retryLimit, retry() again and again), and every failure rewrites its output.
 */
export const MAX_KEPT_ERRORS = 20;

/**
 * Row `j`'s output as its own attempts wrote it: a dead-letter copy starts with its source's failure as its output
 * (DEAD_LETTER, where pg-boss puts it), which is not a history of the copy's own errors.
 */
const OWN_OUTPUT = `CASE WHEN j.source_id IS NOT NULL AND j.output IS NOT DISTINCT FROM j.source_output THEN NULL ELSE j.output END`;

/**
 * Appends one attempt's error (`e`) to a job's output: output.error is the latest, output.errors the MAX_KEPT_ERRORS
 * most recent. The history is cut in the statement that appends, so a job's output stays bounded however often it
 * fails (a job written before the cut existed loses its oldest errors at its next failure). jsonpath's `last - n`
 * past the start of a shorter array is no error in lax mode: it yields the elements there are.
 */
export const APPEND_ERROR = (e: string) => `jsonb_build_object(
    'error', ${e},
    'errors', jsonb_path_query_array(coalesce(${OWN_OUTPUT} -> 'errors', '[]'::jsonb), '$[last - ${MAX_KEPT_ERRORS - 2} to last]')
      || jsonb_build_array(${e}))`;

/** Links of each kind the dashboard's job view lists (sql/job-view.ts: one more is read, to say that more exist). */
export const JOB_VIEW_LINKS = 50;

/** Attempts a job keeps in `attempts` (migration 18), as output.errors keeps errors. */
export const MAX_KEPT_ATTEMPTS = 20;

/** The longest error message an attempt's record keeps (the whole error, its fields too, is in output.errors). */
export const ATTEMPT_MESSAGE_CHARS = 2000;

/**
 * Appends the attempt of active row `j` that error `e` ends to its attempts: its number, worker, start and end (the
 * statement's time: a caller's fail() with db may run late in its transaction) and the error's name, message (cut)
 * and stack (bounded when the error was recorded: 20 lines), the MAX_KEPT_ATTEMPTS most recent, cut as APPEND_ERROR
 * cuts output.errors. They outlive output.errors, which a completion replaces. A row that is not active had no attempt
 * running: it keeps its attempts.
 */
const APPEND_ATTEMPT = (e: string) => `CASE WHEN j.state = 'active' THEN
    jsonb_path_query_array(coalesce(j.attempts, '[]'::jsonb), '$[last - ${MAX_KEPT_ATTEMPTS - 2} to last]')
      || jsonb_build_array(jsonb_build_object('attempt', j.retry_count + 1, 'worker', j.worker_id, 'startedOn', j.started_on,
        'endedOn', statement_timestamp(), 'name', ${e} -> 'name', 'message', left(${e} ->> 'message', ${ATTEMPT_MESSAGE_CHARS}),
        'stack', ${e} -> 'stack'))
    ELSE j.attempts END`;

/**
 * The SET list that sends row `j` back to retry or fails it for good, for a failed attempt (failJobs) and an expired
 * lease (reapExpiredLeases) alike: one list, so the two cannot drift apart. `r`: the row that decides, with
 * `retrying` (a retry is left and allowed), `delay` (seconds until that retry) and `error` (the error to record).
 */
export const RETRY_OR_FAIL = (s: string, r: string) => `state = CASE WHEN ${r}.retrying THEN 'retry' ELSE 'failed' END::${s}.job_state,
  retry_count = j.retry_count + ${r}.retrying::int,
  -- the delay from the statement, not from the start of its transaction (a caller's fail() with db may run late in one)
  start_after = CASE WHEN ${r}.retrying THEN statement_timestamp() + ${r}.delay * interval '1 second' ELSE j.start_after END,
  completed_on = CASE WHEN ${r}.retrying THEN NULL ELSE now() END,
  keep_until = CASE WHEN ${r}.retrying THEN ${RETRY_KEEP(`statement_timestamp() + ${r}.delay * interval '1 second'`)} ELSE ${KEEP_FAILED(s)} END,
  lease_until = NULL,
  heartbeat_until = NULL,
  output = ${APPEND_ERROR(`${r}.error`)},
  last_error = ${LAST_ERROR(`${r}.error`)},
  attempts = ${APPEND_ATTEMPT(`${r}.error`)}`;

/** The columns a statement that may fail jobs for good returns, so DEAD_LETTER can copy them. */
export const FAILED_RETURNING = `j.id, j.queue, j.state, j.start_after, j.data, j.priority, j.singleton_key, j.group_id, j.group_tier, j.created_on,
  j.retry_count, j.claim_count, j.output, j.dead_letter, j.source_root_id, j.trace_context, ${STAMP('j')}::text AS stamp`;

/**
 * A CTE that copies each row of `from` that failed for good and names a dead-letter queue into that
 * queue, in the same statement (so in the same transaction) as the failure. The copy keeps data, priority,
 * singleton key, group (id and tier) and the sender's trace context, runs under the dead-letter queue's settings and policy (a copy the policy refuses is
 * not made; the source job stays failed, visible), and records where it came from; its failure goes in `source_output`
 * and, where pg-boss puts it, in the copy's `output` (until the copy's own attempt writes there);
 * `source_root_id` is the first job of the chain, kept across any number of redrives.
 */
export const DEAD_LETTER = (s: string, from: string) => `dead_lettered AS (
  INSERT INTO ${s}.jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter,
    source_name, source_id, source_created_on, source_retry_count, output, source_output, source_root_id, trace_context)
  SELECT q.name, q.policy, x.data, x.priority, x.singleton_key, x.group_id, x.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, x.queue, x.id, x.created_on, x.retry_count, x.output, x.output, coalesce(x.source_root_id, x.id), x.trace_context
  FROM ${from} x
  JOIN ${s}.queues q ON q.name = x.dead_letter
  WHERE x.state = 'failed'
  ON CONFLICT DO NOTHING
  RETURNING id
)`;

/**
 * True when row `j` may go to `retry` under its policy: a stately key holds at most one job in retry, so
 * while another job of the key waits there, a failure of this one is final (it bypasses the retry).
 * `t`: the table that holds j's queue (its partition, or jobs).
 */
export const RETRY_SLOT_FREE = (t: string) => `NOT (j.policy = 'stately' AND EXISTS (
      SELECT 1 FROM ${t} r
      WHERE r.queue = j.queue AND r.policy = 'stately' AND r.state = 'retry'
        AND r.singleton_key IS NOT DISTINCT FROM j.singleton_key AND r.id <> j.id))`;

/**
 * flow(): a CTE that counts down the blocked children of the completed rows of `from` (each a parent of
 * queue `queue`); a waiting child whose last parent completed becomes runnable now. Counted per child, since one
 * statement cannot update a row twice. A child cancelled while it waited is counted down too (it stays cancelled
 * and deferred): resumeJobs then finds in its blocked_by the parents still to complete. The two meet on the
 * child's row, whose lock orders them and whose newer version each re-reads, so a resume that races with the
 * completion of its parent neither misses the release nor takes it twice. Returns the queues of the children
 * released to run (blocked_by 0) for a NOTIFY.
 * A queue none of whose jobs has children (one probe, once per statement) skips the probe per row. The children's
 * queues are read inside `d`, so that the update reaches each child by (queue, id) alone (see NAMED).
 */
export const RELEASE_CHILDREN = (s: string, from: string, queue: string) => `released AS (
  UPDATE ${s}.jobs j SET
    blocked_by = j.blocked_by - d.n,
    start_after = CASE WHEN j.blocked_by = d.n AND j.state = 'created' THEN statement_timestamp() ELSE j.start_after END,
    keep_until = CASE WHEN j.blocked_by = d.n AND j.state = 'created' THEN statement_timestamp() + d.retention_seconds * interval '1 second' ELSE j.keep_until END
  FROM (
    SELECT dep.child_queue, dep.child_id, count(*)::int AS n, min(q.retention_seconds) AS retention_seconds
    FROM ${s}.job_deps dep JOIN ${from} p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
    JOIN ${s}.queues q ON q.name = dep.child_queue
    WHERE EXISTS (SELECT 1 FROM ${s}.job_deps x WHERE x.parent_queue = ${queue})
    GROUP BY dep.child_queue, dep.child_id
  ) d
  WHERE j.queue = d.child_queue AND j.id = d.child_id AND j.state IN ('created', 'cancelled') AND j.blocked_by > 0
  RETURNING j.queue, j.blocked_by, j.state
)`;

/**
 * flow(): CTEs (of a WITH RECURSIVE) that fail or cancel, as each asked, every blocked descendant of the
 * rows of `from` that failed for good or were cancelled: a child whose parent can no longer complete
 * would otherwise wait forever.
 */
export const ORPHAN_DESCENDANTS = (s: string, from: string) => `doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM ${s}.job_deps dep
  JOIN ${from} p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM ${s}.job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE ${s}.jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::${s}.job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN ${KEEP_FAILED(s)} ELSE ${KEEP_FINISHED} END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN ${LAST_ERROR(`jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')`)} END
  FROM (${ORPHAN_FATE(s, from)}) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
)`;

/**
 * Whether each doomed child (ORPHAN_DESCENDANTS) fails or is cancelled: cancelled when it asked to be
 * (onParentFailure: 'cancel'), and a key_strict_fifo child also when failing it would put a second job of its key
 * in retry, active or failed (jobs_fifo_blocking_idx): its key already holds one, a row of \`from\` (failed by this
 * very statement, not yet visible to it) holds it, or an earlier doomed child of the key fails first. Without
 * this, one such child made the whole statement fail: the parent's failure, the reaper's or retention's batch.
 */
const ORPHAN_FATE = (s: string, from: string) => `
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM ${s}.jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM ${from} p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN ${s}.jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0`;

/**
 * A worker's fence also compares the attempt's stamp (`u.stamp`: started_on in microseconds, as its claim
 * returned it; null: any). claim_count alone can repeat: a claim that a server crash forgets (its commit not
 * yet on disk) leaves claim_count where it was, and the same worker may claim the job again with the same
 * count while its first handler still runs. The new claim's started_on differs, so the old result is refused.
 */
export const STAMPED = `(u.stamp IS NULL OR ${STAMP('j')} = u.stamp)`;

/**
 * True when no job waits for row `j` (it is no flow parent): one probe of job_deps (LIMIT 1: as NOT EXISTS, a
 * plan made once may read all of job_deps into a hash). The claim returns its negation as `parent`, and
 * removeOnComplete keeps the rows it is false for (REMOVABLE). The leaf statements, which
 * leave a flow's work out, change only such rows, in the snapshot of the change itself: a caller's belief
 * (the claim's `parent`, read when the job was claimed) is then only a hint, and a row it got wrong comes back
 * unchanged, for the full statement. (A flow given a non-transactional `db` commits its jobs before their links
 * to their children: a worker could claim a parent in between and believe it a leaf.)
 */
export const NO_CHILDREN = (s: string) =>
  `coalesce((SELECT false FROM ${s}.job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)`;

/**
 * The attempts a statement names, as relation `u`: queue $1 as column `queue`, and the columns `columns` of the
 * arrays `arrays` (unnest). Statements join it to the jobs by `j.queue = u.queue AND j.id = u.id`, and test
 * state with ACTIVE, so that the only plan that does not read the whole table is one probe of the primary key
 * per attempt, whatever the statistics say. Written as `j.queue = $1`, the queue is a condition on the jobs alone,
 * and where the statistics make it look small the planner reads all of it and hashes the attempts against it; so
 * the subquery is kept whole (OFFSET 0) and the planner does not see that u.queue is $1 (docs/design.md,
 * "Statements that name their jobs"; test/core/settle.spec.ts "plans").
 */
export const NAMED = (columns: string, arrays: string) =>
  `(SELECT $1::text AS queue, a.* FROM unnest(${arrays}) AS a(${columns}) OFFSET 0) u`;

/**
 * "Row `j` is active", in statements that name their jobs (NAMED). The state is compared as text so that no
 * partial index matches it (an index predicate is matched on the expression as written): `j.state = 'active'`
 * makes the active-only indexes (jobs_lease_idx, jobs_group_active_idx) a way to read every active job, and
 * an index analysed while it was empty is estimated empty.
 */
export const ACTIVE = `j.state::text = 'active'`;

/**
 * The NOTIFY that wakes queue $1's workers in every process after outcomes on a queue that holds jobs back (a
 * finished job may have released the next one of its key, a slot, a group's turn), sent by the statement that
 * writes them, so that it goes out at the commit of the change and costs no round trip of its own. `channel`:
 * the parameter holding the channel, null on a queue that holds nothing back (the statement then sends none).
 * A column of the statement's last SELECT (an uncorrelated subquery: an InitPlan, run when the SELECT, or a UNION
 * ALL branch of it, gives its first row; PostgreSQL sends one NOTIFY for a channel and payload per transaction).
 */
export const WAKE_HOLDING = (channel: string) =>
  `(SELECT pg_notify(${channel}::text, $1) WHERE ${channel}::text IS NOT NULL)::text AS held`;

/**
 * The payload of a wake-up NOTIFY for a job of queue `queue` that becomes claimable at `due`: the queue's name when
 * that is now, else the name, a space and the milliseconds left, counted from this moment (a queue name holds no
 * space: QUEUE_NAME_PATTERN). A worker that hears a time sets a timer for it (WorkerLoop.heard, DueClock.announce).
 * Evaluate it once per NOTIFY (a CTE, a trigger): read twice, clock_timestamp() would make two payloads.
 */
export const WAKE_PAYLOAD = (queue: string, due: string) => `CASE WHEN ${due} <= clock_timestamp() THEN ${queue}
    ELSE ${queue} || ' ' || ceil(extract(epoch FROM ${due} - clock_timestamp()) * 1000)::bigint END`;

/** How long an instance counts as live after its last heartbeat in the cluster registry (migration 7). */
export const WORKER_LIVE_SECONDS = 30;

/** Row `w` of the cluster registry is live: its heartbeat is within WORKER_LIVE_SECONDS. */
export const LIVE_WORKER = (w: string) => `${w}.heartbeat_on >= now() - interval '${WORKER_LIVE_SECONDS} seconds'`;

/**
 * The probes that say a key_strict_fifo job `c` is its key's head and its key is free: no other job of the
 * key in retry (that one keeps the head), active or failed, and, unless `c` is itself the key's job in retry,
 * no earlier job of the key that may run now (a deferred one is skipped, so a later job may run ahead of it).
 * `earlier`: what makes job `e` such a job (fetch() with ignoreStartAfter: FETCH_EARLIER in claim.ts).
 *
 * Each is written `coalesce((SELECT false … LIMIT 1), true)`: a scalar subquery is never turned into a join,
 * so it stays one index probe per job the walk meets (as NOT EXISTS, a plan may read the whole blocking index
 * once per claim instead), and the planner counts the test as passing half the rows. Written `(…) IS NULL`,
 * it counts 0.5% of them and prices the walk at millions (enough for JIT to compile the claim where it is on).
 */
export const FIFO_HEAD = (t: string, c: string, earlier = 'e.start_after <= statement_timestamp()') => `coalesce((
      SELECT false FROM ${t} b
      WHERE b.queue = ${c}.queue AND b.singleton_key = ${c}.singleton_key AND b.id <> ${c}.id
        AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
      LIMIT 1), true)
    AND (${c}.state = 'retry' OR coalesce((
      SELECT false FROM ${t} e
      WHERE e.queue = ${c}.queue AND e.singleton_key = ${c}.singleton_key AND e.id < ${c}.id
        AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND ${earlier}
      LIMIT 1), true))`;

/**
 * True for a finished job (`j`) that nothing needs any more, so that retention and deleteStoredJobs may delete it.
 * These stay however old: a throttled job until its slot
 * ends (a send into the slot is still refused), a failed key_strict_fifo job while jobs of its key wait (it holds
 * the key back), a flow parent while a child waits or runs, or, for a parent that did not complete, while a child
 * cancelled before its release still counts it (a resume would make it wait again).
 */
export const NO_LONGER_NEEDED = (s: string) => `(j.slot_until IS NULL OR j.slot_until <= now())
    AND NOT (j.policy = 'key_strict_fifo' AND j.state = 'failed' AND EXISTS (
      SELECT 1 FROM ${s}.jobs w
      WHERE w.queue = j.queue AND w.singleton_key = j.singleton_key AND w.state = 'created' AND w.policy = 'key_strict_fifo'))
    AND NOT EXISTS (
      SELECT 1 FROM ${s}.job_deps d JOIN ${s}.jobs c ON c.queue = d.child_queue AND c.id = d.child_id
      WHERE d.parent_queue = j.queue AND d.parent_id = j.id
        AND (c.state < 'completed' OR (j.state <> 'completed' AND c.state = 'cancelled' AND c.blocked_by > 0)))`;

/** CTEs `gone` (deletes the rows of CTE `doomed`) and `links` (their links to their flow children). */
export const DELETE_DOOMED = (s: string) => `gone AS (
  DELETE FROM ${s}.jobs j USING doomed d
  WHERE j.queue = d.queue AND j.id = d.id
  RETURNING j.queue, j.id
), links AS (
  DELETE FROM ${s}.job_deps dep USING gone g
  WHERE dep.parent_queue = g.queue AND dep.parent_id = g.id
)`;

/**
 * The end of a pass's statement that failed jobs as an attempt each (reapExpiredLeases in maintenance.ts,
 * failUnworkedJobs in unworked.ts), from CTE `from` (FAILED_RETURNING): a CTE is run once, per queue, one NOTIFY on channel `channel` for
 * what may run now (a failure may free a key) and one naming the delay of the earliest retry that waits; then each job
 * with when it is retried (retry_in, seconds) or where its failure went (dead_letter).
 */
export const PASS_FAILED = (from: string, channel: string) => `
, woke AS (
  SELECT pg_notify(${channel}, ${WAKE_PAYLOAD('r.queue', 'min(r.start_after)')})::text AS notified
  FROM ${from} r GROUP BY r.queue, r.state = 'retry' AND r.start_after > statement_timestamp()
)
SELECT r.id::text, r.queue, r.state::text, (SELECT min(w.notified) FROM woke w) AS notified,
  CASE WHEN r.state = 'retry' THEN greatest(0, ceil(extract(epoch FROM r.start_after - statement_timestamp())))::int END AS retry_in,
  CASE WHEN r.state = 'failed' THEN r.dead_letter END AS dead_letter
FROM ${from} r`;
