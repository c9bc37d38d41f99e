-- Every SQL statement of lib/core/sql/, rendered for the schema "pgqueue". Written by `npm run sql:dump`
-- (lib/core/sql/dump.ts); do not edit: test/unit/sql-dump.spec.ts fails when it differs from the statements.
-- Each statement's text as sent, without its leading and trailing blank lines, under a header with its name.
--
-- "(per queue)": the statement reads or changes the jobs of one queue and names that queue's own table, here
-- "pgqueue".jobs_q_af67ca2fe7ffcec8 (the partition of a queue 'emails'). Built for no queue, it names
-- "pgqueue".jobs in those places and is otherwise the same (lib/core/sql/index.ts, buildStatements).

-- ==== buildStatements (lib/core/sql/index.ts): every statement the engine runs for jobs and queues ====

-- advanceSchedule
UPDATE "pgqueue".schedules SET
  next_run_on = coalesce(to_timestamp($3::float8 / 1000), 'infinity'),
  last_run_on = CASE WHEN $4::float8 IS NULL THEN last_run_on ELSE to_timestamp($4::float8 / 1000) END,
  last_job_id = CASE WHEN $4::float8 IS NULL THEN last_job_id ELSE $5::bigint END
WHERE name = $1 AND key = $2

-- allQueueNames
SELECT name FROM "pgqueue".queues ORDER BY name

-- cancelJobs (per queue)
WITH RECURSIVE cancelled AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'cancelled',
  completed_on = now(),
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state < 'completed'
RETURNING j.queue, j.id, j.state, j.singleton_key
), doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN cancelled p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE "pgqueue".jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::"pgqueue".job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) ELSE CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled'), 'on', now(), 'attempt', j.retry_count + 1) END
  FROM (
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM "pgqueue".jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM cancelled p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN "pgqueue".jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
)
SELECT cancelled.id::text FROM cancelled

-- cancelLeafJobs (per queue)
WITH cancelled AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'cancelled',
  completed_on = now(),
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state < 'completed' AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
RETURNING j.queue, j.id, j.state, j.singleton_key
)
SELECT cancelled.id::text FROM cancelled

-- claimJobs (per queue)
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= statement_timestamp()
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- claimJobsGrouped (per queue)
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.group_id, j.group_tier, j.priority, j.start_after
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= statement_timestamp()
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
    -- a group already at its limit is passed over here, so its backlog never fills the window
    AND (j.group_id IS NULL OR coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = j.group_tier), $6::int) IS NULL
      OR (SELECT count(*) FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a WHERE a.queue = j.queue AND a.group_id = j.group_id AND a.state = 'active')
        < coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = j.group_tier), $6::int))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 16
), ranked AS (
  SELECT c.*,
    row_number() OVER (PARTITION BY c.group_id ORDER BY c.priority DESC, c.start_after, c.id) AS rank,
    (SELECT count(*) FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a WHERE a.queue = c.queue AND a.group_id = c.group_id AND a.state = 'active') AS active,
    coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = c.group_tier), $6::int) AS lim
  FROM candidates c
), next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM ranked r
  JOIN "pgqueue".jobs_q_af67ca2fe7ffcec8 j ON j.queue = r.queue AND j.id = r.id
  WHERE j.state < 'active' AND (r.group_id IS NULL OR r.lim IS NULL OR r.active + r.rank <= r.lim)
  ORDER BY r.priority DESC, r.start_after, r.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $9::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- claimJobsGroupedLocal (per queue)
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.group_id, j.group_tier, j.priority, j.start_after
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= statement_timestamp()
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
    -- a group already at its limit is passed over here, so its backlog never fills the window
    AND (j.group_id IS NULL OR coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = j.group_tier), $6::int) IS NULL
      OR (SELECT count(*) FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a WHERE a.queue = j.queue AND a.group_id = j.group_id AND a.state = 'active')
        < coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = j.group_tier), $6::int))
    AND (j.group_id IS NULL OR (j.group_id <> ALL ($10::text[]) AND coalesce(
      (SELECT l.lim FROM unnest($14::text[], $15::int[]) AS l(tier, lim) WHERE l.tier = j.group_tier),
      $13::int, 2147483647)
    - coalesce((SELECT b.n FROM unnest($11::text[], $12::int[]) AS b(id, n) WHERE b.id = j.group_id), 0) > 0))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 16
), ranked AS (
  SELECT c.*,
    row_number() OVER (PARTITION BY c.group_id ORDER BY c.priority DESC, c.start_after, c.id) AS rank,
    (SELECT count(*) FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a WHERE a.queue = c.queue AND a.group_id = c.group_id AND a.state = 'active') AS active,
    coalesce((SELECT t.lim FROM unnest($7::text[], $8::int[]) AS t(tier, lim) WHERE t.tier = c.group_tier), $6::int) AS lim
  FROM candidates c
), next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM ranked r
  JOIN "pgqueue".jobs_q_af67ca2fe7ffcec8 j ON j.queue = r.queue AND j.id = r.id
  WHERE j.state < 'active' AND (r.group_id IS NULL OR r.lim IS NULL OR r.active + r.rank <= r.lim)
    AND (r.group_id IS NULL OR r.rank <= coalesce(
      (SELECT l.lim FROM unnest($14::text[], $15::int[]) AS l(tier, lim) WHERE l.tier = r.group_tier),
      $13::int, 2147483647)
    - coalesce((SELECT b.n FROM unnest($11::text[], $12::int[]) AS b(id, n) WHERE b.id = r.group_id), 0))
  ORDER BY r.priority DESC, r.start_after, r.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $9::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove,
  j.group_id, j.group_tier

-- claimJobsKeyFifo (per queue)
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= statement_timestamp()
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused) AND j.fifo_wait = 0 AND j.policy = 'key_strict_fifo'
    AND coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 b
      WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
        AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
      LIMIT 1), true)
    AND (j.state = 'retry' OR coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 e
      WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
        AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after <= statement_timestamp()
      LIMIT 1), true))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- claimJobsLocalGroups (per queue)
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel, j.group_id, j.group_tier, j.priority, j.start_after
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= statement_timestamp()
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
    -- a group with no room for the job's tier is passed over here, so its backlog of that tier never fills the window
    AND (j.group_id IS NULL OR (j.group_id <> ALL ($7::text[]) AND coalesce(
      (SELECT l.lim FROM unnest($11::text[], $12::int[]) AS l(tier, lim) WHERE l.tier = j.group_tier),
      $10::int, 2147483647)
    - coalesce((SELECT b.n FROM unnest($8::text[], $9::int[]) AS b(id, n) WHERE b.id = j.group_id), 0) > 0))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT r.queue, r.id, r.tid, r.rel FROM (
    SELECT c.*, row_number() OVER (PARTITION BY c.group_id ORDER BY c.priority DESC, c.start_after, c.id) AS rank
    FROM candidates c
  ) r
  WHERE r.group_id IS NULL OR r.rank <= coalesce(
      (SELECT l.lim FROM unnest($11::text[], $12::int[]) AS l(tier, lim) WHERE l.tier = r.group_tier),
      $10::int, 2147483647)
    - coalesce((SELECT b.n FROM unnest($8::text[], $9::int[]) AS b(id, n) WHERE b.id = r.group_id), 0)
  ORDER BY r.priority DESC, r.start_after, r.id
  LIMIT $2
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove,
  j.group_id, j.group_tier

-- claimJobsOnePerKey (per queue)
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel, j.priority, j.start_after, j.singleton_key
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= statement_timestamp()
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a
      WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy
        AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key)
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT d.queue, d.id, d.tid, d.rel FROM (
    SELECT DISTINCT ON (c.singleton_key) c.queue, c.id, c.tid, c.rel, c.priority, c.start_after
    FROM candidates c
    ORDER BY c.singleton_key, c.priority DESC, c.start_after, c.id
  ) d
  ORDER BY d.priority DESC, d.start_after, d.id
  LIMIT $2
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- claimRoom (per queue)
SELECT least(
  CASE WHEN q.concurrency_limit IS NULL THEN 2147483647
    ELSE greatest(0, q.concurrency_limit - (SELECT count(*) FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a WHERE a.queue = q.name AND a.state = 'active'))::int END,
  CASE WHEN q.rate_limit_count IS NULL THEN 2147483647
    ELSE greatest(0, q.rate_limit_count - coalesce((
      SELECT w.started FROM "pgqueue".rate_windows w
      WHERE w.queue = q.name
        AND w.window_start = to_timestamp(floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) * q.rate_limit_seconds)), 0)) END
)::int AS room
FROM "pgqueue".queues q WHERE q.name = $1

-- completeJobs (per queue)
WITH done AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'completed',
  completed_on = now(),
  output = u.output,
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $8::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active'
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND NOT (coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true))
RETURNING j.queue, j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), removed AS (
  DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j USING (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $8::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
  WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active'
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
  RETURNING j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), released AS (
  UPDATE "pgqueue".jobs j SET
    blocked_by = j.blocked_by - d.n,
    start_after = CASE WHEN j.blocked_by = d.n AND j.state = 'created' THEN statement_timestamp() ELSE j.start_after END,
    keep_until = CASE WHEN j.blocked_by = d.n AND j.state = 'created' THEN statement_timestamp() + d.retention_seconds * interval '1 second' ELSE j.keep_until END
  FROM (
    SELECT dep.child_queue, dep.child_id, count(*)::int AS n, min(q.retention_seconds) AS retention_seconds
    FROM "pgqueue".job_deps dep JOIN done p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
    JOIN "pgqueue".queues q ON q.name = dep.child_queue
    WHERE EXISTS (SELECT 1 FROM "pgqueue".job_deps x WHERE x.parent_queue = $1)
    GROUP BY dep.child_queue, dep.child_id
  ) d
  WHERE j.queue = d.child_queue AND j.id = d.child_id AND j.state IN ('created', 'cancelled') AND j.blocked_by > 0
  RETURNING j.queue, j.blocked_by, j.state
)
-- the NOTIFY for released children, once per statement (an uncorrelated subquery: an InitPlan)
SELECT done.id::text, done.claim_count, done.stamp,
  (SELECT count(pg_notify($7, r.queue)) FROM (SELECT DISTINCT queue FROM released WHERE blocked_by = 0 AND state = 'created') r) AS woke,
  (SELECT pg_notify($9::text, $1) WHERE $9::text IS NOT NULL)::text AS held
FROM done
UNION ALL
SELECT removed.id::text, removed.claim_count, removed.stamp, NULL, (SELECT pg_notify($9::text, $1) WHERE $9::text IS NOT NULL)::text AS held FROM removed

-- completeLeafJobs (per queue)
WITH done AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'completed',
  completed_on = now(),
  output = u.output,
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $7::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active'
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
RETURNING j.queue, j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
)
SELECT done.id::text, done.claim_count, done.stamp, (SELECT pg_notify($8::text, $1) WHERE $8::text IS NOT NULL)::text AS held FROM done

-- completeNonParentJobs (per queue)
WITH done AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'completed',
  completed_on = now(),
  output = u.output,
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $7::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active'
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND NOT (coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)) AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
RETURNING j.queue, j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), removed AS (
  DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j USING (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $7::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
  WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active'
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
  RETURNING j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
)
SELECT done.id::text, done.claim_count, done.stamp, (SELECT pg_notify($8::text, $1) WHERE $8::text IS NOT NULL)::text AS held FROM done
UNION ALL
SELECT removed.id::text, removed.claim_count, removed.stamp, (SELECT pg_notify($8::text, $1) WHERE $8::text IS NOT NULL)::text AS held FROM removed

-- completeQueuedJobs (per queue)
WITH done AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'completed',
  completed_on = now(),
  output = u.output,
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $8::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text IN ('created', 'retry', 'active')
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND NOT (coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true))
RETURNING j.queue, j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), removed AS (
  DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j USING (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $8::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
  WHERE j.queue = u.queue AND j.id = u.id AND j.state::text IN ('created', 'retry', 'active')
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
  RETURNING j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), released AS (
  UPDATE "pgqueue".jobs j SET
    blocked_by = j.blocked_by - d.n,
    start_after = CASE WHEN j.blocked_by = d.n AND j.state = 'created' THEN statement_timestamp() ELSE j.start_after END,
    keep_until = CASE WHEN j.blocked_by = d.n AND j.state = 'created' THEN statement_timestamp() + d.retention_seconds * interval '1 second' ELSE j.keep_until END
  FROM (
    SELECT dep.child_queue, dep.child_id, count(*)::int AS n, min(q.retention_seconds) AS retention_seconds
    FROM "pgqueue".job_deps dep JOIN done p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
    JOIN "pgqueue".queues q ON q.name = dep.child_queue
    WHERE EXISTS (SELECT 1 FROM "pgqueue".job_deps x WHERE x.parent_queue = $1)
    GROUP BY dep.child_queue, dep.child_id
  ) d
  WHERE j.queue = d.child_queue AND j.id = d.child_id AND j.state IN ('created', 'cancelled') AND j.blocked_by > 0
  RETURNING j.queue, j.blocked_by, j.state
)
-- the NOTIFY for released children, once per statement (an uncorrelated subquery: an InitPlan)
SELECT done.id::text, done.claim_count, done.stamp,
  (SELECT count(pg_notify($7, r.queue)) FROM (SELECT DISTINCT queue FROM released WHERE blocked_by = 0 AND state = 'created') r) AS woke,
  (SELECT pg_notify($9::text, $1) WHERE $9::text IS NOT NULL)::text AS held
FROM done
UNION ALL
SELECT removed.id::text, removed.claim_count, removed.stamp, NULL, (SELECT pg_notify($9::text, $1) WHERE $9::text IS NOT NULL)::text AS held FROM removed

-- completeQueuedNonParentJobs (per queue)
WITH done AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'completed',
  completed_on = now(),
  output = u.output,
  lease_until = NULL,
  heartbeat_until = NULL,
  keep_until = CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $7::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text IN ('created', 'retry', 'active')
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND NOT (coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)) AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
RETURNING j.queue, j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), removed AS (
  DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j USING (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $7::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
  WHERE j.queue = u.queue AND j.id = u.id AND j.state::text IN ('created', 'retry', 'active')
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false)
  AND j.singleton_on IS NULL AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
  RETURNING j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
)
SELECT done.id::text, done.claim_count, done.stamp, (SELECT pg_notify($8::text, $1) WHERE $8::text IS NOT NULL)::text AS held FROM done
UNION ALL
SELECT removed.id::text, removed.claim_count, removed.stamp, (SELECT pg_notify($8::text, $1) WHERE $8::text IS NOT NULL)::text AS held FROM removed

-- createQueue
WITH ins AS (
  INSERT INTO "pgqueue".queues (name, policy, partition, dead_letter, warning_queue_size, notify, retry_limit, retry_delay,
  retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds,
  concurrency_limit, rate_limit_count, rate_limit_seconds, remove_on_complete, failed_delete_after_seconds, fail_unworked_after_seconds)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
  ON CONFLICT (name) DO NOTHING
  RETURNING name, policy, partition, dead_letter, warning_queue_size, notify, retry_limit, retry_delay,
  retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds,
  concurrency_limit, rate_limit_count, rate_limit_seconds, remove_on_complete, failed_delete_after_seconds, fail_unworked_after_seconds, true AS created
)
SELECT * FROM ins
UNION ALL
SELECT name, policy, partition, dead_letter, warning_queue_size, notify, retry_limit, retry_delay,
  retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds,
  concurrency_limit, rate_limit_count, rate_limit_seconds, remove_on_complete, failed_delete_after_seconds, fail_unworked_after_seconds, false AS created FROM "pgqueue".queues WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM ins)

-- createQueuePartition
SELECT "pgqueue".create_queue_partition($1) AS table_name

-- dashboardFinished
WITH f AS MATERIALIZED (
  SELECT j.id, j.state, j.completed_on, j.last_error FROM "pgqueue".jobs j
  WHERE j.state > 'active' AND j.completed_on >= to_timestamp($1::float8 / 1000)
    AND j.completed_on < date_trunc('second', statement_timestamp())
  ORDER BY j.completed_on DESC
  LIMIT $2
)
SELECT floor(extract(epoch FROM f.completed_on))::bigint * 1000 AS second_ms,
  count(*) FILTER (WHERE f.state = 'completed')::int AS completed,
  count(*) FILTER (WHERE f.state = 'failed')::int AS failed,
  coalesce(jsonb_agg(jsonb_build_array(f.id::text, f.last_error->>'on')) FILTER (WHERE f.state <> 'failed' AND f.last_error IS NOT NULL),
    '[]') AS retried,
  (SELECT count(*) FROM f) >= $2 AS capped,
  (SELECT (extract(epoch FROM min(x.completed_on)) * 1000)::float8 FROM f x) AS oldest_ms,
  (extract(epoch FROM date_trunc('second', statement_timestamp())) * 1000)::float8 AS until_ms
FROM f
GROUP BY 1
ORDER BY 1

-- dashboardFinishes
SELECT j.id::text, j.queue, j.state::text, (extract(epoch FROM j.completed_on) * 1000)::float8 AS on_ms,
  j.last_error->'error'->>'message' AS message
FROM "pgqueue".jobs j
WHERE j.state > 'active' AND j.completed_on > to_timestamp($1::float8 / 1000)
ORDER BY j.completed_on DESC
LIMIT $2

