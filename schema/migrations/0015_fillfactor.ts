import type { Migration } from './index.js';
import { QUEUE_TABLE_AUTOVACUUM } from './0005_retention.js';

/**
 * Room on each page of jobs for the versions its updates write. A job is inserted, then updated by its claim and by
 * its end; on a full page each new version goes to another page, and PostgreSQL then writes to the WAL a lock of the
 * old version as well as the whole new one (an update within its page writes only the bytes that changed). Pages
 * filled to JOBS_FILLFACTOR keep room for those versions beside their rows, and for the updates that change no
 * indexed column (a heartbeat) to stay HOT. `npm run bench:cost` shows the WAL by record type (Heap/LOCK,
 * Heap/UPDATE). Measured with it, per job drained: 1,059 WAL bytes at 100 (the default), 980 at 70, 906 at 50, the
 * same CPU. `node bench/design/fill-room.mjs` prices the room: the heap of 60,000 drained jobs, vacuumed, then 60,000
 * more waiting, 31.4 MiB at 100, 30.3 at 70, 43.0 at 50 (docs/performance.md, "Cost per job in PostgreSQL"). 70 takes
 * half of 50's saving in the space 100 takes; 50 a third more space.
 * A storage parameter applies to the pages filled after it is set: nothing is rewritten, and the migration takes
 * only a brief lock of each partition. Partitions made later get it from create_queue_partition.
 */
export const JOBS_FILLFACTOR = 70;

export const fillfactor: Migration = {
  version: 15,
  name: 'fillfactor',
  up: (s) => `
DO $do$
DECLARE
  part regclass;
BEGIN
  FOR part IN SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = '${s}.jobs'::regclass LOOP
    EXECUTE format('ALTER TABLE %s SET (fillfactor = ${JOBS_FILLFACTOR})', part);
  END LOOP;
END
$do$;

CREATE OR REPLACE FUNCTION ${s}.create_queue_partition(q text) RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
  EXECUTE format('CREATE TABLE ${s}.%I PARTITION OF ${s}.jobs FOR VALUES IN (%L) WITH (${QUEUE_TABLE_AUTOVACUUM}, fillfactor = ${JOBS_FILLFACTOR})',
    ${s}.queue_partition_name(q), q);
  RETURN ${s}.queue_partition_name(q);
END
$fn$;
`,
};
