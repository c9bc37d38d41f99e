import type { Migration } from './index.js';

/**
 * `queue_stats` by day: a table partitioned by range of `captured_on`, one partition per UTC day
 * (`queue_stats_YYYYMMDD`), so that retention drops a day's partition instead of deleting its rows one by one
 * (lib/core/passes/monitor.ts: each pass makes the partitions of the next days ahead, and drops those past
 * queueStatRetentionDays). The snapshots kept so far stay where they are: the table that held them becomes the
 * DEFAULT partition (`queue_stats_default`, attached without a copy; each day partition made while it holds rows
 * reads it, as PostgreSQL checks that none belongs to that day), whose rows retention still deletes until none is left; a snapshot of a day with no partition of its own (one the pass could not make) goes there too.
 * The release before keeps working: it inserts into, reads and deletes from `queue_stats` by name, which routes to
 * the partitions.
 * - create_stats_partition(day): the day's partition, unless it exists; none while the default partition holds rows
 *   of that day (PostgreSQL would refuse the partition), which stay there.
 * - drop_stats_partitions(before): drops the day partitions that end before `before`; returns how many.
 * Both are SECURITY DEFINER, so that they run with the rights of the role that migrated (the tables' owner): an
 * application role granted only the use of the tables (operations.md, "When a DBA owns the DDL") keeps stats with
 * them. They touch queue_stats' own partitions alone, by names they compute, fix their search_path, and do only what
 * the session's role could do itself: they refuse a role that may not DELETE from queue_stats (dropping a day's
 * partition deletes its snapshots; making one is harmless, and only near today).
 */
export const statsPartitions: Migration = {
  version: 17,
  name: 'stats_partitions',
  up: (s) => `
ALTER TABLE ${s}.queue_stats RENAME TO queue_stats_default;
ALTER TABLE ${s}.queue_stats_default RENAME CONSTRAINT queue_stats_pkey TO queue_stats_default_pkey;
ALTER TABLE ${s}.queue_stats_default RENAME CONSTRAINT queue_stats_queue_fkey TO queue_stats_default_queue_fkey;
ALTER INDEX ${s}.queue_stats_captured_idx RENAME TO queue_stats_default_captured_idx;

CREATE TABLE ${s}.queue_stats (LIKE ${s}.queue_stats_default INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  PRIMARY KEY (queue, captured_on),
  FOREIGN KEY (queue) REFERENCES ${s}.queues (name) ON DELETE CASCADE
) PARTITION BY RANGE (captured_on);
CREATE INDEX queue_stats_captured_idx ON ${s}.queue_stats (captured_on);
ALTER TABLE ${s}.queue_stats ATTACH PARTITION ${s}.queue_stats_default DEFAULT;

CREATE FUNCTION ${s}.create_stats_partition(day date) RETURNS boolean LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  name text := 'queue_stats_' || to_char(day, 'YYYYMMDD');
  day_start timestamptz := day::timestamp AT TIME ZONE 'UTC';
BEGIN
  -- as the caller's own right to delete snapshots would allow (SECURITY DEFINER: see the header), and only near today
  IF NOT has_table_privilege(session_user, '${s}.queue_stats', 'DELETE') THEN
    RAISE EXCEPTION 'permission denied: create_stats_partition needs DELETE on queue_stats' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF day NOT BETWEEN (now() AT TIME ZONE 'UTC')::date - 1 AND (now() AT TIME ZONE 'UTC')::date + 2 THEN
    RETURN false;
  END IF;
  IF to_regclass(format('${s}.%I', name)) IS NOT NULL THEN
    RETURN false;
  END IF;
  -- the default partition holds snapshots of that day: they stay there, and so do the day's next ones. Found by its
  -- index, so that the refusal costs no scan of it at each pass (making a partition scans it: once a day)
  IF EXISTS (SELECT 1 FROM ${s}.queue_stats_default d WHERE d.captured_on >= day_start AND d.captured_on < day_start + interval '1 day') THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE IF NOT EXISTS ${s}.%I PARTITION OF ${s}.queue_stats FOR VALUES FROM (%L) TO (%L)', name,
    day_start, day_start + interval '1 day');
  RETURN true;
EXCEPTION WHEN check_violation THEN
  RETURN false;
END
$fn$;

CREATE FUNCTION ${s}.drop_stats_partitions(before timestamptz) RETURNS integer LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
  part record;
  dropped integer := 0;
BEGIN
  -- dropping a day's snapshots is what deleting them is: the caller's own right to (SECURITY DEFINER: see the header)
  IF NOT has_table_privilege(session_user, '${s}.queue_stats', 'DELETE') THEN
    RAISE EXCEPTION 'permission denied: drop_stats_partitions needs DELETE on queue_stats' USING ERRCODE = 'insufficient_privilege';
  END IF;
  FOR part IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = '${s}.queue_stats'::regclass AND c.relname ~ '^queue_stats_[0-9]{8}$'
      AND (to_date(substring(c.relname FROM 13), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= before
  LOOP
    EXECUTE format('DROP TABLE IF EXISTS ${s}.%I', part.relname);
    dropped := dropped + 1;
  END LOOP;
  RETURN dropped;
END
$fn$;

-- today's and the next two days' partitions (today's only if the kept snapshots hold none of today)
SELECT ${s}.create_stats_partition((now() AT TIME ZONE 'UTC')::date + d) FROM generate_series(0, 2) d;
`,
};