-- dashboardJob
SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.policy, j.group_id, j.group_tier, j.blocked_by, j.heartbeat_until, j.attempts,
  (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after_ms,
  q.paused, q.concurrency_limit, q.rate_limit_count, q.rate_limit_seconds,
  CASE WHEN q.concurrency_limit IS NOT NULL AND j.state < 'active' THEN
    (SELECT count(*)::int FROM "pgqueue".jobs a WHERE a.queue = j.queue AND a.state = 'active') END AS queue_running,
  CASE WHEN q.rate_limit_count IS NOT NULL AND j.state < 'active' THEN coalesce((
    SELECT w.started FROM "pgqueue".rate_windows w
    WHERE w.queue = q.name
      AND w.window_start = to_timestamp(floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) * q.rate_limit_seconds)), 0) END
    AS window_started,
  CASE WHEN q.rate_limit_count IS NOT NULL THEN
    ((floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) + 1) * q.rate_limit_seconds * 1000)::float8 END AS window_ends_ms,
  CASE WHEN j.state < 'active' AND j.policy IN ('singleton', 'stately') THEN (
    SELECT a.id::text FROM "pgqueue".jobs a
    WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key
    LIMIT 1) END AS key_running_id,
  CASE WHEN j.state < 'active' AND j.policy = 'key_strict_fifo' THEN (
    SELECT jsonb_build_object('id', b.id::text, 'state', b.state) FROM "pgqueue".jobs b
    WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
      AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
    ORDER BY b.state DESC
    LIMIT 1) END AS key_holder,
  CASE WHEN j.state = 'created' AND j.policy = 'key_strict_fifo' THEN (
    SELECT e.id::text FROM "pgqueue".jobs e
    WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
      AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after <= statement_timestamp()
    LIMIT 1) END AS key_earlier_id,
  CASE WHEN j.state < 'active' AND j.group_id IS NOT NULL THEN
    (SELECT count(*)::int FROM "pgqueue".jobs a WHERE a.queue = j.queue AND a.group_id = j.group_id AND a.state = 'active') END AS group_running,
  -- the ready jobs ahead in claim order, as two counts whose conditions bound a walk of jobs_ready_idx each (one
  -- condition with OR could not: it would walk the rest of the queue's waiting jobs when fewer than the cap are ahead)
  CASE WHEN j.state < 'active' AND j.start_after <= statement_timestamp() THEN (
    SELECT count(*)::int FROM (
      SELECT 1 FROM "pgqueue".jobs r
      WHERE r.queue = j.queue AND r.state < 'active' AND r.priority > j.priority AND r.start_after <= statement_timestamp()
      LIMIT 1001) x) END AS ahead_higher,
  CASE WHEN j.state < 'active' AND j.start_after <= statement_timestamp() THEN (
    SELECT count(*)::int FROM (
      SELECT 1 FROM "pgqueue".jobs r
      WHERE r.queue = j.queue AND r.state < 'active' AND r.priority = j.priority AND (r.start_after, r.id) < (j.start_after, j.id)
      LIMIT 1001) x) END AS ahead_equal
FROM "pgqueue".jobs j
JOIN "pgqueue".queues q ON q.name = j.queue
WHERE j.queue = $1 AND j.id = $2::bigint

-- dashboardJobLinks
SELECT 'parent' AS kind, j.queue, j.id::text AS id, j.state
FROM (SELECT d.parent_queue, d.parent_id FROM "pgqueue".job_deps d WHERE d.child_queue = $1 AND d.child_id = $2::bigint
  LIMIT 51) d
JOIN "pgqueue".jobs j ON j.queue = d.parent_queue AND j.id = d.parent_id
UNION ALL
SELECT 'child', j.queue, j.id::text, j.state
FROM (SELECT d.child_queue, d.child_id FROM "pgqueue".job_deps d WHERE d.parent_queue = $1 AND d.parent_id = $2::bigint
  ORDER BY d.child_queue, d.child_id LIMIT 51) d
JOIN "pgqueue".jobs j ON j.queue = d.child_queue AND j.id = d.child_id
UNION ALL
(SELECT 'copy', c.queue, c.id::text, c.state FROM "pgqueue".jobs c
  WHERE c.source_name = $1 AND c.source_id = $2::bigint
  LIMIT 51)

-- dashboardLeases
SELECT j.worker_id, count(*)::int AS leases FROM "pgqueue".jobs j WHERE j.state = 'active' GROUP BY j.worker_id

-- dashboardNow
SELECT (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms

-- dashboardProblems
WITH c AS (
  SELECT p.* FROM "pgqueue".queues q
  CROSS JOIN LATERAL (
    SELECT j.queue, j.id, j.completed_on FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.state = 'failed' ORDER BY j.id DESC LIMIT $1
  ) p
  ORDER BY p.completed_on DESC
  LIMIT $1
)
SELECT j.id::text, j.queue, j.retry_count, j.last_error, (extract(epoch FROM c.completed_on) * 1000)::float8 AS on_ms
FROM c JOIN "pgqueue".jobs j ON j.queue = c.queue AND j.id = c.id AND j.state = 'failed'
ORDER BY c.completed_on DESC

-- dashboardQueues
SELECT q.name, q.policy, q.paused, q.queued_count AS counted_queued,
  w.waiting, w.ready,
  (SELECT count(*)::int FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.state = 'active') AS running,
  (extract(epoch FROM o.first_due) * 1000)::float8 AS first_due_ms,
  (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms
FROM "pgqueue".queues q
CROSS JOIN LATERAL (
  SELECT count(*)::int AS waiting, count(*) FILTER (WHERE c.start_after <= now())::int AS ready
  FROM (SELECT j.start_after FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.state < 'active' LIMIT $1 + 1) c
) w
CROSS JOIN LATERAL (
  WITH RECURSIVE levels AS (
    SELECT 1 AS n, (SELECT j.priority FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.state < 'active' ORDER BY j.priority DESC LIMIT 1) AS priority
    UNION ALL
    SELECT l.n + 1, (SELECT j.priority FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.state < 'active' AND j.priority < l.priority
      ORDER BY j.priority DESC LIMIT 1)
    FROM levels l WHERE l.priority IS NOT NULL AND l.n < 32
  )
  SELECT min((SELECT j.start_after FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.state < 'active' AND j.priority = l.priority
    ORDER BY j.start_after LIMIT 1)) AS first_due
  FROM levels l WHERE l.priority IS NOT NULL
) o
ORDER BY q.name

-- dashboardRetrying
(SELECT j.id::text, j.last_error->>'on' AS on FROM "pgqueue".jobs j
 WHERE j.state = 'retry' AND j.start_after > statement_timestamp() - interval '60 seconds' AND j.last_error IS NOT NULL
 ORDER BY j.start_after LIMIT $1)
UNION ALL
(SELECT j.id::text, j.last_error->>'on' AS on FROM "pgqueue".jobs j WHERE j.state = 'active' AND j.last_error IS NOT NULL LIMIT $1)

-- dashboardRunning
SELECT j.id::text, j.queue, j.worker_id, j.retry_count,
  (extract(epoch FROM j.started_on) * 1000)::float8 AS started_ms,
  (extract(epoch FROM j.lease_until) * 1000)::float8 AS lease_ms,
  (extract(epoch FROM j.heartbeat_until) * 1000)::float8 AS heartbeat_ms
FROM "pgqueue".jobs j
WHERE j.state = 'active'
ORDER BY j.started_on, j.id
LIMIT $1

-- dashboardSchedules
SELECT c.name, c.key, c.cron, c.tz, (extract(epoch FROM c.next_run_on) * 1000)::float8 AS next_ms,
  (extract(epoch FROM c.last_run_on) * 1000)::float8 AS last_ms, c.last_job_id::text
FROM "pgqueue".schedules c
ORDER BY c.next_run_on, c.name, c.key
LIMIT $1

-- dashboardSent
SELECT n.* FROM "pgqueue".queues q
CROSS JOIN LATERAL (
  SELECT j.id::text, j.id AS seq, j.queue, (extract(epoch FROM j.created_on) * 1000)::float8 AS on_ms
  FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.id > $1::bigint ORDER BY j.id DESC LIMIT $2
) n
ORDER BY n.seq DESC
LIMIT $2

-- dashboardStarted
SELECT j.id::text, j.queue, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_ms
FROM "pgqueue".jobs j
WHERE j.state = 'active' AND j.started_on > to_timestamp($1::float8 / 1000)
ORDER BY j.started_on DESC
LIMIT $2

-- dashboardTimings
WITH latest AS (
  SELECT j.created_on, j.start_after, j.started_on, j.completed_on
  FROM "pgqueue".jobs j
  WHERE j.state > 'active' AND j.completed_on > statement_timestamp() - interval '60 seconds'
  ORDER BY j.completed_on DESC
  LIMIT 4 * $1
), f AS (
  SELECT extract(epoch FROM l.started_on - greatest(l.created_on, l.start_after))::float8 AS wait,
    extract(epoch FROM l.completed_on - l.started_on)::float8 AS run
  FROM latest l
  WHERE l.started_on IS NOT NULL AND l.started_on >= greatest(l.created_on, l.start_after)
  ORDER BY l.completed_on DESC
  LIMIT $1
)
SELECT count(*)::int AS n,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY f.wait) AS wait_p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY f.wait) AS wait_p95,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY f.run) AS run_p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY f.run) AS run_p95
FROM f

-- dashboardWorkers
SELECT w.id, w.host, w.pid, w.version, w.loops, w.stopped, w.started_on,
  extract(epoch FROM statement_timestamp() - w.heartbeat_on)::float8 AS heartbeat_age
FROM "pgqueue".workers w
WHERE w.heartbeat_on >= now() - interval '30 seconds'
ORDER BY w.started_on, w.id

-- databaseNow
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms

-- deleteFinishedJobs
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM "pgqueue".jobs j
  WHERE j.state > 'active' AND j.keep_until < now()
    AND (j.slot_until IS NULL OR j.slot_until <= now())
    AND NOT (j.policy = 'key_strict_fifo' AND j.state = 'failed' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs w
      WHERE w.queue = j.queue AND w.singleton_key = j.singleton_key AND w.state = 'created' AND w.policy = 'key_strict_fifo'))
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".job_deps d JOIN "pgqueue".jobs c ON c.queue = d.child_queue AND c.id = d.child_id
      WHERE d.parent_queue = j.queue AND d.parent_id = j.id
        AND (c.state < 'completed' OR (j.state <> 'completed' AND c.state = 'cancelled' AND c.blocked_by > 0)))
  ORDER BY j.keep_until
  LIMIT $1
  FOR UPDATE OF j SKIP LOCKED
), gone AS (
  DELETE FROM "pgqueue".jobs j USING doomed d
  WHERE j.queue = d.queue AND j.id = d.id
  RETURNING j.queue, j.id
), links AS (
  DELETE FROM "pgqueue".job_deps dep USING gone g
  WHERE dep.parent_queue = g.queue AND dep.parent_id = g.id
)
SELECT count(*)::int AS deleted FROM gone

-- deleteJobs (per queue)
DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j USING (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u WHERE j.queue = u.queue AND j.id = u.id RETURNING j.id::text

-- deleteOldDefaultStats
DELETE FROM "pgqueue".queue_stats_default WHERE captured_on < now() - $1::float8 * interval '1 day'

-- deleteQueue
DELETE FROM "pgqueue".queues WHERE name = $1 RETURNING name

-- deleteQueueJobs
DELETE FROM "pgqueue".jobs WHERE queue = $1

-- deleteQueuedBatch
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM "pgqueue".jobs j
  WHERE j.queue = $1 AND j.id > $3::bigint AND j.id <= $4::bigint AND j.state < 'active'
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".job_deps d JOIN "pgqueue".jobs c ON c.queue = d.child_queue AND c.id = d.child_id
      WHERE d.parent_queue = j.queue AND d.parent_id = j.id AND c.state = 'cancelled' AND c.blocked_by > 0)
  ORDER BY j.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
), gone AS (
  DELETE FROM "pgqueue".jobs j USING doomed d
  WHERE j.queue = d.queue AND j.id = d.id
  RETURNING j.id
)
SELECT coalesce(array_agg(g.id::text), '{}') AS ids, (SELECT max(d.id)::text FROM doomed d) AS last_id FROM gone g

-- deleteSchedule
DELETE FROM "pgqueue".schedules WHERE name = $1 AND key = $2 RETURNING name

-- deleteStoredBatch
WITH doomed AS MATERIALIZED (
  SELECT j.queue, j.id FROM "pgqueue".jobs j
  WHERE j.queue = $1 AND j.id > $3::bigint AND j.state > 'active'
    AND (j.slot_until IS NULL OR j.slot_until <= now())
    AND NOT (j.policy = 'key_strict_fifo' AND j.state = 'failed' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs w
      WHERE w.queue = j.queue AND w.singleton_key = j.singleton_key AND w.state = 'created' AND w.policy = 'key_strict_fifo'))
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".job_deps d JOIN "pgqueue".jobs c ON c.queue = d.child_queue AND c.id = d.child_id
      WHERE d.parent_queue = j.queue AND d.parent_id = j.id
        AND (c.state < 'completed' OR (j.state <> 'completed' AND c.state = 'cancelled' AND c.blocked_by > 0)))
  ORDER BY j.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
), gone AS (
  DELETE FROM "pgqueue".jobs j USING doomed d
  WHERE j.queue = d.queue AND j.id = d.id
  RETURNING j.queue, j.id
), links AS (
  DELETE FROM "pgqueue".job_deps dep USING gone g
  WHERE dep.parent_queue = g.queue AND dep.parent_id = g.id
)
SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT max(d.id)::text FROM doomed d) AS last_id

-- deleteUndeclaredSchedules
DELETE FROM "pgqueue".schedules WHERE name = $1 AND managed AND NOT (key = ANY($2::text[])) RETURNING key

-- dropQueuePartition
SELECT "pgqueue".drop_queue_partition($1)

-- endLockWait
SELECT set_config('lock_timeout', $1::text, true)

-- enqueuedJob (per queue)
SELECT j.state::text,
  CASE WHEN j.start_after = 'infinity' THEN NULL ELSE (extract(epoch FROM j.start_after) * 1000)::float8 END AS start_ms
FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j WHERE j.queue = $1 AND j.id = $2::bigint

-- expireWaitingJobs
WITH RECURSIVE walked AS MATERIALIZED (
  SELECT j.queue, j.id FROM "pgqueue".jobs j
  WHERE (j.queue, j.id) > ($2::text, $3::bigint)
  ORDER BY j.queue, j.id
  LIMIT $1
), candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.policy, j.singleton_key, j.keep_until, j.retry_count
  FROM walked w JOIN "pgqueue".jobs j ON j.queue = w.queue AND j.id = w.id
  WHERE j.state < 'active' AND j.keep_until < now()
    AND (j.policy <> 'key_strict_fifo' OR (j.fifo_wait = 0 AND coalesce((
      SELECT false FROM "pgqueue".jobs b
      WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
        AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
      LIMIT 1), true)
    AND (j.state = 'retry' OR coalesce((
      SELECT false FROM "pgqueue".jobs e
      WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
        AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after <= statement_timestamp()
      LIMIT 1), true))))
  FOR UPDATE OF j SKIP LOCKED
), expired AS (
  SELECT c.queue, c.id, jsonb_build_object(
      'name', 'RetentionExpiredError',
      'message', format('not started before its retention ran out at %s', c.keep_until),
      'retryCount', c.retry_count) AS error
  FROM candidates c
  WHERE c.policy <> 'key_strict_fifo' OR c.id = (
    SELECT min(o.id) FROM candidates o WHERE o.queue = c.queue AND o.singleton_key = c.singleton_key AND o.policy = 'key_strict_fifo')
), ended AS (
  UPDATE "pgqueue".jobs j SET
    state = 'failed',
    completed_on = now(),
    keep_until = coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END),
    output = jsonb_build_object(
    'error', e.error,
    'errors', jsonb_path_query_array(coalesce(CASE WHEN j.source_id IS NOT NULL AND j.output IS NOT DISTINCT FROM j.source_output THEN NULL ELSE j.output END -> 'errors', '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(e.error)),
    last_error = jsonb_build_object('error', e.error, 'on', now(), 'attempt', j.retry_count + 1)
  FROM expired e
  WHERE j.queue = e.queue AND j.id = e.id AND j.state < 'active'
  RETURNING j.id, j.queue, j.state, j.start_after, j.data, j.priority, j.singleton_key, j.group_id, j.group_tier, j.created_on,
  j.retry_count, j.claim_count, j.output, j.dead_letter, j.source_root_id, j.trace_context, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), dead_lettered AS (
  INSERT INTO "pgqueue".jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter,
    source_name, source_id, source_created_on, source_retry_count, output, source_output, source_root_id, trace_context)
  SELECT q.name, q.policy, x.data, x.priority, x.singleton_key, x.group_id, x.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, x.queue, x.id, x.created_on, x.retry_count, x.output, x.output, coalesce(x.source_root_id, x.id), x.trace_context
  FROM ended x
  JOIN "pgqueue".queues q ON q.name = x.dead_letter
  WHERE x.state = 'failed'
  ON CONFLICT DO NOTHING
  RETURNING id
), doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN ended p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE "pgqueue".jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::"pgqueue".job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) ELSE CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled'), 'on', now(), 'attempt', j.retry_count + 1) END
  FROM (
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM "pgqueue".jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM ended p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN "pgqueue".jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
)
SELECT coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id::text, 'queue', r.queue)) FROM ended r), '[]'::jsonb) AS expired,
  (SELECT count(*)::int FROM walked) AS walked,
  (SELECT w.queue FROM walked w ORDER BY w.queue DESC, w.id DESC LIMIT 1) AS last_queue,
  (SELECT w.id::text FROM walked w ORDER BY w.queue DESC, w.id DESC LIMIT 1) AS last_id

