import type { Migration } from './index.js';

/**
 * Autovacuum settings of the tables a queue churns through: every job is inserted, updated two or three times
 * and, with retention, deleted, so dead rows pile up at the pace of the work, not of the table's size. The
 * defaults (a vacuum once a fifth of the table is dead) would let a table of a million stored jobs carry 200,000
 * dead rows before a vacuum, and the claim's index scans walk past them. A partitioned table holds no storage
 * parameters, so they go on each partition, and create_queue_partition gives them to the partitions made later.
 */
export const QUEUE_TABLE_AUTOVACUUM =
  'autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02';

/**
 * Retention (lib/core/passes/retention.ts, lib/core/sql/retention.ts):
 * - `queues.failed_delete_after_seconds`: how long a job that failed for good is kept (0: forever), apart from the
 *   deleteAfterSeconds of completed and cancelled jobs; set on the job's keep_until when it fails.
 * - `jobs.slot_until`: the end of a throttled job's time slot. The slot is held by the row (jobs_throttle_slot),
 *   so retention keeps the row until then, however short its deleteAfterSeconds. Rows stored before this
 *   migration have none; their slot is held until their keep_until, as before.
 * - A partial index on the keep_until of finished jobs, which retention deletes past it: a job's end adds an entry,
 *   a send or a claim none. Waiting jobs past their retention are found by a walk of the table instead
 *   (expireWaitingJobs): an index of their own cost bulk inserts 10% of their throughput (bench/drain-cpu.mjs,
 *   two interleaved runs).
 * - A flow's links are deleted with their parent, found by the primary key's prefix.
 * Like every migration, it runs in one transaction that holds the jobs table's lock: sends and claims wait while
 * the failures stored before are given their new keep_until and the index is built (operations.md, "Migrations").
 */
export const retention: Migration = {
  version: 5,
  name: 'retention',
  up: (s) => `
ALTER TABLE ${s}.queues ADD COLUMN failed_delete_after_seconds integer NOT NULL DEFAULT 2592000;
-- a queue that kept its finished jobs forever keeps its failures forever too
UPDATE ${s}.queues SET failed_delete_after_seconds = 0 WHERE delete_after_seconds = 0;
ALTER TABLE ${s}.jobs ADD COLUMN slot_until timestamptz;
-- failures stored before: kept as their queue now says, from when they failed
UPDATE ${s}.jobs j SET keep_until = CASE WHEN q.failed_delete_after_seconds = 0 THEN 'infinity'::timestamptz
    ELSE coalesce(j.completed_on, now()) + q.failed_delete_after_seconds * interval '1 second' END
  FROM ${s}.queues q
  WHERE q.name = j.queue AND j.state = 'failed';

CREATE INDEX jobs_finished_keep_idx ON ${s}.jobs (keep_until) WHERE state > 'active';

ALTER TABLE ${s}.job_deps SET (${QUEUE_TABLE_AUTOVACUUM});
DO $do$
DECLARE
  part regclass;
BEGIN
  FOR part IN SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = '${s}.jobs'::regclass LOOP
    EXECUTE format('ALTER TABLE %s SET (${QUEUE_TABLE_AUTOVACUUM})', part);
  END LOOP;
END
$do$;

CREATE OR REPLACE FUNCTION ${s}.create_queue_partition(q text) RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format('CREATE TABLE ${s}.%I PARTITION OF ${s}.jobs FOR VALUES IN (%L) WITH (${QUEUE_TABLE_AUTOVACUUM})',
    ${s}.queue_partition_name(q), q);
  RETURN ${s}.queue_partition_name(q);
END
$fn$;
`,
};
