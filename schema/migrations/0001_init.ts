import type { Migration } from './index.js';

/** Queues, jobs (list-partitioned by queue, one shared default partition) and the NOTIFY trigger. */
export const init: Migration = {
  version: 1,
  name: 'init',
  up: (s) => `
CREATE TYPE ${s}.job_state AS ENUM ('created', 'retry', 'active', 'completed', 'cancelled', 'failed');

CREATE TABLE ${s}.queues (
  name text PRIMARY KEY,
  policy text NOT NULL DEFAULT 'standard'
    CHECK (policy IN ('standard', 'short', 'singleton', 'stately', 'exclusive', 'key_strict_fifo')),
  partition boolean NOT NULL DEFAULT false,
  dead_letter text REFERENCES ${s}.queues (name),
  warning_queue_size integer CHECK (warning_queue_size > 0),
  notify boolean NOT NULL DEFAULT true,
  retry_limit integer NOT NULL DEFAULT 2 CHECK (retry_limit >= 0),
  retry_delay integer NOT NULL DEFAULT 0 CHECK (retry_delay >= 0),
  retry_backoff boolean NOT NULL DEFAULT false,
  retry_delay_max integer CHECK (retry_delay_max >= 0),
  expire_seconds integer NOT NULL DEFAULT 900 CHECK (expire_seconds BETWEEN 1 AND 86400),
  heartbeat_seconds integer CHECK (heartbeat_seconds > 0),
  delete_after_seconds integer NOT NULL DEFAULT 604800 CHECK (delete_after_seconds >= 0),
  retention_seconds integer NOT NULL DEFAULT 1209600 CHECK (retention_seconds > 0),
  -- at most this many active jobs of the queue across all workers (claims serialise on an advisory lock)
  concurrency_limit integer CHECK (concurrency_limit > 0),
  -- at most rate_limit_count jobs started per rate_limit_seconds window, across all workers
  rate_limit_count integer CHECK (rate_limit_count > 0),
  rate_limit_seconds integer CHECK (rate_limit_seconds > 0),
  CHECK ((rate_limit_count IS NULL) = (rate_limit_seconds IS NULL)),
  created_on timestamptz NOT NULL DEFAULT now(),
  updated_on timestamptz NOT NULL DEFAULT now()
);

-- How many jobs of a rate-limited queue started in its current window.
CREATE TABLE ${s}.rate_windows (
  queue text PRIMARY KEY REFERENCES ${s}.queues (name) ON DELETE CASCADE,
  window_start timestamptz NOT NULL,
  started integer NOT NULL
);

CREATE SEQUENCE ${s}.jobs_id_seq AS bigint;

-- One logical table, list-partitioned by queue: every queue shares the default partition unless it
-- asks for one of its own, and a claim always names its queue, so it reads one partition only.
CREATE TABLE ${s}.jobs (
  id bigint NOT NULL DEFAULT nextval('${s}.jobs_id_seq'),
  queue text NOT NULL,
  state ${s}.job_state NOT NULL DEFAULT 'created',
  -- the queue's policy, copied at insert: the partial unique indexes below are conditioned on it
  policy text NOT NULL DEFAULT 'standard',
  priority integer NOT NULL DEFAULT 0,
  data jsonb,
  output jsonb,
  singleton_key text,
  dedupe_key text,
  -- a group (e.g. a tenant) whose active jobs a worker's groupConcurrency limits, and its tier
  group_id text,
  group_tier text,
  -- flow(): how many parents have not completed yet; a blocked job waits with start_after = infinity
  blocked_by integer NOT NULL DEFAULT 0 CHECK (blocked_by >= 0),
  -- flow(): what becomes of this job when a parent fails for good or is cancelled: 'fail' or 'cancel'
  on_parent_failure text CHECK (on_parent_failure IN ('fail', 'cancel')),
  -- the throttle/debounce time slot this job occupies (sendThrottled, sendDebounced)
  singleton_on timestamptz,
  start_after timestamptz NOT NULL DEFAULT now(),
  retry_count integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
  -- bumped by every claim: a worker's result is fenced to (id, claim_count, worker_id), so even a
  -- re-claim of the same job by the same worker (after a hand-back or cancel + resume) is a new attempt
  claim_count integer NOT NULL DEFAULT 0,
  retry_limit integer NOT NULL CHECK (retry_limit >= 0),
  retry_delay integer NOT NULL CHECK (retry_delay >= 0),
  retry_backoff boolean NOT NULL,
  retry_delay_max integer,
  expire_seconds integer NOT NULL CHECK (expire_seconds BETWEEN 1 AND 86400),
  heartbeat_seconds integer,
  delete_after_seconds integer NOT NULL,
  lease_until timestamptz,
  heartbeat_until timestamptz,
  worker_id text,
  created_on timestamptz NOT NULL DEFAULT now(),
  started_on timestamptz,
  completed_on timestamptz,
  keep_until timestamptz NOT NULL,
  dead_letter text,
  source_name text,
  source_id bigint,
  source_created_on timestamptz,
  source_retry_count integer,
  source_output jsonb,
  source_root_id bigint,
  PRIMARY KEY (queue, id),
  -- an active job always has a holder and a lease (a finished one keeps the id of the worker that ran it)
  CHECK (state <> 'active' OR (worker_id IS NOT NULL AND lease_until IS NOT NULL))
) PARTITION BY LIST (queue);

ALTER SEQUENCE ${s}.jobs_id_seq OWNED BY ${s}.jobs.id;

CREATE TABLE ${s}.jobs_default PARTITION OF ${s}.jobs DEFAULT;

-- A queue created with partition: true stores its jobs in a list partition of its own, named from a hash
-- of the queue's name. Postgres quotes the name here (format %L), so no value is spliced by the client.
-- Creating one scans the default partition for rows of that queue (there are none for a new queue).
CREATE FUNCTION ${s}.queue_partition_name(q text) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT 'jobs_q_' || left(md5(q), 16)
$fn$;

CREATE FUNCTION ${s}.create_queue_partition(q text) RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format('CREATE TABLE ${s}.%I PARTITION OF ${s}.jobs FOR VALUES IN (%L)', ${s}.queue_partition_name(q), q);
  RETURN ${s}.queue_partition_name(q);
END
$fn$;

CREATE FUNCTION ${s}.drop_queue_partition(q text) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS ${s}.%I', ${s}.queue_partition_name(q));
END
$fn$;

-- flow(): which job waits for which. Keyed by the parent, so a completion finds its children in one probe.
CREATE TABLE ${s}.job_deps (
  parent_queue text NOT NULL,
  parent_id bigint NOT NULL,
  child_queue text NOT NULL,
  child_id bigint NOT NULL,
  PRIMARY KEY (parent_queue, parent_id, child_queue, child_id)
);

-- When each maintenance task last ran, cluster-wide: whichever supervising instance finds a task due
-- runs it, so the passes keep their interval however many instances there are, and go on when one dies.
CREATE TABLE ${s}.maintenance (
  task text PRIMARY KEY,
  last_run_on timestamptz NOT NULL
);

-- The claim's index: only jobs that can still run (created, retry), in claim order. Finished rows never
-- enter it, so its size follows the backlog, not the history the table keeps.
CREATE INDEX jobs_ready_idx ON ${s}.jobs (queue, priority DESC, start_after, id) WHERE state < 'active';

-- Active jobs only: the reaper finds expired leases here, and a concurrency-limited claim counts a queue's.
CREATE INDEX jobs_lease_idx ON ${s}.jobs (queue, lease_until) WHERE state = 'active';

-- The queue policies, enforced by the database whichever process writes (a job without a singletonKey
-- shares the one null key: NULLS NOT DISTINCT). An insert that would break one is skipped; a claim that
-- would is refused as a whole and comes back empty.
-- short: at most one queued (created) job per key.
CREATE UNIQUE INDEX jobs_short_key ON ${s}.jobs (queue, singleton_key) NULLS NOT DISTINCT
  WHERE state = 'created' AND policy = 'short';
-- singleton: at most one active job per key.
CREATE UNIQUE INDEX jobs_singleton_key ON ${s}.jobs (queue, singleton_key) NULLS NOT DISTINCT
  WHERE state = 'active' AND policy = 'singleton';
-- stately: at most one job per key in each of created, retry and active.
CREATE UNIQUE INDEX jobs_stately_key ON ${s}.jobs (queue, state, singleton_key) NULLS NOT DISTINCT
  WHERE state <= 'active' AND policy = 'stately';
-- exclusive: at most one job per key queued (created, retry) or active.
CREATE UNIQUE INDEX jobs_exclusive_key ON ${s}.jobs (queue, singleton_key) NULLS NOT DISTINCT
  WHERE state <= 'active' AND policy = 'exclusive';
-- key_strict_fifo: at most one active job per key; the claim's probes read the two indexes after it.
CREATE UNIQUE INDEX jobs_fifo_active_key ON ${s}.jobs (queue, singleton_key)
  WHERE state = 'active' AND policy = 'key_strict_fifo';
-- the job that holds a key back: in retry (it keeps the head), active, or failed for good. At most one
-- per key, so resume, retry or a manual fail can never leave a key with two jobs that block each other.
CREATE UNIQUE INDEX jobs_fifo_blocking_idx ON ${s}.jobs (queue, singleton_key)
  WHERE state IN ('retry', 'active', 'failed') AND policy = 'key_strict_fifo';
-- the queued jobs of each key in FIFO order
CREATE INDEX jobs_fifo_created_idx ON ${s}.jobs (queue, singleton_key, id)
  WHERE state = 'created' AND policy = 'key_strict_fifo';
-- active jobs per group, counted by a claim under groupConcurrency
CREATE INDEX jobs_group_active_idx ON ${s}.jobs (queue, group_id) WHERE state = 'active' AND group_id IS NOT NULL;
-- dedupeKey, on any queue: at most one pending job per key.
CREATE UNIQUE INDEX jobs_dedupe_key ON ${s}.jobs (queue, dedupe_key)
  WHERE state <= 'active' AND dedupe_key IS NOT NULL;
-- sendThrottled/sendDebounced: one job per key and time slot, whatever became of it (but cancelled).
CREATE UNIQUE INDEX jobs_throttle_slot ON ${s}.jobs (queue, singleton_on, singleton_key) NULLS NOT DISTINCT
  WHERE singleton_on IS NOT NULL AND state <> 'cancelled';

-- One NOTIFY per inserting statement and queue, none for deferred jobs or queues with notify off.
-- Delivered at commit, so a job sent inside a rolled-back transaction wakes nobody.
CREATE FUNCTION ${s}.notify_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('pgqueue_' || TG_TABLE_SCHEMA, n.queue)
  FROM (SELECT DISTINCT i.queue FROM inserted i WHERE i.start_after <= now()) n
  JOIN ${s}.queues q ON q.name = n.queue AND q.notify;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER jobs_notify AFTER INSERT ON ${s}.jobs
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.notify_jobs_inserted();
`,
};