-- failJobs (per queue)
WITH RECURSIVE f AS (
  SELECT j.queue, j.id, u.error,
    (j.retry_count < j.retry_limit AND NOT coalesce(u.permanent, false) AND NOT (j.policy = 'stately' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 r
      WHERE r.queue = j.queue AND r.policy = 'stately' AND r.state = 'retry'
        AND r.singleton_key IS NOT DISTINCT FROM j.singleton_key AND r.id <> j.id))) AS retrying,
    CASE WHEN u.retry_after IS NOT NULL THEN u.retry_after::float8 ELSE CASE WHEN j.retry_backoff THEN least(
        coalesce(j.retry_delay_max, 2147483647)::float8,
        greatest(j.retry_delay, 1) * (power(2, least(16, j.retry_count - j.retry_base + 1)) / 2
          + power(2, least(16, j.retry_count - j.retry_base + 1)) / 2 * random()))
      ELSE j.retry_delay::float8 END END AS delay
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  JOIN (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $5::boolean[], $6::int[], $8::int[], $10::bigint[]) AS a(id, retry_count, error, permanent, retry_after, claim_count, stamp) OFFSET 0) u
    ON j.queue = u.queue AND j.id = u.id
  WHERE j.state < 'completed'
    AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
    AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
    AND ($7::text IS NULL OR (j.worker_id = $7::text AND j.state::text = 'active')) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp)
  FOR UPDATE OF j
)
, failed AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = CASE WHEN f.retrying THEN 'retry' ELSE 'failed' END::"pgqueue".job_state,
  retry_count = j.retry_count + f.retrying::int,
  -- the delay from the statement, not from the start of its transaction (a caller's fail() with db may run late in one)
  start_after = CASE WHEN f.retrying THEN statement_timestamp() + f.delay * interval '1 second' ELSE j.start_after END,
  completed_on = CASE WHEN f.retrying THEN NULL ELSE now() END,
  keep_until = CASE WHEN f.retrying THEN CASE WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE greatest(j.keep_until, statement_timestamp() + f.delay * interval '1 second' + (j.keep_until - j.start_after)) END ELSE coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) END,
  lease_until = NULL,
  heartbeat_until = NULL,
  output = jsonb_build_object(
    'error', f.error,
    'errors', jsonb_path_query_array(coalesce(CASE WHEN j.source_id IS NOT NULL AND j.output IS NOT DISTINCT FROM j.source_output THEN NULL ELSE j.output END -> 'errors', '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(f.error)),
  last_error = jsonb_build_object('error', f.error, 'on', now(), 'attempt', j.retry_count + 1),
  attempts = CASE WHEN j.state = 'active' THEN
    jsonb_path_query_array(coalesce(j.attempts, '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(jsonb_build_object('attempt', j.retry_count + 1, 'worker', j.worker_id, 'startedOn', j.started_on,
        'endedOn', statement_timestamp(), 'name', f.error -> 'name', 'message', left(f.error ->> 'message', 2000),
        'stack', f.error -> 'stack'))
    ELSE j.attempts END
FROM f
WHERE j.queue = f.queue AND j.id = f.id
RETURNING j.id, j.queue, j.state, j.start_after, j.data, j.priority, j.singleton_key, j.group_id, j.group_tier, j.created_on,
  j.retry_count, j.claim_count, j.output, j.dead_letter, j.source_root_id, j.trace_context, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), dead_lettered AS (
  INSERT INTO "pgqueue".jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter,
    source_name, source_id, source_created_on, source_retry_count, output, source_output, source_root_id, trace_context)
  SELECT q.name, q.policy, x.data, x.priority, x.singleton_key, x.group_id, x.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, x.queue, x.id, x.created_on, x.retry_count, x.output, x.output, coalesce(x.source_root_id, x.id), x.trace_context
  FROM failed x
  JOIN "pgqueue".queues q ON q.name = x.dead_letter
  WHERE x.state = 'failed'
  ON CONFLICT DO NOTHING
  RETURNING id
), doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN failed p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE "pgqueue".jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::"pgqueue".job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) ELSE CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled'), 'on', now(), 'attempt', j.retry_count + 1) END
  FROM (
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM "pgqueue".jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM failed p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN "pgqueue".jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
)
-- a CTE is run once: per queue, one NOTIFY for the retries that may run now, one naming the delay of the earliest
-- that waits (a NOTIFY for both would hide the second's time)
, woke AS (
  SELECT pg_notify($9, CASE WHEN min(r.start_after) <= clock_timestamp() THEN r.queue
    ELSE r.queue || ' ' || ceil(extract(epoch FROM min(r.start_after) - clock_timestamp()) * 1000)::bigint END)::text AS notified
  FROM failed r WHERE r.state = 'retry' GROUP BY r.queue, r.start_after > statement_timestamp()
)
-- a CTE that only reads runs only when it is read: woke is read here, so its NOTIFYs go out
SELECT failed.id::text, failed.claim_count, failed.stamp, failed.state::text, (SELECT min(w.notified) FROM woke w) AS notified,
  -- for the worker's log: when a retry runs (seconds from now, on the database's clock), where a failure went
  CASE WHEN failed.state = 'retry' THEN greatest(0, ceil(extract(epoch FROM failed.start_after - statement_timestamp())))::int END AS retry_in,
  failed.dead_letter,
  (SELECT pg_notify($11::text, $1) WHERE $11::text IS NOT NULL)::text AS held
FROM failed

-- failLeafJobs (per queue)
WITH f AS (
  SELECT j.queue, j.id, u.error,
    (j.retry_count < j.retry_limit AND NOT coalesce(u.permanent, false) AND NOT (j.policy = 'stately' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 r
      WHERE r.queue = j.queue AND r.policy = 'stately' AND r.state = 'retry'
        AND r.singleton_key IS NOT DISTINCT FROM j.singleton_key AND r.id <> j.id))) AS retrying,
    CASE WHEN u.retry_after IS NOT NULL THEN u.retry_after::float8 ELSE CASE WHEN j.retry_backoff THEN least(
        coalesce(j.retry_delay_max, 2147483647)::float8,
        greatest(j.retry_delay, 1) * (power(2, least(16, j.retry_count - j.retry_base + 1)) / 2
          + power(2, least(16, j.retry_count - j.retry_base + 1)) / 2 * random()))
      ELSE j.retry_delay::float8 END END AS delay
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  JOIN (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $5::boolean[], $6::int[], $8::int[], $10::bigint[]) AS a(id, retry_count, error, permanent, retry_after, claim_count, stamp) OFFSET 0) u
    ON j.queue = u.queue AND j.id = u.id
  WHERE j.state < 'completed' AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
    AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
    AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
    AND ($7::text IS NULL OR (j.worker_id = $7::text AND j.state::text = 'active')) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp)
  FOR UPDATE OF j
)
, failed AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = CASE WHEN f.retrying THEN 'retry' ELSE 'failed' END::"pgqueue".job_state,
  retry_count = j.retry_count + f.retrying::int,
  -- the delay from the statement, not from the start of its transaction (a caller's fail() with db may run late in one)
  start_after = CASE WHEN f.retrying THEN statement_timestamp() + f.delay * interval '1 second' ELSE j.start_after END,
  completed_on = CASE WHEN f.retrying THEN NULL ELSE now() END,
  keep_until = CASE WHEN f.retrying THEN CASE WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE greatest(j.keep_until, statement_timestamp() + f.delay * interval '1 second' + (j.keep_until - j.start_after)) END ELSE coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) END,
  lease_until = NULL,
  heartbeat_until = NULL,
  output = jsonb_build_object(
    'error', f.error,
    'errors', jsonb_path_query_array(coalesce(CASE WHEN j.source_id IS NOT NULL AND j.output IS NOT DISTINCT FROM j.source_output THEN NULL ELSE j.output END -> 'errors', '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(f.error)),
  last_error = jsonb_build_object('error', f.error, 'on', now(), 'attempt', j.retry_count + 1),
  attempts = CASE WHEN j.state = 'active' THEN
    jsonb_path_query_array(coalesce(j.attempts, '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(jsonb_build_object('attempt', j.retry_count + 1, 'worker', j.worker_id, 'startedOn', j.started_on,
        'endedOn', statement_timestamp(), 'name', f.error -> 'name', 'message', left(f.error ->> 'message', 2000),
        'stack', f.error -> 'stack'))
    ELSE j.attempts END
FROM f
WHERE j.queue = f.queue AND j.id = f.id
RETURNING j.id, j.queue, j.state, j.start_after, j.data, j.priority, j.singleton_key, j.group_id, j.group_tier, j.created_on,
  j.retry_count, j.claim_count, j.output, j.dead_letter, j.source_root_id, j.trace_context, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), dead_lettered AS (
  INSERT INTO "pgqueue".jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter,
    source_name, source_id, source_created_on, source_retry_count, output, source_output, source_root_id, trace_context)
  SELECT q.name, q.policy, x.data, x.priority, x.singleton_key, x.group_id, x.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, x.queue, x.id, x.created_on, x.retry_count, x.output, x.output, coalesce(x.source_root_id, x.id), x.trace_context
  FROM failed x
  JOIN "pgqueue".queues q ON q.name = x.dead_letter
  WHERE x.state = 'failed'
  ON CONFLICT DO NOTHING
  RETURNING id
)
-- a CTE is run once: per queue, one NOTIFY for the retries that may run now, one naming the delay of the earliest
-- that waits (a NOTIFY for both would hide the second's time)
, woke AS (
  SELECT pg_notify($9, CASE WHEN min(r.start_after) <= clock_timestamp() THEN r.queue
    ELSE r.queue || ' ' || ceil(extract(epoch FROM min(r.start_after) - clock_timestamp()) * 1000)::bigint END)::text AS notified
  FROM failed r WHERE r.state = 'retry' GROUP BY r.queue, r.start_after > statement_timestamp()
)
-- a CTE that only reads runs only when it is read: woke is read here, so its NOTIFYs go out
SELECT failed.id::text, failed.claim_count, failed.stamp, failed.state::text, (SELECT min(w.notified) FROM woke w) AS notified,
  -- for the worker's log: when a retry runs (seconds from now, on the database's clock), where a failure went
  CASE WHEN failed.state = 'retry' THEN greatest(0, ceil(extract(epoch FROM failed.start_after - statement_timestamp())))::int END AS retry_in,
  failed.dead_letter,
  (SELECT pg_notify($11::text, $1) WHERE $11::text IS NOT NULL)::text AS held
FROM failed

-- failUnworkedJobs
WITH RECURSIVE picked AS MATERIALIZED (
  SELECT j.queue, j.id,
    (j.retry_count < j.retry_limit AND NOT (j.policy = 'stately' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs r
      WHERE r.queue = j.queue AND r.policy = 'stately' AND r.state = 'retry'
        AND r.singleton_key IS NOT DISTINCT FROM j.singleton_key AND r.id <> j.id))) AS retrying,
    CASE WHEN j.retry_backoff THEN least(
        coalesce(j.retry_delay_max, 2147483647)::float8,
        greatest(j.retry_delay, 1) * (power(2, least(16, j.retry_count - j.retry_base + 1)) / 2
          + power(2, least(16, j.retry_count - j.retry_base + 1)) / 2 * random()))
      ELSE j.retry_delay::float8 END AS delay,
    jsonb_build_object('name', 'UnworkedQueueError', 'message', $4::text, 'queue', j.queue, 'retryCount', j.retry_count) AS error
  FROM "pgqueue".jobs j
  -- due before the pass began ($5): a job a batch of this pass sent back to retry, even with no delay, is due after it,
  -- and waits for the next pass
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < $5::timestamptz
    -- checked again at each batch: the queue may have been paused, given a worker or its setting changed since
    AND EXISTS (SELECT 1 FROM "pgqueue".queues q WHERE q.name = $1 AND NOT q.paused AND q.fail_unworked_after_seconds IS NOT NULL
      AND q.unworked_since <= now() - q.fail_unworked_after_seconds * interval '1 second')
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".workers w
      WHERE w.heartbeat_on >= now() - interval '30 seconds' AND w.loops @> jsonb_build_array(jsonb_build_object('queue', $1::text)))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), failed AS (
UPDATE "pgqueue".jobs j SET
  state = CASE WHEN e.retrying THEN 'retry' ELSE 'failed' END::"pgqueue".job_state,
  retry_count = j.retry_count + e.retrying::int,
  -- the delay from the statement, not from the start of its transaction (a caller's fail() with db may run late in one)
  start_after = CASE WHEN e.retrying THEN statement_timestamp() + e.delay * interval '1 second' ELSE j.start_after END,
  completed_on = CASE WHEN e.retrying THEN NULL ELSE now() END,
  keep_until = CASE WHEN e.retrying THEN CASE WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE greatest(j.keep_until, statement_timestamp() + e.delay * interval '1 second' + (j.keep_until - j.start_after)) END ELSE coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) END,
  lease_until = NULL,
  heartbeat_until = NULL,
  output = jsonb_build_object(
    'error', e.error,
    'errors', jsonb_path_query_array(coalesce(CASE WHEN j.source_id IS NOT NULL AND j.output IS NOT DISTINCT FROM j.source_output THEN NULL ELSE j.output END -> 'errors', '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(e.error)),
  last_error = jsonb_build_object('error', e.error, 'on', now(), 'attempt', j.retry_count + 1),
  attempts = CASE WHEN j.state = 'active' THEN
    jsonb_path_query_array(coalesce(j.attempts, '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(jsonb_build_object('attempt', j.retry_count + 1, 'worker', j.worker_id, 'startedOn', j.started_on,
        'endedOn', statement_timestamp(), 'name', e.error -> 'name', 'message', left(e.error ->> 'message', 2000),
        'stack', e.error -> 'stack'))
    ELSE j.attempts END
FROM picked e
WHERE j.queue = e.queue AND j.id = e.id AND j.state::text IN ('created', 'retry')
RETURNING j.id, j.queue, j.state, j.start_after, j.data, j.priority, j.singleton_key, j.group_id, j.group_tier, j.created_on,
  j.retry_count, j.claim_count, j.output, j.dead_letter, j.source_root_id, j.trace_context, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), dead_lettered AS (
  INSERT INTO "pgqueue".jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter,
    source_name, source_id, source_created_on, source_retry_count, output, source_output, source_root_id, trace_context)
  SELECT q.name, q.policy, x.data, x.priority, x.singleton_key, x.group_id, x.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, x.queue, x.id, x.created_on, x.retry_count, x.output, x.output, coalesce(x.source_root_id, x.id), x.trace_context
  FROM failed x
  JOIN "pgqueue".queues q ON q.name = x.dead_letter
  WHERE x.state = 'failed'
  ON CONFLICT DO NOTHING
  RETURNING id
), doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN failed p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE "pgqueue".jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::"pgqueue".job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) ELSE CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled'), 'on', now(), 'attempt', j.retry_count + 1) END
  FROM (
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM "pgqueue".jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM failed p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN "pgqueue".jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
)
, woke AS (
  SELECT pg_notify($3, CASE WHEN min(r.start_after) <= clock_timestamp() THEN r.queue
    ELSE r.queue || ' ' || ceil(extract(epoch FROM min(r.start_after) - clock_timestamp()) * 1000)::bigint END)::text AS notified
  FROM failed r GROUP BY r.queue, r.state = 'retry' AND r.start_after > statement_timestamp()
)
SELECT r.id::text, r.queue, r.state::text, (SELECT min(w.notified) FROM woke w) AS notified,
  CASE WHEN r.state = 'retry' THEN greatest(0, ceil(extract(epoch FROM r.start_after - statement_timestamp())))::int END AS retry_in,
  CASE WHEN r.state = 'failed' THEN r.dead_letter END AS dead_letter
FROM failed r

-- failedSince
SELECT x.queue, sum(x.failed_delta)::int AS failed FROM "pgqueue".queue_stats x
WHERE x.delta_on > now() - $1::float8 * interval '1 minute' AND x.delta_seconds IS NOT NULL
  AND ($2::text[] IS NULL OR x.queue = ANY($2::text[]))
GROUP BY x.queue

-- fetchJobs (per queue)
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- fetchJobsByDue (per queue)
WITH soonest AS MATERIALIZED (
  SELECT j.queue, j.id, j.start_after
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
  ORDER BY j.start_after, j.id
  LIMIT $2 * 4
), next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM soonest w
  JOIN "pgqueue".jobs_q_af67ca2fe7ffcec8 j ON j.queue = w.queue AND j.id = w.id
  -- tested again on the row as locked: it may have been claimed or changed since soonest read it
  WHERE j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
  ORDER BY w.start_after, w.id
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- fetchJobsKeyFifo (per queue)
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused) AND j.fifo_wait = 0 AND j.policy = 'key_strict_fifo'
    AND coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 b
      WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
        AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
      LIMIT 1), true)
    AND (j.state = 'retry' OR coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 e
      WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
        AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after < 'infinity' AND e.blocked_by = 0 AND ($7::boolean OR e.start_after <= statement_timestamp())
      LIMIT 1), true))
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- fetchJobsKeyFifoByDue (per queue)
WITH next AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused) AND j.fifo_wait = 0 AND j.policy = 'key_strict_fifo'
    AND coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 b
      WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
        AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
      LIMIT 1), true)
    AND (j.state = 'retry' OR coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 e
      WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
        AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after < 'infinity' AND e.blocked_by = 0 AND ($7::boolean OR e.start_after <= statement_timestamp())
      LIMIT 1), true))
  ORDER BY j.start_after, j.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- fetchJobsOnePerKey (per queue)
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel, j.priority, j.start_after, j.singleton_key
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a
      WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy
        AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key)
  ORDER BY j.priority DESC, j.start_after, j.id
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT d.queue, d.id, d.tid, d.rel FROM (
    SELECT DISTINCT ON (c.singleton_key) c.queue, c.id, c.tid, c.rel, c.priority, c.start_after
    FROM candidates c
    ORDER BY c.singleton_key, c.priority DESC, c.start_after, c.id
  ) d
  ORDER BY d.priority DESC, d.start_after, d.id
  LIMIT $2
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- fetchJobsOnePerKeyByDue (per queue)
WITH candidates AS MATERIALIZED (
  SELECT j.queue, j.id, j.ctid AS tid, j.tableoid AS rel, j.priority, j.start_after, j.singleton_key
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.start_after < 'infinity' AND j.blocked_by = 0 AND (j.singleton_on IS NULL OR j.singleton_on <= statement_timestamp())
  AND ($7::boolean OR j.start_after <= statement_timestamp())
    AND j.priority >= coalesce($4::int, -2147483648) AND j.priority <= coalesce($5::int, 2147483647)
    AND NOT EXISTS (SELECT 1 FROM "pgqueue".queues pq WHERE pq.name = $1 AND pq.paused)
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 a
      WHERE a.queue = j.queue AND a.state = 'active' AND a.policy = j.policy
        AND a.singleton_key IS NOT DISTINCT FROM j.singleton_key)
  ORDER BY j.start_after, j.id
  LIMIT $2 * 4
  FOR UPDATE SKIP LOCKED
), next AS MATERIALIZED (
  SELECT d.queue, d.id, d.tid, d.rel FROM (
    SELECT DISTINCT ON (c.singleton_key) c.queue, c.id, c.tid, c.rel, c.priority, c.start_after
    FROM candidates c
    ORDER BY c.singleton_key, c.start_after, c.id
  ) d
  ORDER BY d.start_after, d.id
  LIMIT $2
)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = 'active',
  claim_count = j.claim_count + 1,
  worker_id = $3,
  started_on = statement_timestamp(),
  lease_until = statement_timestamp() + j.expire_seconds * interval '1 second',
  heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
