import { FIFO_HEAD, NO_CHILDREN, STAMP } from './fragments.js';

/** When a job is due: a worker's claims take only the jobs whose start_after has come. */
const DUE_NOW = `j.start_after <= statement_timestamp()`;

/** fetch() with options: as DUE_NOW, or with $7 (ignoreStartAfter) any start_after, but never a flow child that
 * waits for parents (start_after infinity) nor a debounced job before its slot (later sends of the slot would not run). */
const DUE_FETCH = `j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())`;

/** Claim order, in relation `a`: priority first (the order of jobs_ready_idx), then due time and id. */
const BY_PRIORITY = (a: string) => `${a}.priority DESC, ${a}.start_after, ${a}.id`;

/** fetch() with priority: false: due time and id, whatever the priority (no index holds the rows in this order). */
const BY_DUE = (a: string) => `${a}.start_after, ${a}.id`;

/**
 * The rows a claim may take: runnable jobs of queue $1 within the priority filters $4 and $5, unless the queue is
 * paused (pauseQueue: a probe of the queue's row, once per statement, that ends the claim before any job is
 * read). It matches the predicate of jobs_ready_idx (state < 'active'), so every claim walks that index. The
 * priority bounds are written so that a plan made for any values bounds the walk by them (as `$4 IS NULL OR
 * priority >= $4`, only a plan made for the values could; a generic one read the whole backlog when fewer than a
 * batch matched).
 */
const READY = (s: string, due = DUE_NOW) => `j.queue = $1 AND j.state < 'active' AND ${due}
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM ${s}.queues pq WHERE pq.name = $1 AND pq.paused)`;

/**
 * Marks the rows of the `next` CTE active under this worker's lease (each claim is a new attempt).
 * The claims read statement_timestamp(), not now(): a limited claim runs in a transaction that first
 * waits for the queue's lock, and now() would be the time that wait began.
 *
 * The update fetches the picked rows by the ctid (`tid`) and partition (`rel`) the pick locked them in (a Tid
 * Scan) and names no queue: a locked row cannot move, and a plan made once while the table was small cannot read
 * the queue's rows. A row changed and committed after this statement's snapshot is left out of the claim (never
 * claimed twice, never lost). A worker's claim commits without waiting for its WAL flush (`asyncCommit`); one that
 * a server crash forgot is told apart from its next claim by the fence's stamp (STAMPED in fragments.ts).
 * Why, and what each costs: docs/design.md, "The claim: one statement".
 */
const CLAIM_UPDATE = (s: string, t: string, asyncCommit: string, extra = '') => `
UPDATE ${t} j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN ${asyncCommit}::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  ${STAMP('j')}::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT ${NO_CHILDREN(s)} AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM ${s}.queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove${extra}`;

/**
 * The pick shared by the plain claims: locks the next $2 ready rows (that also meet `where`) in claim order,
 * skipping rows that another claimer holds locked.
 */
const PICK_NEXT = (s: string, t: string, where = '', due = DUE_NOW, order = BY_PRIORITY) => `
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM ${t} j
  WHERE ${READY(s, due)}${where}
  ORDER BY ${order('j')}
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)`;

/**
 * The claim: one statement that picks the next runnable jobs of a queue and marks them active under
 * this worker's lease.
 *
 * The pick is a MATERIALIZED CTE on purpose (Oban's warning): inlined, the planner may run the limited,
 * SKIP LOCKED subquery more than once and update more rows than were asked for. It walks jobs_ready_idx
 * in claim order (priority DESC, start_after, id) and skips rows that another claimer holds locked.
 *
 * $1 queue, $2 how many, $3 worker id, $4 min priority (null: none), $5 max priority (null: none),
 * $6 commit without waiting for the flush (a worker's claim; see CLAIM_UPDATE)
 */
export const claimJobs = (s: string, t = `${s}.jobs`) => `${PICK_NEXT(s, t)}${CLAIM_UPDATE(s, t, '$6')}`;

/**
 * The claim for queues whose policy allows one active job per key (singleton, stately): the same pick,
 * skipping keys that already have an active job and taking at most one job per key, so a batch never
 * breaks the policy's unique index. Two claimers racing for one key both pass the check; the index
 * refuses the later one's statement as a whole (unique_violation), which the engine turns into an
 * empty claim. Candidates are over-fetched (4× the batch) so that a run of one key does not starve
 * the others.
 *
 * $1 queue, $2 how many, $3 worker id, $4 min priority (null: none), $5 max priority (null: none),
 * $6 commit without waiting for the flush (a worker's claim; see CLAIM_UPDATE)
 */
export const claimJobsOnePerKey = (s: string, t = `${s}.jobs`) => ONE_PER_KEY(s, t, DUE_NOW, BY_PRIORITY);

