import type { Migration } from './index.js';

/**
 * Deferred sends announce when they become due: the insert trigger sends, besides the NOTIFY for jobs that are
 * ready now, one per inserting statement and queue naming the milliseconds until its earliest deferred job (the
 * payload of WAKE_PAYLOAD in lib/core/sql/fragments.ts), so that a worker sets a timer instead of finding the job
 * at its next poll. Workers of earlier versions read the second payload as a queue they do not work, and ignore it.
 */
export const dueWakeups: Migration = {
  version: 4,
  name: 'due_wakeups',
  up: (s) => `
CREATE OR REPLACE FUNCTION ${s}.notify_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('pgqueue_' || TG_TABLE_SCHEMA, CASE WHEN n.due <= clock_timestamp() THEN n.queue
      ELSE n.queue || ' ' || ceil(extract(epoch FROM n.due - clock_timestamp()) * 1000)::bigint END)
  FROM (
    SELECT i.queue, min(i.start_after) AS due FROM inserted i WHERE i.start_after <= now() GROUP BY i.queue
    UNION ALL
    SELECT i.queue, min(i.start_after) FROM inserted i WHERE i.start_after > now() AND i.start_after < 'infinity' GROUP BY i.queue
  ) n
  JOIN ${s}.queues q ON q.name = n.queue AND q.notify;
  RETURN NULL;
END
$fn$;
`,
};