WHERE j.ctid = ANY (ARRAY(SELECT next.tid FROM next)) AND j.tableoid = (SELECT next.rel FROM next LIMIT 1)
  AND (SELECT set_config('synchronous_commit', CASE WHEN $6::boolean THEN 'off' ELSE current_setting('synchronous_commit') END, true)) IS NOT NULL
RETURNING j.id::text, j.queue, j.data, j.priority, j.retry_count, j.claim_count, j.retry_limit, j.singleton_key, j.trace_context,
  -- times as milliseconds since the epoch: a number is far cheaper to print and to parse than a timestamp
  (extract(epoch FROM j.created_on) * 1000)::float8 AS created_on, (extract(epoch FROM j.started_on) * 1000)::float8 AS started_on,
  (extract(epoch FROM j.start_after) * 1000)::float8 AS start_after, j.expire_seconds, j.heartbeat_seconds,
  -- the attempt's stamp (started_on in microseconds), part of the worker's fence: see STAMPED in fragments.ts
  (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp,
  -- a flow parent (some job waits for it): its completion must release its children (settle.ts). A hint
  -- for the worker's choice of statement: the leaf statements check it again when they write (NO_CHILDREN).
  NOT coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true) AS parent,
  -- removeOnComplete, as the queue says at the claim; a job holding a throttle slot is kept (the slot stays taken)
  coalesce((SELECT q.remove_on_complete FROM "pgqueue".queues q WHERE q.name = $1), false) AND j.singleton_on IS NULL AS remove

-- findFailedJobs (per queue)
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
    WHERE j.queue = $1 AND j.state = 'failed' AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND $3::text IS NULL AND $4::text IS NULL
    ORDER BY j.id DESC
    LIMIT $6) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC

-- findJobs (per queue)
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
    WHERE j.queue = $1 AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND $3::text IS NULL AND $4::text IS NULL
    ORDER BY j.id DESC
    LIMIT $6) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC

-- findJobsByData (per queue)
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
    WHERE j.queue = $1 AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND $3::text IS NULL AND $4::text IS NULL AND j.data @> $8::jsonb
    ORDER BY j.id DESC
    LIMIT $6) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC

-- findJobsByDataIndexed (per queue)
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (WITH held AS MATERIALIZED (
      SELECT j.id FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
      WHERE (j.queue || '') = $1 AND (j.id + 0) < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND $3::text IS NULL AND $4::text IS NULL
        AND j.data @> $8::jsonb
    )
    SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
    WHERE j.queue = $1 AND j.id IN (SELECT h.id FROM held h ORDER BY h.id DESC LIMIT $6)
    ORDER BY j.id DESC
    LIMIT $6) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC

-- findJobsByDedupeKey (per queue)
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (SELECT * FROM (
    (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state > 'active' AND j.dedupe_key = $4::text AND ($3::text IS NULL OR j.singleton_key = $3::text)
    AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND ($8::jsonb IS NULL OR j.data @> $8::jsonb) AND ($2::"pgqueue".job_state[] IS NULL OR $2::"pgqueue".job_state[] && '{completed,cancelled,failed}'::"pgqueue".job_state[])
  ORDER BY j.id DESC LIMIT $6)
    UNION ALL (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state = 'active' AND j.dedupe_key = $4::text AND ($3::text IS NULL OR j.singleton_key = $3::text)
    AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND ($8::jsonb IS NULL OR j.data @> $8::jsonb) AND ($2::"pgqueue".job_state[] IS NULL OR $2::"pgqueue".job_state[] && '{active}'::"pgqueue".job_state[])
  ORDER BY j.id DESC LIMIT $6)
    UNION ALL (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.dedupe_key = $4::text AND ($3::text IS NULL OR j.singleton_key = $3::text)
    AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND ($8::jsonb IS NULL OR j.data @> $8::jsonb) AND ($2::"pgqueue".job_state[] IS NULL OR $2::"pgqueue".job_state[] && '{created,retry}'::"pgqueue".job_state[])
  ORDER BY j.id DESC LIMIT $6)
  ) k
  ORDER BY k.n DESC
  LIMIT $6) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC

-- findJobsBySingletonKey (per queue)
SELECT * FROM (
  SELECT g.*, sum(g.bytes) OVER (ORDER BY g.n DESC ROWS UNBOUNDED PRECEDING) - g.bytes AS bytes_before, count(*) OVER () AS found
  FROM (
    SELECT f.*, coalesce(octet_length(f.data::text), 0) + coalesce(octet_length(f.output::text), 0)
      + coalesce(octet_length(f.source_output::text), 0) + coalesce(octet_length(f.last_error::text), 0) AS bytes
    FROM (SELECT * FROM (
    (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state > 'active' AND j.singleton_key = $3::text AND ($4::text IS NULL OR j.dedupe_key = $4::text)
    AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND ($8::jsonb IS NULL OR j.data @> $8::jsonb) AND ($2::"pgqueue".job_state[] IS NULL OR $2::"pgqueue".job_state[] && '{completed,cancelled,failed}'::"pgqueue".job_state[])
  ORDER BY j.id DESC LIMIT $6)
    UNION ALL (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state = 'active' AND j.singleton_key = $3::text AND ($4::text IS NULL OR j.dedupe_key = $4::text)
    AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND ($8::jsonb IS NULL OR j.data @> $8::jsonb) AND ($2::"pgqueue".job_state[] IS NULL OR $2::"pgqueue".job_state[] && '{active}'::"pgqueue".job_state[])
  ORDER BY j.id DESC LIMIT $6)
    UNION ALL (SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.id AS n FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state < 'active' AND j.singleton_key = $3::text AND ($4::text IS NULL OR j.dedupe_key = $4::text)
    AND j.id < coalesce($5::bigint, 9223372036854775807) AND ($2::"pgqueue".job_state[] IS NULL OR j.state = ANY($2::"pgqueue".job_state[])) AND ($8::jsonb IS NULL OR j.data @> $8::jsonb) AND ($2::"pgqueue".job_state[] IS NULL OR $2::"pgqueue".job_state[] && '{created,retry}'::"pgqueue".job_state[])
  ORDER BY j.id DESC LIMIT $6)
  ) k
  ORDER BY k.n DESC
  LIMIT $6) f
  ) g
) p
WHERE p.bytes_before < $7::bigint
ORDER BY p.n DESC

-- findPendingByDedupeKey (per queue)
SELECT j.id::text FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j WHERE j.queue = $1 AND j.dedupe_key = $2 AND j.state <= 'active'

-- getBlockedKeys
SELECT DISTINCT j.singleton_key AS key FROM "pgqueue".jobs j
WHERE j.queue = $1 AND j.state IN ('retry', 'active', 'failed') AND j.policy = 'key_strict_fifo' AND j.state = 'failed'
ORDER BY 1

-- getClaimProfile
SELECT policy, (concurrency_limit IS NOT NULL OR rate_limit_count IS NOT NULL) AS limited,
  CASE WHEN partition THEN quote_ident("pgqueue".queue_partition_name(name)) ELSE 'jobs_default' END AS "jobsTable"
FROM "pgqueue".queues WHERE name = $1

-- getJobChildren (per queue)
SELECT x.* FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 me
LEFT JOIN LATERAL (
  SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error FROM "pgqueue".job_deps d
  JOIN "pgqueue".jobs j ON j.queue = d.child_queue AND j.id = d.child_id
  WHERE d.parent_queue = me.queue AND d.parent_id = me.id
) x ON true
WHERE me.queue = $1 AND me.id = $2::bigint
ORDER BY x.queue, x.id::bigint

-- getJobDetails (per queue)
SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error, j.policy, j.group_id, j.group_tier, j.singleton_on, j.slot_until,
  CASE WHEN j.state = 'created' AND j.blocked_by > 0 THEN 'parents'
    WHEN j.state = 'created' AND j.policy = 'key_strict_fifo' AND NOT (coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 b
      WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
        AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo'
      LIMIT 1), true)
    AND (j.state = 'retry' OR coalesce((
      SELECT false FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 e
      WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key AND e.id < j.id
        AND e.state = 'created' AND e.policy = 'key_strict_fifo' AND e.start_after <= statement_timestamp()
      LIMIT 1), true))) THEN 'key' END AS blocked,
  j.state < 'completed' AND coalesce((
    SELECT true FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), false) AS blocking
FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j WHERE j.queue = $1 AND j.id = $2::bigint

-- getJobParents (per queue)
SELECT x.* FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 me
LEFT JOIN LATERAL (
  SELECT j.id::text, j.queue, j.state::text, j.priority, j.data, j.output, j.singleton_key, j.dedupe_key,
  j.start_after, j.retry_count, j.claim_count, j.retry_base, j.retry_limit, j.retry_delay, j.retry_backoff, j.retry_delay_max, j.expire_seconds,
  j.heartbeat_seconds, j.delete_after_seconds, j.lease_until, j.worker_id, j.created_on, j.started_on,
  j.completed_on, j.keep_until, j.dead_letter, j.source_name, j.source_id::text, j.source_created_on,
  j.source_retry_count, j.source_output, j.source_root_id::text, j.last_error FROM "pgqueue".job_deps d
  JOIN "pgqueue".jobs j ON j.queue = d.parent_queue AND j.id = d.parent_id
  WHERE d.child_queue = me.queue AND d.child_id = me.id
) x ON true
WHERE me.queue = $1 AND me.id = $2::bigint
ORDER BY x.queue, x.id::bigint

-- getJobQueue
SELECT q.name FROM "pgqueue".queues q
WHERE EXISTS (SELECT 1 FROM "pgqueue".jobs j WHERE j.queue = q.name AND j.id = $1::bigint)
LIMIT 1

-- getJobStates (per queue)
SELECT j.id::text, j.state::text FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j JOIN (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u ON j.queue = u.queue AND j.id = u.id

-- getQueues
SELECT q.name, q.policy, q.partition, q.dead_letter, q.warning_queue_size, q.notify, q.retry_limit, q.retry_delay, q.retry_backoff, q.retry_delay_max, q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, q.retention_seconds, q.concurrency_limit, q.rate_limit_count, q.rate_limit_seconds, q.remove_on_complete, q.failed_delete_after_seconds, q.fail_unworked_after_seconds, q.created_on, q.updated_on,
  q.queued_count AS queued, q.deferred_count AS deferred, q.blocked_count AS blocked, q.ready_count AS ready,
  q.ready_oldest_seconds AS ready_oldest, q.active_count AS active, q.failed_count AS failed, q.total_count AS total,
  q.singletons_active, q.created_delta, q.completed_delta, q.failed_delta, q.delta_seconds, q.delta_on, q.wait_bins, q.run_bins,
  q.counted_on, q.paused,
  (q.ready_count > 0 AND NOT EXISTS (
    SELECT 1 FROM "pgqueue".workers w
    WHERE w.heartbeat_on >= now() - interval '30 seconds' AND w.loops @> jsonb_build_array(jsonb_build_object('queue', q.name)))) AS unworked,
  CASE WHEN q.partition THEN '"pgqueue".' || "pgqueue".queue_partition_name(q.name) ELSE '"pgqueue".jobs_default' END AS table_name
FROM "pgqueue".queues q
WHERE $1::text[] IS NULL OR q.name = ANY($1::text[])
ORDER BY q.name

-- getWorkers
SELECT w.id, w.host, w.pid, w.version, w.loops, w.stopped, w.started_on, w.heartbeat_on
FROM "pgqueue".workers w
WHERE w.heartbeat_on >= now() - interval '30 seconds'
ORDER BY w.started_on, w.id

-- heartbeatJobs (per queue)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET heartbeat_until = now() + j.heartbeat_seconds * interval '1 second'
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $5::bigint[]) AS a(id, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.claim_count = u.claim_count AND j.worker_id = $4 AND j.state::text = 'active'
  AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp)
RETURNING j.id::text, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp

-- insertJobDeps
INSERT INTO "pgqueue".job_deps (parent_queue, parent_id, child_queue, child_id)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[])

-- insertJobs
INSERT INTO "pgqueue".jobs (queue, policy, data, priority, start_after, singleton_key, dedupe_key, group_id, group_tier, blocked_by, on_parent_failure, singleton_on, slot_until, retry_limit,
  retry_delay, retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, fifo_wait, trace_context)
SELECT x.queue, x.policy, x.data, x.priority, coalesce(x.slot_start, x.start_after), x.singleton_key, x.dedupe_key, x.group_id, x.group_tier,
  x.blocked_by, x.on_parent_failure, x.singleton_on, x.singleton_on + x.throttle * interval '1 second',
  x.retry_limit, x.retry_delay, x.retry_backoff, x.retry_delay_max, x.expire_seconds, x.heartbeat_seconds, x.delete_after_seconds,
  coalesce(x.slot_start, x.start_after) + x.retention_seconds * interval '1 second', x.dead_letter,
  0, $23::text
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
    
    i.ord
  FROM "pgqueue".queues q
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
ON CONFLICT DO NOTHING
RETURNING id::text

-- insertJobsKeyed
INSERT INTO "pgqueue".jobs (queue, policy, data, priority, start_after, singleton_key, dedupe_key, group_id, group_tier, blocked_by, on_parent_failure, singleton_on, slot_until, retry_limit,
  retry_delay, retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, fifo_wait, trace_context)