const ONE_PER_KEY = (s: string, t: string, due: string, order: (a: string) => string) => `
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel, j.priority, j.start_after, j.singleton_key
  FROM ${t} j
  WHERE ${READY(s, due)}
    AND NOT EXISTS (
      SELECT 1 FROM ${t} a
      WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy
        AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key)
  ORDER BY ${order('j')}
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT d.queue, d.id, d.tid, d.rel FROM (
    SELECT DISTINCT ON (c.singleton_key) c.queue, c.id, c.tid, c.rel, c.priority, c.start_after
    FROM candidates c
    ORDER BY c.singleton_key, ${order('c')}
  ) d
  ORDER BY ${order('d')}
  LIMIT $2
)${CLAIM_UPDATE(s, t, '$6')}`;

/**
 * The claim for key_strict_fifo queues: jobs of one key run strictly one after another, in the order they
 * were sent. Priority orders work across keys; the priority filters apply to the head and cannot skip it.
 *
 * It walks jobs_fifo_ready_idx in claim order: the ready jobs not marked as waiting behind an earlier job of their
 * key (fifo_wait, migration 2), so it meets about one job per key however long the backlogs. Each job it meets is
 * still checked by FIFO_HEAD's two probes, so a job left unmarked (two inserts racing on a new key) costs only its
 * probes; the walk has no cap, which would let such jobs hold other keys' heads back. The pick is a MATERIALIZED
 * CTE for the reason claimJobs gives (Oban's warning). Its cost by queue shape: docs/design.md, "Policies".
 *
 * $1 queue, $2 how many, $3 worker id, $4 min priority (null: none), $5 max priority (null: none),
 * $6 commit without waiting for the flush (a worker's claim; see CLAIM_UPDATE)
 */
export const claimJobsKeyFifo = (s: string, t = `${s}.jobs`) => KEY_FIFO(s, t, DUE_NOW, BY_PRIORITY);

const KEY_FIFO = (s: string, t: string, due: string, order: (a: string) => string) =>
  `${PICK_NEXT(
    s,
    t,
    ` AND j.fifo_wait = 0 AND j.policy = 'key_strict_fifo'
    AND ${due === DUE_NOW ? FIFO_HEAD(t, 'j') : FIFO_HEAD(t, 'j', FETCH_EARLIER)}`,
    due,
    order,
  )}${CLAIM_UPDATE(s, t, '$6')}`;

/**
 * fetch() with ignoreStartAfter ($7): an earlier queued job of the key holds a later one back however far off its
 * start_after, as long as it may ever run (a flow child waiting for its parents may not), so that the key's jobs
 * still run in the order they were sent. ($7 false: FIFO_HEAD's own test.)
 */
const FETCH_EARLIER = `e.start_after < 'infinity' AND e.blocked_by = 0 AND ($7::boolean OR e.start_after <= statement_timestamp())`;

/**
 * The claims of fetch() with options (FetchOptions.ignoreStartAfter, priority: false); a worker never sends them.
 * Each is its worker claim (claimJobs, claimJobsOnePerKey, claimJobsKeyFifo) with DUE_FETCH for when a job is due
 * and, in the ...ByDue ones, BY_DUE for the order; the policies' checks, the pause and the limits (claimJobs in
 * worker/intake/claim.ts) are theirs. Statements of their own so that the workers' claims keep their text and plans.
 * The ...ByDue claims read every ready job of the queue, since no index holds them in due order: their cost follows
 * the backlog (docs/design.md, "fetch() with options").
 *
 * $1-$6 as claimJobs, $7 ignoreStartAfter (boolean)
 */
export const fetchJobs = (s: string, t = `${s}.jobs`) => `${PICK_NEXT(s, t, '', DUE_FETCH)}${CLAIM_UPDATE(s, t, '$6')}`;

/**
 * fetchJobs in due-time order (priority: false). The soonest 4 × batch are chosen first without locks (a bounded
 * top-N sort in memory), then locked, skipping those another claimer holds: a pick that locks as it goes
 * (PICK_NEXT) cannot bound its sort, since a row it skips as locked would leave it short. Under contention a fetch
 * may then get fewer than its batch, as claimJobsOnePerKey may (docs/design.md, "fetch() with options").
 */
export const fetchJobsByDue = (s: string, t = `${s}.jobs`) => `
WITH soonest AS MATERIALIZED (
  SELECT j.queue, j.id, j.start_after
  FROM ${t} j
  WHERE ${READY(s, DUE_FETCH)}
  ORDER BY ${BY_DUE('j')}
  LIMIT $2 * 4
), next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM soonest w
  JOIN ${t} j ON j.queue = w.queue AND j.id = w.id
  -- tested again on the row as locked: it may have been claimed or changed since soonest read it
  WHERE j.state < 'active' AND ${DUE_FETCH}
  ORDER BY ${BY_DUE('w')}
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
)${CLAIM_UPDATE(s, t, '$6')}`;

