import { LIVE_WORKER } from './fragments.js';

/**
 * An instance's heartbeat: inserts or refreshes its row, with its loops as they are now, and deletes the rows of
 * instances that are no longer live (they died without closing). One statement, every few seconds per instance.
 * Returns the database's clock (ms since the epoch), which the instance compares with its own.
 *
 * $1 id, $2 host, $3 pid, $4 version, $5 loops (jsonb array), $6 the queues whose loops it holds stopped (jsonb array)
 */
export const refreshWorker = (s: string) => `
WITH gone AS (
  DELETE FROM ${s}.workers w WHERE NOT ${LIVE_WORKER('w')} AND w.id <> $1
)
INSERT INTO ${s}.workers AS w (id, host, pid, version, loops, stopped) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
ON CONFLICT (id) DO UPDATE SET loops = excluded.loops, stopped = excluded.stopped, heartbeat_on = now()
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS db_ms`;

/** An instance that closes removes its row. $1 id */
export const removeWorker = (s: string) => `DELETE FROM ${s}.workers WHERE id = $1`;

/** The live instances, oldest first. */
export const getWorkers = (s: string) => `
SELECT w.id, w.host, w.pid, w.version, w.loops, w.stopped, w.started_on, w.heartbeat_on
FROM ${s}.workers w
WHERE ${LIVE_WORKER('w')}
ORDER BY w.started_on, w.id`;