SELECT x.queue, x.policy, x.data, x.priority, coalesce(x.slot_start, x.start_after), x.singleton_key, x.dedupe_key, x.group_id, x.group_tier,
  x.blocked_by, x.on_parent_failure, x.singleton_on, x.singleton_on + x.throttle * interval '1 second',
  x.retry_limit, x.retry_delay, x.retry_backoff, x.retry_delay_max, x.expire_seconds, x.heartbeat_seconds, x.delete_after_seconds,
  coalesce(x.slot_start, x.start_after) + x.retention_seconds * interval '1 second', x.dead_letter,
  CASE WHEN x.policy = 'key_strict_fifo' AND x.blocked_by = 0
      AND x.sibling_start <= greatest(coalesce(x.slot_start, x.start_after), now()) THEN 1 ELSE 0 END, $23::text
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
    min(coalesce(i.start_at, now() + coalesce(i.start_in, 0) * interval '1 second'))
      FILTER (WHERE i.dedupe_key IS NULL AND i.throttle IS NULL AND coalesce(i.blocked_by, 0) = 0)
      OVER (PARTITION BY CASE WHEN q.policy = 'key_strict_fifo' THEN i.singleton_key END ORDER BY i.ord
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS sibling_start,
    i.ord
  FROM "pgqueue".queues q
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
ON CONFLICT DO NOTHING
RETURNING id::text

-- insertJobsKeyedUnchecked
INSERT INTO "pgqueue".jobs (queue, policy, data, priority, start_after, singleton_key, dedupe_key, group_id, group_tier, blocked_by, on_parent_failure, singleton_on, slot_until, retry_limit,
  retry_delay, retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, fifo_wait, trace_context)
SELECT x.queue, x.policy, x.data, x.priority, coalesce(x.slot_start, x.start_after), x.singleton_key, x.dedupe_key, x.group_id, x.group_tier,
  x.blocked_by, x.on_parent_failure, x.singleton_on, x.singleton_on + x.throttle * interval '1 second',
  x.retry_limit, x.retry_delay, x.retry_backoff, x.retry_delay_max, x.expire_seconds, x.heartbeat_seconds, x.delete_after_seconds,
  coalesce(x.slot_start, x.start_after) + x.retention_seconds * interval '1 second', x.dead_letter,
  CASE WHEN x.policy = 'key_strict_fifo' AND x.blocked_by = 0
      AND x.sibling_start <= greatest(coalesce(x.slot_start, x.start_after), now()) THEN 1 ELSE 0 END, $23::text
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
    min(coalesce(i.start_at, now() + coalesce(i.start_in, 0) * interval '1 second'))
      FILTER (WHERE i.dedupe_key IS NULL AND i.throttle IS NULL AND coalesce(i.blocked_by, 0) = 0)
      OVER (PARTITION BY CASE WHEN q.policy = 'key_strict_fifo' THEN i.singleton_key END ORDER BY i.ord
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS sibling_start,
    i.ord
  FROM "pgqueue".queues q
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

RETURNING id::text

-- insertJobsUnchecked
INSERT INTO "pgqueue".jobs (queue, policy, data, priority, start_after, singleton_key, dedupe_key, group_id, group_tier, blocked_by, on_parent_failure, singleton_on, slot_until, retry_limit,
  retry_delay, retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, fifo_wait, trace_context)
SELECT x.queue, x.policy, x.data, x.priority, coalesce(x.slot_start, x.start_after), x.singleton_key, x.dedupe_key, x.group_id, x.group_tier,
  x.blocked_by, x.on_parent_failure, x.singleton_on, x.singleton_on + x.throttle * interval '1 second',
  x.retry_limit, x.retry_delay, x.retry_backoff, x.retry_delay_max, x.expire_seconds, x.heartbeat_seconds, x.delete_after_seconds,
  coalesce(x.slot_start, x.start_after) + x.retention_seconds * interval '1 second', x.dead_letter,
  0, $23::text
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
    
    i.ord
  FROM "pgqueue".queues q
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

RETURNING id::text

-- keepStatsPartitions
WITH made AS (
  SELECT count(*) FILTER (WHERE "pgqueue".create_stats_partition((now() AT TIME ZONE 'UTC')::date + d))::int AS n
  FROM generate_series(0, 2) d
)
SELECT (SELECT n FROM made) AS made, "pgqueue".drop_stats_partitions(now() - $1::float8 * interval '1 day') AS dropped

-- lastJobId
SELECT last_value::text AS last FROM "pgqueue".jobs_id_seq

-- listDeadLettered (per queue)
SELECT d.id::text FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 d
JOIN "pgqueue".queues back ON back.name = coalesce($4::text, d.source_name)
WHERE d.state IN ('created', 'retry', 'failed') AND d.source_name IS NOT NULL
  AND ($3::text IS NULL OR d.source_name = $3::text)
  AND d.queue = $1
ORDER BY d.id
LIMIT $2

-- listDeadLetteredByIds (per queue)
SELECT d.id::text FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 d
JOIN (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u ON d.queue = u.queue AND d.id = u.id
JOIN "pgqueue".queues back ON back.name = coalesce($5::text, d.source_name)
WHERE d.state IN ('created', 'retry', 'failed') AND d.source_name IS NOT NULL
  AND ($4::text IS NULL OR d.source_name = $4::text)
ORDER BY d.id
LIMIT $3

-- listSchedules
SELECT name, key, cron, tz, data, options, missed, managed,
  CASE WHEN next_run_on = 'infinity' THEN NULL ELSE next_run_on END AS next_run_on,
  last_run_on, last_job_id::text AS last_job_id, created_on, updated_on
FROM "pgqueue".schedules
WHERE $1::text IS NULL OR name = $1
ORDER BY name, key

-- lockDueSchedules
SELECT name, key, cron, tz, data::text AS data, options, missed,
  (extract(epoch FROM next_run_on) * 1000)::float8 AS next_ms,
  (extract(epoch FROM last_run_on) * 1000)::float8 AS last_ms,
  (extract(epoch FROM created_on) * 1000)::float8 AS created_ms,
  floor(extract(epoch FROM now()) * 1000)::float8 AS now_ms
FROM "pgqueue".schedules
WHERE next_run_on <= now()
ORDER BY next_run_on
LIMIT $1
FOR UPDATE SKIP LOCKED

-- lockQueueClaims
SELECT pg_advisory_xact_lock(1885824375, hashtext($2 || '.' || $1))

-- lockUpsertKey
SELECT current_setting('transaction_isolation') AS isolation,
  pg_advisory_xact_lock(1885824377, hashtext(length($1) || ':' || $1 || $2))::text AS locked

-- monitorQueues
WITH win AS MATERIALIZED (
  SELECT q.name, now() - interval '10 seconds' AS until, q.queued_count AS prev_queued, q.counted_on AS prev_counted_on,
    CASE WHEN $2::boolean AND q.delta_on >= now() - interval '10 seconds' - greatest(interval '2 hours', $3::float8 * 2 * interval '1 second')
      THEN q.delta_on END AS since
  FROM "pgqueue".queues q
  WHERE ($1::text[] IS NULL OR q.name = ANY($1::text[]))
    AND ($4::float8 IS NULL OR q.counted_on IS NULL OR q.counted_on <= now() - $4::float8 * interval '1 second')
), c AS MATERIALIZED (
  SELECT w.name, w.since, w.until, x.* FROM win w
  CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE j.state < 'active')::int AS queued,
      count(*) FILTER (WHERE j.state < 'active' AND j.blocked_by = 0 AND j.start_after > now())::int AS deferred,
      count(*) FILTER (WHERE j.state < 'active' AND j.blocked_by > 0)::int AS blocked,
      count(*) FILTER (WHERE j.state < 'active' AND j.blocked_by = 0 AND j.start_after <= now())::int AS ready,
      -- waited since it became due (a deferred job, a retry: at start_after), 0 when nothing waits
      coalesce(extract(epoch FROM now() - min(greatest(j.created_on, j.start_after))
        FILTER (WHERE j.state < 'active' AND j.blocked_by = 0 AND j.start_after <= now())), 0)::float8 AS ready_oldest,
      count(*) FILTER (WHERE j.state = 'active')::int AS active,
      count(*) FILTER (WHERE j.state = 'failed')::int AS failed,
      count(*)::int AS total,
      array_agg(DISTINCT j.singleton_key ORDER BY j.singleton_key)
        FILTER (WHERE j.state = 'active' AND j.policy IN ('singleton', 'stately') AND j.singleton_key IS NOT NULL) AS singletons,
      count(*) FILTER (WHERE j.created_on > w.since AND j.created_on <= w.until)::int AS created_delta,
      count(*) FILTER (WHERE j.state = 'completed' AND j.completed_on > w.since AND j.completed_on <= w.until)::int AS completed_delta,
      count(*) FILTER (WHERE j.state = 'failed' AND j.completed_on > w.since AND j.completed_on <= w.until)::int AS failed_delta
    FROM "pgqueue".jobs j WHERE j.queue = w.name
  ) x
), b AS MATERIALIZED (
  SELECT w.name, v.kind, v.bin, count(*)::int AS n
  FROM win w
  JOIN "pgqueue".jobs j ON j.queue = w.name
  CROSS JOIN LATERAL (VALUES
    ('wait', CASE WHEN extract(epoch FROM j.started_on - greatest(j.created_on, j.start_after))::float8 < 0.01 THEN 0
      ELSE least(47, 1 + floor(ln(extract(epoch FROM j.started_on - greatest(j.created_on, j.start_after))::float8 / 0.01) / ln(1.4151216555602222) + 1e-9)::int) END),
    ('run', CASE WHEN extract(epoch FROM j.completed_on - j.started_on)::float8 < 0.01 THEN 0
      ELSE least(47, 1 + floor(ln(extract(epoch FROM j.completed_on - j.started_on)::float8 / 0.01) / ln(1.4151216555602222) + 1e-9)::int) END)) v(kind, bin)
  -- an end that closed an attempt: a job failed while it waited for a retry (by hand, by retention) started last
  -- before its due time, and its wait and run would span the retry's delay
  WHERE w.since IS NOT NULL AND j.state IN ('completed', 'failed') AND j.started_on >= greatest(j.created_on, j.start_after)
    AND j.completed_on > w.since AND j.completed_on <= w.until
  GROUP BY 1, 2, 3
), counted AS (
  UPDATE "pgqueue".queues q SET
    queued_count = c.queued, deferred_count = c.deferred, blocked_count = c.blocked, ready_count = c.ready,
    active_count = c.active, failed_count = c.failed, total_count = c.total, ready_oldest_seconds = c.ready_oldest,
    singletons_active = c.singletons, counted_on = now(),
    created_delta = CASE WHEN $2 THEN c.created_delta WHEN $2 IS NULL THEN q.created_delta ELSE 0 END,
    completed_delta = CASE WHEN $2 THEN c.completed_delta WHEN $2 IS NULL THEN q.completed_delta ELSE 0 END,
    failed_delta = CASE WHEN $2 THEN c.failed_delta WHEN $2 IS NULL THEN q.failed_delta ELSE 0 END,
    delta_seconds = CASE WHEN $2 THEN extract(epoch FROM c.until - c.since)::float8 WHEN $2 IS NULL THEN q.delta_seconds END,
    delta_on = CASE WHEN $2 THEN c.until WHEN $2 IS NULL THEN q.delta_on END,
    wait_bins = CASE WHEN $2 THEN CASE WHEN c.since IS NULL THEN NULL ELSE (
      SELECT array_agg(coalesce(b.n, 0) ORDER BY g.k) FROM generate_series(0, 47) g(k)
      LEFT JOIN b ON b.name = c.name AND b.kind = 'wait' AND b.bin = g.k) END WHEN $2 IS NULL THEN q.wait_bins END,
    run_bins = CASE WHEN $2 THEN CASE WHEN c.since IS NULL THEN NULL ELSE (
      SELECT array_agg(coalesce(b.n, 0) ORDER BY g.k) FROM generate_series(0, 47) g(k)
      LEFT JOIN b ON b.name = c.name AND b.kind = 'run' AND b.bin = g.k) END WHEN $2 IS NULL THEN q.run_bins END
  FROM c
  WHERE q.name = c.name
  RETURNING q.*
), snapshot AS (
  INSERT INTO "pgqueue".queue_stats (queue, captured_on, queued_count, deferred_count, blocked_count, ready_count, active_count,
    failed_count, total_count, ready_oldest_seconds, created_delta, completed_delta, failed_delta, delta_seconds, delta_on,
    wait_bins, run_bins)
  SELECT k.name, k.counted_on, k.queued_count, k.deferred_count, k.blocked_count, k.ready_count, k.active_count,
    k.failed_count, k.total_count, k.ready_oldest_seconds, k.created_delta, k.completed_delta, k.failed_delta, k.delta_seconds,
    k.delta_on, k.wait_bins, k.run_bins
  FROM counted k WHERE $2 IS TRUE
  ON CONFLICT (queue, captured_on) DO NOTHING
)
-- the counts before this pass: a queue-size warning goes out once per crossing, whichever instance counts
SELECT k.name, k.queued_count, k.ready_count, k.warning_queue_size,
  (SELECT w.prev_queued FROM win w WHERE w.name = k.name AND w.prev_counted_on IS NOT NULL) AS prev_queued
FROM counted k ORDER BY k.name

-- nextDue (per queue)
WITH RECURSIVE bound AS (
  SELECT coalesce('epoch'::timestamptz + $2::bigint * interval '1 microsecond', '-infinity') AS since
), levels AS (
  SELECT 1 AS n, (SELECT j.priority FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j WHERE j.queue = $1 AND j.state < 'active' ORDER BY j.priority DESC LIMIT 1) AS priority
  UNION ALL
  SELECT l.n + 1, (SELECT j.priority FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j WHERE j.queue = $1 AND j.state < 'active' AND j.priority < l.priority
    ORDER BY j.priority DESC LIMIT 1)
  FROM levels l WHERE l.priority IS NOT NULL AND l.n < 32
), deferred AS (
  SELECT min((SELECT j.start_after FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
    WHERE j.queue = $1 AND j.state < 'active' AND j.priority = l.priority
      AND j.start_after > (SELECT since FROM bound) AND j.start_after < 'infinity'
    ORDER BY j.start_after LIMIT 1)) AS due
  FROM levels l WHERE l.priority IS NOT NULL
), full_window AS (
  SELECT w.window_start + q.rate_limit_seconds * interval '1 second' AS opens
  FROM "pgqueue".queues q JOIN "pgqueue".rate_windows w ON w.queue = q.name
  WHERE q.name = $1 AND w.started >= q.rate_limit_count
    AND w.window_start + q.rate_limit_seconds * interval '1 second' > (SELECT since FROM bound)
)
SELECT ceil(extract(epoch FROM least(d.due, (SELECT f.opens FROM full_window f)) - statement_timestamp()) * 1000)::float8 AS due_in_ms,
  (extract(epoch FROM statement_timestamp()) * 1000000)::bigint::text AS read_at
FROM deferred d

-- nextScheduleIn
SELECT (extract(epoch FROM min(next_run_on) - clock_timestamp()) * 1000)::float8 AS in_ms
FROM "pgqueue".schedules WHERE next_run_on <> 'infinity'

-- orphanDeletedParents
WITH RECURSIVE deleted AS (
  SELECT $1::text AS queue, x.id::bigint AS id, 'cancelled'::text AS state, NULL::text AS singleton_key
  FROM unnest($2::text[]) AS x(id)
), doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN deleted p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE "pgqueue".jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::"pgqueue".job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) ELSE CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled'), 'on', now(), 'attempt', j.retry_count + 1) END
  FROM (
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM "pgqueue".jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM deleted p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN "pgqueue".jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
), links AS (
  DELETE FROM "pgqueue".job_deps dep USING deleted g
  WHERE dep.parent_queue = g.queue AND dep.parent_id = g.id
)
SELECT count(*)::int AS orphaned FROM orphaned

-- payloadIndexed (per queue)
SELECT EXISTS (
  SELECT 1 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
  WHERE i.indrelid = '"pgqueue".jobs_q_af67ca2fe7ffcec8'::regclass AND am.amname = 'gin' AND i.indpred IS NULL AND i.indisvalid AND i.indisready
    AND pg_get_indexdef(i.indexrelid) ~ 'USING gin \(data( jsonb_path_ops| jsonb_ops)?\)( WITH \(.*\))?$'
) AS indexed

-- publishJobs
WITH keyless AS (
  SELECT q.name FROM "pgqueue".subscriptions sub JOIN "pgqueue".queues q ON q.name = sub.queue
  WHERE sub.event = $1 AND q.policy = 'key_strict_fifo' AND ($6::text[])[1] IS NULL
), published AS (
INSERT INTO "pgqueue".jobs (queue, policy, data, priority, start_after, singleton_key, dedupe_key, group_id, group_tier, blocked_by, on_parent_failure, singleton_on, slot_until, retry_limit,
  retry_delay, retry_backoff, retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, fifo_wait, trace_context)
SELECT x.queue, x.policy, x.data, x.priority, coalesce(x.slot_start, x.start_after), x.singleton_key, x.dedupe_key, x.group_id, x.group_tier,
  x.blocked_by, x.on_parent_failure, x.singleton_on, x.singleton_on + x.throttle * interval '1 second',
  x.retry_limit, x.retry_delay, x.retry_backoff, x.retry_delay_max, x.expire_seconds, x.heartbeat_seconds, x.delete_after_seconds,
  coalesce(x.slot_start, x.start_after) + x.retention_seconds * interval '1 second', x.dead_letter,
  0, $23::text
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
    
    i.ord
  FROM "pgqueue".subscriptions sub JOIN "pgqueue".queues q ON q.name = sub.queue
  -- the data travel as one JSON array: parsed once, where a jsonb[] of JSON texts needs every quote escaped
  -- by the client and every element parsed twice (array, then jsonb) by the server
  CROSS JOIN ROWS FROM (jsonb_array_elements($2::jsonb), unnest($3::int[]), unnest($4::timestamptz[]), unnest($5::int[]),
    unnest($6::text[]), unnest($7::int[]), unnest($8::int[]), unnest($9::boolean[]), unnest($10::int[]), unnest($11::int[]),
    unnest($12::int[]), unnest($13::int[]), unnest($14::int[]), unnest($15::text[]), unnest($16::text[]), unnest($17::int[]),
    unnest($18::int[]), unnest($19::text[]), unnest($20::text[]), unnest($21::int[]), unnest($22::text[]))
    WITH ORDINALITY AS i(data, priority, start_at, start_in, singleton_key, retry_limit, retry_delay, retry_backoff,
      retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, retention_seconds, dead_letter,
      dedupe_key, throttle, slot_offset, group_id, group_tier, blocked_by, on_parent_failure, ord)
  WHERE sub.event = $1 AND NOT EXISTS (SELECT 1 FROM keyless)
) x
ORDER BY x.queue
ON CONFLICT DO NOTHING
RETURNING queue, id::text)
SELECT queue, id FROM published
UNION ALL
SELECT name, NULL FROM keyless
ORDER BY 1

-- queueExists
SELECT 1 FROM "pgqueue".queues WHERE name = $1