/** claimJobsOnePerKey for fetch() with options (see fetchJobs). */
export const fetchJobsOnePerKey = (s: string, t = `${s}.jobs`) => ONE_PER_KEY(s, t, DUE_FETCH, BY_PRIORITY);

/**
 * fetchJobsOnePerKey in due-time order (priority: false). Its pick tests each ready row for an active job of its
 * key before the sort, so its cost follows the backlog times the queue's active jobs (docs/design.md, "fetch() with
 * options").
 */
export const fetchJobsOnePerKeyByDue = (s: string, t = `${s}.jobs`) => ONE_PER_KEY(s, t, DUE_FETCH, BY_DUE);

/** claimJobsKeyFifo for fetch() with options (see fetchJobs, FETCH_EARLIER). */
export const fetchJobsKeyFifo = (s: string, t = `${s}.jobs`) => KEY_FIFO(s, t, DUE_FETCH, BY_PRIORITY);

/** fetchJobsKeyFifo in due-time order (priority: false). */
export const fetchJobsKeyFifoByDue = (s: string, t = `${s}.jobs`) => KEY_FIFO(s, t, DUE_FETCH, BY_DUE);

/**
 * The claim under a worker's groupConcurrency (standard queues): at most a group's limit of its jobs are
 * active at once, across all workers. It runs inside the queue's lock (see limits.ts), looks at a window of
 * the next 16 × batch ready rows, ranks each group's candidates in claim order, and keeps those that fit
 * beside the group's active jobs. A group's limit is its tier's, else the default (null: no limit).
 *
 * $1 queue, $2 how many, $3 worker id, $4 min priority (null: none), $5 max priority (null: none),
 * $6 default limit (null: none), $7 tiers text[], $8 tier limits int[], $9 commit without waiting for the flush
 */
export const claimJobsGrouped = (s: string, t = `${s}.jobs`) => GROUPED(s, t, false);

/**
 * claimJobsGrouped under a worker's localGroupConcurrency too (both limits apply): the groups this loop runs
 * to their local limit are passed over, and no group gets more jobs than its local room. The local counts are
 * the loop's own, passed in: the statement counts nothing more than claimJobsGrouped does.
 *
 * $1-$9 as claimJobsGrouped, then the local limits: $10 saturated group ids text[], $11 busy group ids text[],
 * $12 the jobs of each the loop runs int[], $13 default limit (null: none), $14 tiers text[], $15 tier limits int[]
 */
export const claimJobsGroupedLocal = (s: string, t = `${s}.jobs`) => GROUPED(s, t, true);

/**
 * A group's room under a worker's localGroupConcurrency, for a candidate row `r` (group_id, group_tier): the limit
 * of the row's own tier (else the default, else none) less the jobs of its group this loop runs, whatever their
 * tiers (the busy groups' arrays). A group running a job of a tier with a low limit so still has room for its jobs
 * of a tier with a higher one (pg-boss's rule). `$n` is the first of the six local arguments (saturated, busy,
 * counts, default, tiers, limits).
 */
const LOCAL_ROOM = (r: string, n: number) => `coalesce(
      (SELECT l.lim FROM unnest($${n + 4}::text[], $${n + 5}::int[]) AS l(tier, lim) WHERE l.tier = ${r}.group_tier),
      $${n + 3}::int, 2147483647)
    - coalesce((SELECT b.n FROM unnest($${n + 1}::text[], $${n + 2}::int[]) AS b(id, n) WHERE b.id = ${r}.group_id), 0)`;

/** The group columns a local-group claim returns: the loop counts its running jobs per group by them. */
const GROUP_COLUMNS = `,
  j.group_id, j.group_tier`;

/** claimJobsGrouped, with `local`: under localGroupConcurrency too (claimJobsGroupedLocal). */
const GROUPED = (s: string, t: string, local: boolean) => `
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.group_id, j.group_tier, j.priority, j.start_after
  FROM ${t} j
  WHERE ${READY(s)}
    -- a group already at its limit is passed over here, so its backlog never fills the window
    AND (j.group_id IS NULL OR coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = j.group_tier), $6::int) IS NULL
      OR (SELECT count(*) FROM ${t} a WHERE a.queue = j.queue AND a.group_id = j.group_id AND a.state = 'active')
        < coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = j.group_tier), $6::int))${
          local
            ? `
    AND (j.group_id IS NULL OR (j.group_id <> ALL ($10::text[]) AND ${LOCAL_ROOM('j', 10)} > 0))`
            : ''
        }
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 16
), ranked AS (
  SELECT c.*,
    row_number() OVER (PARTITION BY c.group_id ORDER BY c.priority DESC, c.start_after, c.id) AS rank,
    (SELECT count(*) FROM ${t} a WHERE a.queue = c.queue AND a.group_id = c.group_id AND a.state = 'active') AS active,
    coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = c.group_tier), $6::int) AS lim
  FROM candidates c
), next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM ranked r
  JOIN ${t} j ON j.queue = r.queue AND j.id = r.id
  WHERE j.state < 'active' AND (r.group_id IS NULL OR r.lim IS NULL OR r.active + r.rank <= r.lim)${
    local
      ? `
    AND (r.group_id IS NULL OR r.rank <= ${LOCAL_ROOM('r', 10)})`
      : ''
  }
  ORDER BY r.priority DESC, r.start_after, r.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
)${CLAIM_UPDATE(s, t, '$9', local ? GROUP_COLUMNS : '')}`;