-- queueLastId
SELECT coalesce(max(j.id), 0)::text AS last_id FROM "pgqueue".jobs j WHERE j.queue = $1

-- queuesUsingDeadLetter
SELECT name FROM "pgqueue".queues WHERE dead_letter = $1 ORDER BY name

-- readQueueStats
SELECT x.queue AS name, x.captured_on, x.queued_count, x.deferred_count, x.blocked_count, x.ready_count, x.active_count,
  x.failed_count, x.total_count, x.ready_oldest_seconds, x.created_delta, x.completed_delta, x.failed_delta, x.delta_seconds,
  x.delta_on, x.wait_bins, x.run_bins
FROM "pgqueue".queue_stats x
WHERE x.queue = $1 AND ($2::timestamptz IS NULL OR x.captured_on >= $2) AND ($3::timestamptz IS NULL OR x.captured_on <= $3)
ORDER BY x.captured_on DESC
LIMIT $4

-- reapExpiredLeases
WITH RECURSIVE expired AS MATERIALIZED (
  SELECT j.queue, j.id,
    (j.retry_count < j.retry_limit AND NOT (j.policy = 'stately' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs r
      WHERE r.queue = j.queue AND r.policy = 'stately' AND r.state = 'retry'
        AND r.singleton_key IS NOT DISTINCT FROM j.singleton_key AND r.id <> j.id))) AS retrying,
    -- the delay once per job: backoff draws a random share
    CASE WHEN j.retry_backoff THEN least(
        coalesce(j.retry_delay_max, 2147483647)::float8,
        greatest(j.retry_delay, 1) * (power(2, least(16, j.retry_count - j.retry_base + 1)) / 2
          + power(2, least(16, j.retry_count - j.retry_base + 1)) / 2 * random()))
      ELSE j.retry_delay::float8 END AS delay,
    jsonb_build_object(
      'name', 'LeaseExpiredError',
      'message', CASE WHEN j.lease_until < now()
        THEN format('lease of %s seconds ran out (worker %s)', j.expire_seconds, j.worker_id)
        ELSE format('no heartbeat for %s seconds (worker %s)', j.heartbeat_seconds, j.worker_id) END,
      'retryCount', j.retry_count) AS error
  FROM "pgqueue".jobs j
  WHERE j.state = 'active' AND (j.lease_until < now() OR j.heartbeat_until < now())
  ORDER BY j.lease_until
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), reaped AS (
UPDATE "pgqueue".jobs j SET
  state = CASE WHEN e.retrying THEN 'retry' ELSE 'failed' END::"pgqueue".job_state,
  retry_count = j.retry_count + e.retrying::int,
  -- the delay from the statement, not from the start of its transaction (a caller's fail() with db may run late in one)
  start_after = CASE WHEN e.retrying THEN statement_timestamp() + e.delay * interval '1 second' ELSE j.start_after END,
  completed_on = CASE WHEN e.retrying THEN NULL ELSE now() END,
  keep_until = CASE WHEN e.retrying THEN CASE WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE greatest(j.keep_until, statement_timestamp() + e.delay * interval '1 second' + (j.keep_until - j.start_after)) END ELSE coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) END,
  lease_until = NULL,
  heartbeat_until = NULL,
  output = jsonb_build_object(
    'error', e.error,
    'errors', jsonb_path_query_array(coalesce(CASE WHEN j.source_id IS NOT NULL AND j.output IS NOT DISTINCT FROM j.source_output THEN NULL ELSE j.output END -> 'errors', '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(e.error)),
  last_error = jsonb_build_object('error', e.error, 'on', now(), 'attempt', j.retry_count + 1),
  attempts = CASE WHEN j.state = 'active' THEN
    jsonb_path_query_array(coalesce(j.attempts, '[]'::jsonb), '$[last - 18 to last]')
      || jsonb_build_array(jsonb_build_object('attempt', j.retry_count + 1, 'worker', j.worker_id, 'startedOn', j.started_on,
        'endedOn', statement_timestamp(), 'name', e.error -> 'name', 'message', left(e.error ->> 'message', 2000),
        'stack', e.error -> 'stack'))
    ELSE j.attempts END
FROM expired e
WHERE j.queue = e.queue AND j.id = e.id AND j.state::text = 'active'
RETURNING j.id, j.queue, j.state, j.start_after, j.data, j.priority, j.singleton_key, j.group_id, j.group_tier, j.created_on,
  j.retry_count, j.claim_count, j.output, j.dead_letter, j.source_root_id, j.trace_context, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
), dead_lettered AS (
  INSERT INTO "pgqueue".jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter,
    source_name, source_id, source_created_on, source_retry_count, output, source_output, source_root_id, trace_context)
  SELECT q.name, q.policy, x.data, x.priority, x.singleton_key, x.group_id, x.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, x.queue, x.id, x.created_on, x.retry_count, x.output, x.output, coalesce(x.source_root_id, x.id), x.trace_context
  FROM reaped x
  JOIN "pgqueue".queues q ON q.name = x.dead_letter
  WHERE x.state = 'failed'
  ON CONFLICT DO NOTHING
  RETURNING id
), doomed(queue, id) AS (
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN reaped p ON dep.parent_queue = p.queue AND dep.parent_id = p.id
  WHERE p.state IN ('failed', 'cancelled')
  UNION
  SELECT dep.child_queue, dep.child_id FROM "pgqueue".job_deps dep
  JOIN doomed d ON dep.parent_queue = d.queue AND dep.parent_id = d.id
), orphaned AS (
  UPDATE "pgqueue".jobs j SET
    state = CASE WHEN d.fail THEN 'failed' ELSE 'cancelled' END::"pgqueue".job_state,
    completed_on = statement_timestamp(),
    keep_until = CASE WHEN d.fail THEN coalesce((SELECT CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
      ELSE now() + q.failed_delete_after_seconds * interval '1 second' END
    FROM "pgqueue".queues q WHERE q.name = j.queue), CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END) ELSE CASE WHEN j.delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE now() + j.delete_after_seconds * interval '1 second' END END,
    output = jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled')),
    last_error = CASE WHEN d.fail THEN jsonb_build_object('error', jsonb_build_object('name', 'ParentFailedError', 'message', 'a job it depends on failed or was cancelled'), 'on', now(), 'attempt', j.retry_count + 1) END
  FROM (
    SELECT c.queue, c.id, c.on_parent_failure IS DISTINCT FROM 'cancel' AND (c.policy <> 'key_strict_fifo' OR (
      NOT EXISTS (
        SELECT 1 FROM "pgqueue".jobs b
        WHERE b.queue = c.queue AND b.singleton_key = c.singleton_key AND b.state IN ('retry', 'active', 'failed')
          AND b.policy = 'key_strict_fifo')
      AND NOT EXISTS (SELECT 1 FROM reaped p WHERE p.queue = c.queue AND p.singleton_key = c.singleton_key AND p.state = 'failed')
      AND c.id = min(c.id) FILTER (WHERE c.on_parent_failure IS DISTINCT FROM 'cancel')
        OVER (PARTITION BY c.queue, c.singleton_key, c.policy))) AS fail
    FROM (SELECT DISTINCT queue, id FROM doomed) o
    JOIN "pgqueue".jobs c ON c.queue = o.queue AND c.id = o.id AND c.state = 'created' AND c.blocked_by > 0) d
  WHERE j.queue = d.queue AND j.id = d.id AND j.state = 'created' AND j.blocked_by > 0
  RETURNING j.id
)
, woke AS (
  SELECT pg_notify($2, CASE WHEN min(r.start_after) <= clock_timestamp() THEN r.queue
    ELSE r.queue || ' ' || ceil(extract(epoch FROM min(r.start_after) - clock_timestamp()) * 1000)::bigint END)::text AS notified
  FROM reaped r GROUP BY r.queue, r.state = 'retry' AND r.start_after > statement_timestamp()
)
SELECT r.id::text, r.queue, r.state::text, (SELECT min(w.notified) FROM woke w) AS notified,
  CASE WHEN r.state = 'retry' THEN greatest(0, ceil(extract(epoch FROM r.start_after - statement_timestamp())))::int END AS retry_in,
  CASE WHEN r.state = 'failed' THEN r.dead_letter END AS dead_letter
FROM reaped r

-- reconcileLateStats
WITH w AS MATERIALIZED (
  SELECT x.queue, x.captured_on, x.delta_on - x.delta_seconds * interval '1 second' AS since, x.delta_on AS until
  FROM "pgqueue".queues q JOIN "pgqueue".queue_stats x ON x.queue = q.name
  WHERE NOT q.remove_on_complete AND x.captured_on < now() AND x.delta_seconds IS NOT NULL
    AND x.captured_on > now() - interval '3610 seconds'
    AND x.delta_on > now() - least(3600, nullif(q.delete_after_seconds, 0), nullif(q.failed_delete_after_seconds, 0),
      q.retention_seconds) * interval '1 second'
), k AS MATERIALIZED (
  SELECT w.queue, array_agg(w.since ORDER BY w.since, w.captured_on) AS starts, array_agg(w.until ORDER BY w.since, w.captured_on) AS ends,
    array_agg(w.captured_on ORDER BY w.since, w.captured_on) AS captured, min(w.since) AS lo, max(w.until) AS hi
  FROM w GROUP BY w.queue
), j AS (
  SELECT j.queue, j.state, j.created_on, j.completed_on FROM "pgqueue".jobs j
  WHERE j.state > 'active' AND j.completed_on > (SELECT min(k.lo) FROM k) AND j.queue IN (SELECT k.queue FROM k)
  UNION ALL
  SELECT j.queue, j.state, j.created_on, j.completed_on FROM k JOIN "pgqueue".jobs j ON j.queue = k.queue
  WHERE j.state < 'active' AND j.start_after > k.lo AND j.created_on > k.lo
  UNION ALL
  SELECT j.queue, j.state, j.created_on, j.completed_on FROM k JOIN "pgqueue".jobs j ON j.queue = k.queue
  WHERE j.state = 'active' AND j.created_on > k.lo
), x AS (
  -- each row's windows: a binary search of the windows' starts (width_bucket: the last start at or before the time;
  -- a time equal to a start is the previous window's end), then both bounds checked, so that a time between two
  -- windows, or before the first, has none. OFFSET 0 keeps each search done once per row (a flattened subquery would
  -- repeat it in every expression that reads it).
  SELECT j.queue, j.state,
    CASE WHEN a.ci >= 1 AND j.created_on > k.starts[a.ci] AND j.created_on <= k.ends[a.ci] THEN a.ci END AS ci,
    CASE WHEN a.di >= 1 AND j.completed_on > k.starts[a.di] AND j.completed_on <= k.ends[a.di] THEN a.di END AS di
  FROM j JOIN k ON k.queue = j.queue
  CROSS JOIN LATERAL (SELECT width_bucket(j.created_on, k.starts) AS cb, width_bucket(j.completed_on, k.starts) AS db OFFSET 0) b
  CROSS JOIN LATERAL (SELECT b.cb - (j.created_on = k.starts[b.cb])::int AS ci, b.db - (j.completed_on = k.starts[b.db])::int AS di
    OFFSET 0) a
), g AS (
  SELECT x.queue, x.ci, x.di, x.state, count(*)::int AS n FROM x
  WHERE x.ci IS NOT NULL OR (x.di IS NOT NULL AND x.state IN ('completed', 'failed'))
  GROUP BY 1, 2, 3, 4
), n AS (
  SELECT u.queue, k.captured[u.i] AS captured_on, sum(u.c)::int AS created, sum(u.d)::int AS completed, sum(u.f)::int AS failed
  FROM (
    SELECT g.queue, g.ci AS i, g.n AS c, 0 AS d, 0 AS f FROM g WHERE g.ci IS NOT NULL
    UNION ALL
    SELECT g.queue, g.di, 0, CASE WHEN g.state = 'completed' THEN g.n ELSE 0 END, CASE WHEN g.state = 'failed' THEN g.n ELSE 0 END
    FROM g WHERE g.di IS NOT NULL AND g.state IN ('completed', 'failed')
  ) u JOIN k ON k.queue = u.queue
  GROUP BY 1, 2
), raised AS (
  UPDATE "pgqueue".queue_stats x SET created_delta = greatest(x.created_delta, n.created),
    completed_delta = greatest(x.completed_delta, n.completed), failed_delta = greatest(x.failed_delta, n.failed)
  FROM n
  WHERE x.queue = n.queue AND x.captured_on = n.captured_on AND x.captured_on > now() - interval '3610 seconds'
    AND (n.created > x.created_delta OR n.completed > x.completed_delta OR n.failed > x.failed_delta)
  RETURNING 1
)
SELECT count(*)::int AS raised FROM raised

-- recordStarts
INSERT INTO "pgqueue".rate_windows AS w (queue, window_start, started)
SELECT q.name, to_timestamp(floor(extract(epoch FROM statement_timestamp()) / q.rate_limit_seconds) * q.rate_limit_seconds), $2
FROM "pgqueue".queues q WHERE q.name = $1 AND q.rate_limit_count IS NOT NULL
ON CONFLICT (queue) DO UPDATE SET
  started = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.started + EXCLUDED.started ELSE EXCLUDED.started END,
  window_start = EXCLUDED.window_start
WHERE EXCLUDED.window_start >= w.window_start

-- redriveJob (per queue)
WITH d AS (
  SELECT d.queue, d.id, d.data, d.priority, d.singleton_key, d.group_id, d.group_tier, d.source_name, d.source_id, d.source_root_id,
    d.trace_context
  FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 d
  WHERE d.queue = $1 AND d.id = $2 AND d.state IN ('created', 'retry', 'failed') AND d.source_name IS NOT NULL
  FOR UPDATE OF d SKIP LOCKED
), inserted AS (
  INSERT INTO "pgqueue".jobs (queue, policy, data, priority, singleton_key, group_id, group_tier, retry_limit, retry_delay, retry_backoff,
    retry_delay_max, expire_seconds, heartbeat_seconds, delete_after_seconds, keep_until, dead_letter, source_root_id, trace_context)
  SELECT q.name, q.policy, d.data, d.priority, d.singleton_key, d.group_id, d.group_tier, q.retry_limit, q.retry_delay, q.retry_backoff,
    q.retry_delay_max,
    q.expire_seconds, q.heartbeat_seconds, q.delete_after_seconds, now() + q.retention_seconds * interval '1 second',
    q.dead_letter, coalesce(d.source_root_id, d.source_id), d.trace_context
  FROM d
  JOIN "pgqueue".queues q ON q.name = coalesce($3::text, d.source_name)
  -- a key_strict_fifo queue takes no job without a key (as send refuses it): such a job stays where it is
  WHERE q.policy <> 'key_strict_fifo' OR d.singleton_key IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING id
), removed AS (
  DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 x USING d
  WHERE x.queue = d.queue AND x.id = d.id AND EXISTS (SELECT 1 FROM inserted)
  RETURNING x.id
)
SELECT inserted.id::text FROM inserted

-- refreshWorker
WITH gone AS (
  DELETE FROM "pgqueue".workers w WHERE NOT w.heartbeat_on >= now() - interval '30 seconds' AND w.id <> $1
)
INSERT INTO "pgqueue".workers AS w (id, host, pid, version, loops, stopped) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
ON CONFLICT (id) DO UPDATE SET loops = excluded.loops, stopped = excluded.stopped, heartbeat_on = now()
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS db_ms

-- rekeyJob (per queue)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET id = $3::bigint WHERE j.queue = $1 AND j.id = $2::bigint RETURNING j.id::text

-- releaseJobs (per queue)
WITH released AS (
  UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
    state = CASE
      WHEN j.policy = 'short' THEN 'retry'
      WHEN j.policy = 'stately' AND NOT NOT EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 o
      WHERE o.queue = j.queue AND o.policy = 'stately' AND o.state = 'created'
        AND o.singleton_key IS NOT DISTINCT FROM j.singleton_key AND o.id <> j.id) THEN 'retry'
      WHEN j.policy = 'stately' THEN 'created'
      WHEN j.retry_count = 0 THEN 'created'
      ELSE 'retry' END::"pgqueue".job_state,
    worker_id = NULL,
    started_on = NULL,
    lease_until = NULL,
    heartbeat_until = NULL
  FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $6::bigint[]) AS a(id, claim_count, stamp) OFFSET 0) u
  WHERE j.queue = u.queue AND j.id = u.id AND j.claim_count = u.claim_count AND j.worker_id = $4 AND j.state::text = 'active'
    AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND (NOT (j.policy = 'stately' AND EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 r
      WHERE r.queue = j.queue AND r.policy = 'stately' AND r.state = 'retry'
        AND r.singleton_key IS NOT DISTINCT FROM j.singleton_key AND r.id <> j.id)) OR NOT EXISTS (
      SELECT 1 FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 o
      WHERE o.queue = j.queue AND o.policy = 'stately' AND o.state = 'created'
        AND o.singleton_key IS NOT DISTINCT FROM j.singleton_key AND o.id <> j.id))
  RETURNING j.id
)
SELECT released.id::text, pg_notify($5, $1)::text AS notified FROM released

-- releaseUpsertSavepoint
RELEASE SAVEPOINT pgqueue_upsert

-- removeLeafJobs (per queue)
WITH removed AS (
DELETE FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j USING (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[], $4::jsonb[], $6::int[], $7::bigint[]) AS a(id, retry_count, output, claim_count, stamp) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active'
  AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
  AND (u.claim_count IS NULL OR j.claim_count = u.claim_count)
  AND ($5::text IS NULL OR j.worker_id = $5::text) AND (u.stamp IS NULL OR (extract(epoch FROM j.started_on) * 1000000)::bigint = u.stamp) AND coalesce((SELECT false FROM "pgqueue".job_deps d WHERE d.parent_queue = j.queue AND d.parent_id = j.id LIMIT 1), true)
RETURNING j.id, j.claim_count, (extract(epoch FROM j.started_on) * 1000000)::bigint::text AS stamp
)
SELECT removed.id::text, removed.claim_count, removed.stamp, (SELECT pg_notify($8::text, $1) WHERE $8::text IS NOT NULL)::text AS held FROM removed

-- removeWorker
DELETE FROM "pgqueue".workers WHERE id = $1

-- repairFifoMarks
WITH RECURSIVE keys(queue, k, n) AS (
  (SELECT j.queue, j.singleton_key, 1 FROM "pgqueue".jobs j
   WHERE j.state = 'created' AND j.policy = 'key_strict_fifo' AND (j.queue, j.singleton_key) > ($1::text, $2::text)
   ORDER BY j.queue, j.singleton_key LIMIT 1)
  UNION ALL
  SELECT nxt.queue, nxt.singleton_key, keys.n + 1 FROM keys
  CROSS JOIN LATERAL (
    SELECT j.queue, j.singleton_key FROM "pgqueue".jobs j
    WHERE j.state = 'created' AND j.policy = 'key_strict_fifo' AND (j.queue, j.singleton_key) > (keys.queue, keys.k)
    ORDER BY j.queue, j.singleton_key LIMIT 1
  ) nxt
  WHERE keys.n < $3
), heads AS (
  SELECT keys.queue, keys.k, first.id, first.fifo_wait FROM keys
  CROSS JOIN LATERAL (
    SELECT f.id, f.fifo_wait FROM "pgqueue".jobs f
    WHERE f.queue = keys.queue AND f.singleton_key = keys.k AND f.state = 'created' AND f.policy = 'key_strict_fifo'
    ORDER BY f.id LIMIT 1
  ) first
), unstuck AS (
  UPDATE "pgqueue".jobs j SET fifo_wait = 0
  FROM heads h
  WHERE h.fifo_wait > 0 AND j.queue = h.queue AND j.id = h.id AND j.state = 'created' AND j.fifo_wait > 0
    AND NOT EXISTS (
      SELECT 1 FROM "pgqueue".jobs b
      WHERE b.queue = h.queue AND b.singleton_key = h.k AND b.state IN ('retry', 'active', 'failed') AND b.policy = 'key_strict_fifo')
  RETURNING j.id
)
SELECT (SELECT count(*)::int FROM unstuck) AS unstuck,
  (SELECT count(*)::int FROM keys) AS walked,
  (SELECT k.queue FROM keys k ORDER BY k.n DESC LIMIT 1) AS last_queue,
  (SELECT k.k FROM keys k ORDER BY k.n DESC LIMIT 1) AS last_key

-- resumeJobs (per queue)
WITH resumed AS (
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
  state = CASE WHEN j.retry_count = 0 THEN 'created' ELSE 'retry' END::"pgqueue".job_state,
  completed_on = NULL,
  start_after = CASE WHEN j.blocked_by = 0 AND j.start_after = 'infinity' THEN now() ELSE j.start_after END,
  keep_until = greatest(CASE WHEN j.blocked_by = 0 AND j.start_after = 'infinity' THEN now() ELSE j.start_after END, now()) + q.retention_seconds * interval '1 second'
FROM (SELECT q.retention_seconds FROM "pgqueue".queues q WHERE q.name = $1) q, (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state = 'cancelled'
RETURNING j.id, j.start_after
)
-- a CTE is run once: one NOTIFY for the jobs that may run now, one naming the delay of the earliest that waits
, woke AS (
  SELECT pg_notify($3, CASE WHEN min(r.start_after) <= clock_timestamp() THEN $1
    ELSE $1 || ' ' || ceil(extract(epoch FROM min(r.start_after) - clock_timestamp()) * 1000)::bigint END)::text AS notified
  FROM resumed r WHERE r.start_after < 'infinity' GROUP BY r.start_after > now()
)
SELECT resumed.id::text, (SELECT min(w.notified) FROM woke w) AS notified FROM resumed

-- retryJobs (per queue)
WITH target AS (
  SELECT j.queue, j.id, j.state FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j JOIN (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[]) AS a(id) OFFSET 0) u ON j.queue = u.queue AND j.id = u.id
  FOR UPDATE OF j
), verdict AS (
  SELECT count(*) = cardinality($2::bigint[]) AND coalesce(bool_and(t.state = 'failed'), false) AS ok FROM target t
), retried AS (
  UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
    state = 'retry',
    retry_count = j.retry_count + 1,
    retry_base = j.retry_count + 1,
    retry_limit = j.retry_count + 1 + (j.retry_limit - j.retry_base),
    start_after = now(),
    completed_on = NULL,
    keep_until = now() + q.retention_seconds * interval '1 second'
  FROM target t, verdict v, (SELECT q.retention_seconds FROM "pgqueue".queues q WHERE q.name = $1) q
  WHERE v.ok AND j.queue = t.queue AND j.id = t.id
  RETURNING j.id
)
SELECT retried.id::text, pg_notify($3, $1)::text AS notified FROM retried

-- rollbackUpsertSavepoint
ROLLBACK TO SAVEPOINT pgqueue_upsert

-- setDdlLockTimeout
SET LOCAL lock_timeout = '5s'

-- setLockWait
SELECT c.setting AS was,
  set_config('lock_timeout', (CASE WHEN c.setting::int = 0 THEN $1::int ELSE least(c.setting::int, $1::int) END)::text, true)
FROM pg_settings c WHERE c.name = 'lock_timeout'

-- setPassSettings
SELECT set_config('statement_timeout', $1::text, true), set_config('jit', 'off', true)

-- setQueuePaused
UPDATE "pgqueue".queues SET paused = $2, updated_on = now() WHERE name = $1
RETURNING name, (SELECT pg_notify($3::text, $1) WHERE NOT $2)::text AS woke

-- snapshotSecondsAgo
SELECT extract(epoch FROM now() - max(x.captured_on))::float8 AS seconds FROM "pgqueue".queue_stats x WHERE x.queue = $1

-- subscribeQueue
WITH q AS (SELECT name FROM "pgqueue".queues WHERE name = $2),
added AS (
  INSERT INTO "pgqueue".subscriptions (event, queue) SELECT $1, q.name FROM q
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM q) AS queue_exists, EXISTS (SELECT 1 FROM added) AS added

-- takeMaintenanceTurn
INSERT INTO "pgqueue".maintenance AS m (task, last_run_on) VALUES ($1, now())
ON CONFLICT (task) DO UPDATE SET last_run_on = now()
  WHERE m.last_run_on <= now() - $2::float8 * interval '1 second'
RETURNING m.task

-- touchJobs (per queue)
UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET heartbeat_until = statement_timestamp() + j.heartbeat_seconds * interval '1 second'
FROM (SELECT $1::text AS queue, a.* FROM unnest($2::bigint[], $3::int[]) AS a(id, retry_count) OFFSET 0) u
WHERE j.queue = u.queue AND j.id = u.id AND j.state::text = 'active' AND (u.retry_count IS NULL OR j.retry_count = u.retry_count)
RETURNING j.id::text

-- tryMaintenanceLock
SELECT pg_try_advisory_xact_lock(1885824374, hashtext($1)) AS locked

-- tryMonitorLock
SELECT pg_try_advisory_xact_lock(1885824376, hashtext($1)) AS locked

-- unsubscribeQueue
DELETE FROM "pgqueue".subscriptions WHERE event = $1 AND queue = $2 RETURNING 1 AS removed

-- updateJobById (per queue)
WITH target AS (
  SELECT j.id, j.blocked_by FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state IN ('created', 'retry') AND j.id = $2::bigint
  FOR NO KEY UPDATE OF j
), verdict AS (
  SELECT NOT EXISTS (SELECT 1 FROM target x WHERE x.blocked_by > 0)
    OR NOT ($4::text[] && ARRAY['startAfter', 'retentionSeconds']) AS ok
), changed AS (
  UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
    data = CASE WHEN 'data' = ANY ($4::text[]) THEN nullif($5::jsonb, 'null'::jsonb) ELSE j.data END,
    priority = CASE WHEN 'priority' = ANY ($4::text[]) THEN $6::int ELSE j.priority END,
    start_after = CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END,
    keep_until = CASE WHEN 'retentionSeconds' = ANY ($4::text[]) THEN CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + $16::int * interval '1 second'
      WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + (j.keep_until - j.start_after) END,
    retry_limit = CASE WHEN 'retryLimit' = ANY ($4::text[]) THEN j.retry_base + $9::int ELSE j.retry_limit END,
    retry_delay = CASE WHEN 'retryDelay' = ANY ($4::text[]) THEN $10::int ELSE j.retry_delay END,
    retry_backoff = CASE WHEN 'retryBackoff' = ANY ($4::text[]) THEN $11::boolean ELSE j.retry_backoff END,
    retry_delay_max = CASE WHEN 'retryDelayMax' = ANY ($4::text[]) THEN coalesce($12::int, q.retry_delay_max) ELSE j.retry_delay_max END,
    expire_seconds = CASE WHEN 'expireInSeconds' = ANY ($4::text[]) THEN $13::int ELSE j.expire_seconds END,
    heartbeat_seconds = CASE WHEN 'heartbeatSeconds' = ANY ($4::text[]) THEN coalesce($14::int, q.heartbeat_seconds) ELSE j.heartbeat_seconds END,
    delete_after_seconds = CASE WHEN 'deleteAfterSeconds' = ANY ($4::text[]) THEN $15::int ELSE j.delete_after_seconds END,
    dead_letter = CASE WHEN 'deadLetter' = ANY ($4::text[]) THEN $17::text ELSE j.dead_letter END,
    group_id = CASE WHEN 'group' = ANY ($4::text[]) THEN $18::text ELSE j.group_id END,
    group_tier = CASE WHEN 'group' = ANY ($4::text[]) THEN $19::text ELSE j.group_tier END
  FROM target x
  CROSS JOIN verdict v
  CROSS JOIN (SELECT q.retry_delay_max, q.heartbeat_seconds FROM "pgqueue".queues q WHERE q.name = $1) q
  WHERE v.ok AND j.queue = $1 AND j.id = x.id
  RETURNING j.id, j.start_after
), woke AS (
  SELECT pg_notify($3, CASE WHEN w.at <= clock_timestamp() THEN $1
    ELSE $1 || ' ' || ceil(extract(epoch FROM w.at - clock_timestamp()) * 1000)::bigint END)::text AS notified FROM (
    SELECT min(c.start_after) AS at FROM changed c
    WHERE 'startAfter' = ANY ($4::text[]) AND c.start_after < 'infinity'
    GROUP BY c.start_after > now()
    UNION ALL
    SELECT now() WHERE 'startAfter' = ANY ($4::text[]) AND EXISTS (SELECT 1 FROM changed)
      AND (SELECT q.policy FROM "pgqueue".queues q WHERE q.name = $1) = 'key_strict_fifo'
  ) w
  WHERE (SELECT q.notify FROM "pgqueue".queues q WHERE q.name = $1)
)
SELECT c.id::text, false AS blocked, (SELECT min(w.notified) FROM woke w) AS notified FROM changed c
UNION ALL
SELECT x.id::text, true, NULL FROM target x, verdict v WHERE NOT v.ok AND x.blocked_by > 0

-- updateJobsByKey (per queue)
WITH target AS (
  SELECT j.id, j.blocked_by FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state IN ('created', 'retry') AND j.singleton_key = $2::text ORDER BY j.id
  FOR NO KEY UPDATE OF j
), verdict AS (
  SELECT NOT EXISTS (SELECT 1 FROM target x WHERE x.blocked_by > 0)
    OR NOT ($4::text[] && ARRAY['startAfter', 'retentionSeconds']) AS ok
), changed AS (
  UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
    data = CASE WHEN 'data' = ANY ($4::text[]) THEN nullif($5::jsonb, 'null'::jsonb) ELSE j.data END,
    priority = CASE WHEN 'priority' = ANY ($4::text[]) THEN $6::int ELSE j.priority END,
    start_after = CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END,
    keep_until = CASE WHEN 'retentionSeconds' = ANY ($4::text[]) THEN CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + $16::int * interval '1 second'
      WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + (j.keep_until - j.start_after) END,
    retry_limit = CASE WHEN 'retryLimit' = ANY ($4::text[]) THEN j.retry_base + $9::int ELSE j.retry_limit END,
    retry_delay = CASE WHEN 'retryDelay' = ANY ($4::text[]) THEN $10::int ELSE j.retry_delay END,
    retry_backoff = CASE WHEN 'retryBackoff' = ANY ($4::text[]) THEN $11::boolean ELSE j.retry_backoff END,
    retry_delay_max = CASE WHEN 'retryDelayMax' = ANY ($4::text[]) THEN coalesce($12::int, q.retry_delay_max) ELSE j.retry_delay_max END,
    expire_seconds = CASE WHEN 'expireInSeconds' = ANY ($4::text[]) THEN $13::int ELSE j.expire_seconds END,
    heartbeat_seconds = CASE WHEN 'heartbeatSeconds' = ANY ($4::text[]) THEN coalesce($14::int, q.heartbeat_seconds) ELSE j.heartbeat_seconds END,
    delete_after_seconds = CASE WHEN 'deleteAfterSeconds' = ANY ($4::text[]) THEN $15::int ELSE j.delete_after_seconds END,
    dead_letter = CASE WHEN 'deadLetter' = ANY ($4::text[]) THEN $17::text ELSE j.dead_letter END,
    group_id = CASE WHEN 'group' = ANY ($4::text[]) THEN $18::text ELSE j.group_id END,
    group_tier = CASE WHEN 'group' = ANY ($4::text[]) THEN $19::text ELSE j.group_tier END
  FROM target x
  CROSS JOIN verdict v
  CROSS JOIN (SELECT q.retry_delay_max, q.heartbeat_seconds FROM "pgqueue".queues q WHERE q.name = $1) q
  WHERE v.ok AND j.queue = $1 AND j.id = x.id
  RETURNING j.id, j.start_after
), woke AS (
  SELECT pg_notify($3, CASE WHEN w.at <= clock_timestamp() THEN $1
    ELSE $1 || ' ' || ceil(extract(epoch FROM w.at - clock_timestamp()) * 1000)::bigint END)::text AS notified FROM (
    SELECT min(c.start_after) AS at FROM changed c
    WHERE 'startAfter' = ANY ($4::text[]) AND c.start_after < 'infinity'
    GROUP BY c.start_after > now()
    UNION ALL
    SELECT now() WHERE 'startAfter' = ANY ($4::text[]) AND EXISTS (SELECT 1 FROM changed)
      AND (SELECT q.policy FROM "pgqueue".queues q WHERE q.name = $1) = 'key_strict_fifo'
  ) w
  WHERE (SELECT q.notify FROM "pgqueue".queues q WHERE q.name = $1)
)
SELECT c.id::text, false AS blocked, (SELECT min(w.notified) FROM woke w) AS notified FROM changed c
UNION ALL
SELECT x.id::text, true, NULL FROM target x, verdict v WHERE NOT v.ok AND x.blocked_by > 0

-- updateNewestByKey (per queue)
WITH target AS (
  SELECT j.id, j.blocked_by FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state IN ('created', 'retry') AND j.singleton_key = $2::text ORDER BY j.id DESC LIMIT 1
  FOR NO KEY UPDATE OF j
), verdict AS (
  SELECT NOT EXISTS (SELECT 1 FROM target x WHERE x.blocked_by > 0)
    OR NOT ($4::text[] && ARRAY['startAfter', 'retentionSeconds']) AS ok
), changed AS (
  UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
    data = CASE WHEN 'data' = ANY ($4::text[]) THEN nullif($5::jsonb, 'null'::jsonb) ELSE j.data END,
    priority = CASE WHEN 'priority' = ANY ($4::text[]) THEN $6::int ELSE j.priority END,
    start_after = CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END,
    keep_until = CASE WHEN 'retentionSeconds' = ANY ($4::text[]) THEN CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + $16::int * interval '1 second'
      WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + (j.keep_until - j.start_after) END,
    retry_limit = CASE WHEN 'retryLimit' = ANY ($4::text[]) THEN j.retry_base + $9::int ELSE j.retry_limit END,
    retry_delay = CASE WHEN 'retryDelay' = ANY ($4::text[]) THEN $10::int ELSE j.retry_delay END,
    retry_backoff = CASE WHEN 'retryBackoff' = ANY ($4::text[]) THEN $11::boolean ELSE j.retry_backoff END,
    retry_delay_max = CASE WHEN 'retryDelayMax' = ANY ($4::text[]) THEN coalesce($12::int, q.retry_delay_max) ELSE j.retry_delay_max END,
    expire_seconds = CASE WHEN 'expireInSeconds' = ANY ($4::text[]) THEN $13::int ELSE j.expire_seconds END,
    heartbeat_seconds = CASE WHEN 'heartbeatSeconds' = ANY ($4::text[]) THEN coalesce($14::int, q.heartbeat_seconds) ELSE j.heartbeat_seconds END,
    delete_after_seconds = CASE WHEN 'deleteAfterSeconds' = ANY ($4::text[]) THEN $15::int ELSE j.delete_after_seconds END,
    dead_letter = CASE WHEN 'deadLetter' = ANY ($4::text[]) THEN $17::text ELSE j.dead_letter END,
    group_id = CASE WHEN 'group' = ANY ($4::text[]) THEN $18::text ELSE j.group_id END,
    group_tier = CASE WHEN 'group' = ANY ($4::text[]) THEN $19::text ELSE j.group_tier END
  FROM target x
  CROSS JOIN verdict v
  CROSS JOIN (SELECT q.retry_delay_max, q.heartbeat_seconds FROM "pgqueue".queues q WHERE q.name = $1) q
  WHERE v.ok AND j.queue = $1 AND j.id = x.id
  RETURNING j.id, j.start_after
), woke AS (
  SELECT pg_notify($3, CASE WHEN w.at <= clock_timestamp() THEN $1
    ELSE $1 || ' ' || ceil(extract(epoch FROM w.at - clock_timestamp()) * 1000)::bigint END)::text AS notified FROM (
    SELECT min(c.start_after) AS at FROM changed c
    WHERE 'startAfter' = ANY ($4::text[]) AND c.start_after < 'infinity'
    GROUP BY c.start_after > now()
    UNION ALL
    SELECT now() WHERE 'startAfter' = ANY ($4::text[]) AND EXISTS (SELECT 1 FROM changed)
      AND (SELECT q.policy FROM "pgqueue".queues q WHERE q.name = $1) = 'key_strict_fifo'
  ) w
  WHERE (SELECT q.notify FROM "pgqueue".queues q WHERE q.name = $1)
)
SELECT c.id::text, false AS blocked, (SELECT min(w.notified) FROM woke w) AS notified FROM changed c
UNION ALL
SELECT x.id::text, true, NULL FROM target x, verdict v WHERE NOT v.ok AND x.blocked_by > 0