/**
 * The claim under a worker's localGroupConcurrency alone (standard queues): the plain pick, less the groups this
 * loop already runs to their local limit, and at most a group's local room of each group (ranked within a window
 * of 4 × batch rows, locked as the pick locks, like claimJobsOnePerKey's). The counts are the loop's, passed in:
 * no count of active jobs is read, so it costs what the plain claim does but for the window and the ranking.
 * A group whose backlog fills the window gets its room this claim and is passed over by the next one's pick.
 *
 * $1-$6 as claimJobs, then $7 saturated group ids text[], $8 busy group ids text[], $9 the jobs of each the loop runs
 * int[], $10 default limit (null: none), $11 tiers text[], $12 tier limits int[]
 */
export const claimJobsLocalGroups = (s: string, t = `${s}.jobs`) => `
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel, j.group_id, j.group_tier, j.priority, j.start_after
  FROM ${t} j
  WHERE ${READY(s)}
    -- a group with no room for the job's tier is passed over here, so its backlog of that tier never fills the window
    AND (j.group_id IS NULL OR (j.group_id <> ALL ($7::text[]) AND ${LOCAL_ROOM('j', 7)} > 0))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT r.queue, r.id, r.tid, r.rel FROM (
    SELECT c.*, row_number() OVER (PARTITION BY c.group_id ORDER BY c.priority DESC, c.start_after, c.id) AS rank
    FROM candidates c
  ) r
  WHERE r.group_id IS NULL OR r.rank <= ${LOCAL_ROOM('r', 7)}
  ORDER BY r.priority DESC, r.start_after, r.id
  LIMIT $2
)${CLAIM_UPDATE(s, t, '$6', GROUP_COLUMNS)}`;

// ---- arguments: each statement's $n order, written once ----

/** What one claim asks for (see claimJobs): how many, for whom, within which priorities, and how it commits. */
export interface ClaimRequest {
  queue: string;
  limit: number;
  workerId: string;
  minPriority: number | null;
  maxPriority: number | null;
  /** Commit without waiting for the WAL flush (a worker's claim). */
  asyncCommit: boolean;
}

/** The arguments of claimJobs, claimJobsOnePerKey and claimJobsKeyFifo ($1-$6). */
export function claimArgs(r: ClaimRequest): unknown[] {
  return [r.queue, r.limit, r.workerId, r.minPriority, r.maxPriority, r.asyncCommit];
}

/** The arguments of the fetch... claims ($1-$7): claimArgs' and ignoreStartAfter. */
export function fetchArgs(r: ClaimRequest, ignoreStartAfter: boolean): unknown[] {
  return [...claimArgs(r), ignoreStartAfter];
}

/** A loop's local group limits as a claim takes them (see LocalGroups.claimArgs). */
export interface LocalGroupArgs {
  /** Groups this loop runs to the highest limit any tier has: none of their jobs is claimed. */
  saturated: string[];
  /** The other groups this loop runs jobs of, and how many of each. */
  busy: string[];
  counts: number[];
  /** The limit of a group of no listed tier (null: none), and the tiers' limits. */
  default: number | null;
  tiers: string[];
  limits: number[];
}

/** The six local arguments of claimJobsLocalGroups ($7-$12) and claimJobsGroupedLocal ($10-$15). */
export function localGroupArgs(g: LocalGroupArgs): unknown[] {
  return [g.saturated, g.busy, g.counts, g.default, g.tiers, g.limits];
}

/** The arguments of claimJobsGrouped ($1-$9): a worker's group limits between the priorities and the commit. */
export function claimGroupedArgs(r: ClaimRequest, groups: { default: number | null; tiers: Record<string, number> }): unknown[] {
  const tiers = Object.entries(groups.tiers);
  return [
    r.queue,
    r.limit,
    r.workerId,
    r.minPriority,
    r.maxPriority,
    groups.default,
    tiers.map(([t]) => t),
    tiers.map(([, n]) => n),
    r.asyncCommit,
  ];
}