-- updateOldestByKey (per queue)
WITH target AS (
  SELECT j.id, j.blocked_by FROM "pgqueue".jobs_q_af67ca2fe7ffcec8 j
  WHERE j.queue = $1 AND j.state IN ('created', 'retry') AND j.singleton_key = $2::text ORDER BY j.id LIMIT 1
  FOR NO KEY UPDATE OF j
), verdict AS (
  SELECT NOT EXISTS (SELECT 1 FROM target x WHERE x.blocked_by > 0)
    OR NOT ($4::text[] && ARRAY['startAfter', 'retentionSeconds']) AS ok
), changed AS (
  UPDATE "pgqueue".jobs_q_af67ca2fe7ffcec8 j SET
    data = CASE WHEN 'data' = ANY ($4::text[]) THEN nullif($5::jsonb, 'null'::jsonb) ELSE j.data END,
    priority = CASE WHEN 'priority' = ANY ($4::text[]) THEN $6::int ELSE j.priority END,
    start_after = CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END,
    keep_until = CASE WHEN 'retentionSeconds' = ANY ($4::text[]) THEN CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + $16::int * interval '1 second'
      WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END + (j.keep_until - j.start_after) END,
    retry_limit = CASE WHEN 'retryLimit' = ANY ($4::text[]) THEN j.retry_base + $9::int ELSE j.retry_limit END,
    retry_delay = CASE WHEN 'retryDelay' = ANY ($4::text[]) THEN $10::int ELSE j.retry_delay END,
    retry_backoff = CASE WHEN 'retryBackoff' = ANY ($4::text[]) THEN $11::boolean ELSE j.retry_backoff END,
    retry_delay_max = CASE WHEN 'retryDelayMax' = ANY ($4::text[]) THEN coalesce($12::int, q.retry_delay_max) ELSE j.retry_delay_max END,
    expire_seconds = CASE WHEN 'expireInSeconds' = ANY ($4::text[]) THEN $13::int ELSE j.expire_seconds END,
    heartbeat_seconds = CASE WHEN 'heartbeatSeconds' = ANY ($4::text[]) THEN coalesce($14::int, q.heartbeat_seconds) ELSE j.heartbeat_seconds END,
    delete_after_seconds = CASE WHEN 'deleteAfterSeconds' = ANY ($4::text[]) THEN $15::int ELSE j.delete_after_seconds END,
    dead_letter = CASE WHEN 'deadLetter' = ANY ($4::text[]) THEN $17::text ELSE j.dead_letter END,
    group_id = CASE WHEN 'group' = ANY ($4::text[]) THEN $18::text ELSE j.group_id END,
    group_tier = CASE WHEN 'group' = ANY ($4::text[]) THEN $19::text ELSE j.group_tier END
  FROM target x
  CROSS JOIN verdict v
  CROSS JOIN (SELECT q.retry_delay_max, q.heartbeat_seconds FROM "pgqueue".queues q WHERE q.name = $1) q
  WHERE v.ok AND j.queue = $1 AND j.id = x.id
  RETURNING j.id, j.start_after
), woke AS (
  SELECT pg_notify($3, CASE WHEN w.at <= clock_timestamp() THEN $1
    ELSE $1 || ' ' || ceil(extract(epoch FROM w.at - clock_timestamp()) * 1000)::bigint END)::text AS notified FROM (
    SELECT min(c.start_after) AS at FROM changed c
    WHERE 'startAfter' = ANY ($4::text[]) AND c.start_after < 'infinity'
    GROUP BY c.start_after > now()
    UNION ALL
    SELECT now() WHERE 'startAfter' = ANY ($4::text[]) AND EXISTS (SELECT 1 FROM changed)
      AND (SELECT q.policy FROM "pgqueue".queues q WHERE q.name = $1) = 'key_strict_fifo'
  ) w
  WHERE (SELECT q.notify FROM "pgqueue".queues q WHERE q.name = $1)
)
SELECT c.id::text, false AS blocked, (SELECT min(w.notified) FROM woke w) AS notified FROM changed c
UNION ALL
SELECT x.id::text, true, NULL FROM target x, verdict v WHERE NOT v.ok AND x.blocked_by > 0

-- updateQueue
UPDATE "pgqueue".queues SET
  dead_letter = CASE WHEN $2::jsonb ? 'deadLetter' THEN $2::jsonb->>'deadLetter' ELSE dead_letter END,
  warning_queue_size = CASE WHEN $2::jsonb ? 'warningQueueSize' THEN ($2::jsonb->>'warningQueueSize')::int ELSE warning_queue_size END,
  notify = CASE WHEN $2::jsonb ? 'notify' THEN ($2::jsonb->>'notify')::boolean ELSE notify END,
  remove_on_complete = CASE WHEN $2::jsonb ? 'removeOnComplete' THEN ($2::jsonb->>'removeOnComplete')::boolean ELSE remove_on_complete END,
  failed_delete_after_seconds = CASE WHEN $2::jsonb ? 'failedDeleteAfterSeconds' THEN ($2::jsonb->>'failedDeleteAfterSeconds')::int
    ELSE failed_delete_after_seconds END,
  retry_limit = CASE WHEN $2::jsonb ? 'retryLimit' THEN ($2::jsonb->>'retryLimit')::int ELSE retry_limit END,
  retry_delay = CASE WHEN $2::jsonb ? 'retryDelay' THEN ($2::jsonb->>'retryDelay')::int ELSE retry_delay END,
  retry_backoff = CASE WHEN $2::jsonb ? 'retryBackoff' THEN ($2::jsonb->>'retryBackoff')::boolean ELSE retry_backoff END,
  retry_delay_max = CASE WHEN $2::jsonb ? 'retryDelayMax' THEN ($2::jsonb->>'retryDelayMax')::int ELSE retry_delay_max END,
  expire_seconds = CASE WHEN $2::jsonb ? 'expireInSeconds' THEN ($2::jsonb->>'expireInSeconds')::int ELSE expire_seconds END,
  heartbeat_seconds = CASE WHEN $2::jsonb ? 'heartbeatSeconds' THEN ($2::jsonb->>'heartbeatSeconds')::int ELSE heartbeat_seconds END,
  delete_after_seconds = CASE WHEN $2::jsonb ? 'deleteAfterSeconds' THEN ($2::jsonb->>'deleteAfterSeconds')::int ELSE delete_after_seconds END,
  retention_seconds = CASE WHEN $2::jsonb ? 'retentionSeconds' THEN ($2::jsonb->>'retentionSeconds')::int ELSE retention_seconds END,
  concurrency_limit = CASE WHEN $2::jsonb ? 'concurrencyLimit' THEN ($2::jsonb->>'concurrencyLimit')::int ELSE concurrency_limit END,
  rate_limit_count = CASE WHEN $2::jsonb ? 'rateLimit' THEN ($2::jsonb->'rateLimit'->>'count')::int ELSE rate_limit_count END,
  rate_limit_seconds = CASE WHEN $2::jsonb ? 'rateLimit' THEN ($2::jsonb->'rateLimit'->>'perSeconds')::int ELSE rate_limit_seconds END,
  fail_unworked_after_seconds = CASE WHEN $2::jsonb ? 'failUnworkedAfterSeconds' THEN ($2::jsonb->>'failUnworkedAfterSeconds')::int
    ELSE fail_unworked_after_seconds END,
  -- the time without a worker counts again from the next pass under the new setting
  unworked_since = CASE WHEN $2::jsonb ? 'failUnworkedAfterSeconds' THEN NULL ELSE unworked_since END,
  updated_on = now()
WHERE name = $1
RETURNING name

-- upsertIsolation
SET TRANSACTION ISOLATION LEVEL READ COMMITTED

-- upsertSavepoint
SAVEPOINT pgqueue_upsert

-- upsertSchedule
INSERT INTO "pgqueue".schedules AS c (name, key, cron, tz, data, options, missed, managed, next_run_on, created_on)
VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, coalesce(to_timestamp($9::float8 / 1000), 'infinity'), to_timestamp($11::float8 / 1000))
ON CONFLICT (name, key) DO UPDATE SET
  next_run_on = CASE WHEN c.cron = excluded.cron AND c.tz = excluded.tz THEN c.next_run_on
    ELSE coalesce(to_timestamp($10::float8 / 1000), 'infinity') END,
  cron = excluded.cron, tz = excluded.tz, data = excluded.data, options = excluded.options, missed = excluded.missed,
  managed = excluded.managed, updated_on = now()
WHERE c.managed OR NOT excluded.managed
RETURNING name

-- waitMaintenanceLock
SELECT true AS locked FROM pg_advisory_xact_lock(1885824374, hashtext($1))

-- waitMonitorLock
SELECT true AS locked FROM pg_advisory_xact_lock(1885824376, hashtext($1))

-- waitingChildren
SELECT EXISTS (
  SELECT 1 FROM "pgqueue".job_deps d JOIN "pgqueue".jobs c ON c.queue = d.child_queue AND c.id = d.child_id
  WHERE d.parent_queue = $1 AND d.parent_id = $2::bigint AND c.state = 'created' AND c.blocked_by > 0
) AS waiting

-- wakeQueue
SELECT pg_notify($1, $2)

-- walkEnd
SELECT j.queue AS last_queue, j.id::text AS last_id FROM "pgqueue".jobs j
WHERE (j.queue, j.id) > ($2::text, $3::bigint)
ORDER BY j.queue, j.id
OFFSET $1 - 1 LIMIT 1

-- watchUnworkedQueues
WITH watched AS MATERIALIZED (
  SELECT q.name, q.fail_unworked_after_seconds AS after, q.unworked_since,
    q.paused OR EXISTS (SELECT 1 FROM "pgqueue".workers w
      WHERE w.heartbeat_on >= now() - interval '30 seconds' AND w.loops @> jsonb_build_array(jsonb_build_object('queue', q.name))) AS waits_rightly
  FROM "pgqueue".queues q
  WHERE q.fail_unworked_after_seconds IS NOT NULL
), marked AS (
  UPDATE "pgqueue".queues q SET unworked_since = CASE WHEN w.waits_rightly THEN NULL ELSE now() END
  FROM watched w
  WHERE q.name = w.name AND (w.waits_rightly = (w.unworked_since IS NOT NULL))
  RETURNING q.name
)
SELECT w.name, w.after, extract(epoch FROM now() - w.unworked_since)::float8 AS unworked_seconds, now() AS pass_began
FROM watched w
WHERE NOT w.waits_rightly AND w.unworked_since <= now() - w.after * interval '1 second'
ORDER BY w.name

-- ==== the installer (migrate.ts), LISTEN (notify.ts) and transactions (transaction.ts) ====

-- migrate.ts: beginMigrationTry
SAVEPOINT pgqueue_migration

-- migrate.ts: createMigrationsTable
CREATE TABLE IF NOT EXISTS "pgqueue".migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_on timestamptz NOT NULL DEFAULT now()
)

-- migrate.ts: createSchema
CREATE SCHEMA IF NOT EXISTS "pgqueue"

-- migrate.ts: endMigrationTry
RELEASE SAVEPOINT pgqueue_migration

-- migrate.ts: engineSessionMarked
SELECT current_setting('pgqueue.session', true) IS NOT DISTINCT FROM 'on' AS marked

-- migrate.ts: migrationScript
-- a header (lib/core/runtime/migrate.ts: the package version, the versions from and to)
BEGIN;

SELECT pg_advisory_xact_lock(1885824373, hashtext('pgqueue'));

CREATE SCHEMA IF NOT EXISTS "pgqueue";

CREATE TABLE IF NOT EXISTS "pgqueue".migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_on timestamptz NOT NULL DEFAULT now()
);

DO $pgqueue_guard$
DECLARE installed integer := (SELECT coalesce(max(version), 0)::int AS version FROM "pgqueue".migrations);
BEGIN
  IF installed <> 0 THEN
    RAISE EXCEPTION 'schema % is at version %; this script upgrades it from version 0', 'pgqueue', installed;
  END IF;
END
$pgqueue_guard$;

-- migration 1: init
-- the migration's own statements (schema/migrations), left out here
;

INSERT INTO "pgqueue".migrations (version, name) VALUES (1, 'init');

COMMIT;

-- migrate.ts: migrationTurnHolders
SELECT pid FROM pg_locks
WHERE locktype = 'advisory' AND granted AND classid = 1885824373 AND objid = hashtext($1)::oid AND objsubid = 2
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())

-- migrate.ts: migrationsTablePresent
SELECT to_regclass(format('%I.migrations', $1::text)) IS NOT NULL AS present,
  current_setting('server_version_num')::int AS server_version_num

-- migrate.ts: pauseMigration
SELECT pg_sleep($1::float8)

-- migrate.ts: recordMigration
INSERT INTO "pgqueue".migrations (version, name) VALUES ($1, $2)

-- migrate.ts: selectInstalledVersion
SELECT coalesce(max(version), 0)::int AS version FROM "pgqueue".migrations

-- migrate.ts: sessionSettings
SELECT (extract(epoch FROM current_setting('lock_timeout')::interval) * 1000)::float8 AS lock_ms,
  (extract(epoch FROM current_setting('statement_timeout')::interval) * 1000)::float8 AS statement_ms,
  current_setting('server_version_num')::int AS server_version_num

-- migrate.ts: setMigrationLockTimeout
SELECT set_config('lock_timeout', $1, true)

-- migrate.ts: tryLockMigrations
SELECT pg_try_advisory_xact_lock(1885824373, hashtext($1)) AS taken

-- migrate.ts: undoMigrationTry
ROLLBACK TO SAVEPOINT pgqueue_migration

-- notify.ts: hearingCheck
SELECT pg_notify($1, $2)

-- notify.ts: listen
LISTEN "pgqueue_pgqueue"

-- transaction.ts: beginDashboardPageRead
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = 5000; SELECT set_config('idle_in_transaction_session_timeout', '10s', true)
WHERE current_setting('idle_in_transaction_session_timeout')::interval NOT BETWEEN interval '1 millisecond' AND interval '10 seconds'

-- transaction.ts: beginDashboardRead
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = 1000; SELECT set_config('idle_in_transaction_session_timeout', '10s', true)
WHERE current_setting('idle_in_transaction_session_timeout')::interval NOT BETWEEN interval '1 millisecond' AND interval '10 seconds'

-- transaction.ts: beginEngineTransaction
BEGIN; SELECT set_config('idle_in_transaction_session_timeout', '10s', true)
WHERE current_setting('idle_in_transaction_session_timeout')::interval NOT BETWEEN interval '1 millisecond' AND interval '10 seconds'

-- transaction.ts: beginTransaction
BEGIN

-- transaction.ts: boundTransaction
SELECT set_config('idle_in_transaction_session_timeout', '10s', true)
WHERE current_setting('idle_in_transaction_session_timeout')::interval NOT BETWEEN interval '1 millisecond' AND interval '10 seconds'

-- transaction.ts: claimSavepoint
SAVEPOINT pgqueue_claim

-- transaction.ts: commitTransaction
COMMIT

-- transaction.ts: endSession
SELECT pg_terminate_backend($1)

-- transaction.ts: releaseClaimSavepoint
RELEASE SAVEPOINT pgqueue_claim

-- transaction.ts: releaseSavepoint
RELEASE SAVEPOINT pgqueue_step

-- transaction.ts: rollbackClaimSavepoint
ROLLBACK TO SAVEPOINT pgqueue_claim

-- transaction.ts: rollbackToSavepoint
ROLLBACK TO SAVEPOINT pgqueue_step

-- transaction.ts: rollbackTransaction
ROLLBACK

-- transaction.ts: savepoint
SAVEPOINT pgqueue_step

-- transaction.ts: transactionIsolation
SELECT current_setting('transaction_isolation') AS isolation
