// Cron schedules (schedules.ts, scheduler.ts): their rows, and the two statements of a scheduler pass.

/** The database's clock, in ms since the epoch: the slots of a new or changed schedule are counted from it. */
export const databaseNow = (_s: string) => `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms`;

/**
 * Creates or changes a schedule. A new one starts from $9 (the slot it is made inside, else the next: firstSlot in
 * queues/cron.ts). A schedule whose expression and time zone are unchanged keeps its next slot (a bootstrap that
 * declares it again neither fires nor skips one); a changed one starts from $10, the next slot (a slot that fired
 * meanwhile never fires again: the scheduler skips slots up to last_run_on). A handler's schedule ($8 managed)
 * never replaces one that schedule() made: no row comes back then. Its queue's missing row fails the foreign key
 * (QueueNotFoundError in schedules.ts).
 *
 * $1 name, $2 key, $3 cron, $4 tz, $5 data (json text or null), $6 options (json text), $7 missed, $8 managed,
 * $9 a new schedule's first slot, $10 the next slot, $11 the clock both were read from (a new row's created_on,
 * which the scheduler reads to tell its first slot from a missed one: slotsDue) (ms since the epoch)
 */
export const upsertSchedule = (s: string) => `
INSERT INTO ${s}.schedules AS c (name, key, cron, tz, data, options, missed, managed, next_run_on, created_on)
VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, coalesce(to_timestamp($9::float8 / 1000), 'infinity'), to_timestamp($11::float8 / 1000))
ON CONFLICT (name, key) DO UPDATE SET
  next_run_on = CASE WHEN c.cron = excluded.cron AND c.tz = excluded.tz THEN c.next_run_on
    ELSE coalesce(to_timestamp($10::float8 / 1000), 'infinity') END,
  cron = excluded.cron, tz = excluded.tz, data = excluded.data, options = excluded.options, missed = excluded.missed,
  managed = excluded.managed, updated_on = now()
WHERE c.managed OR NOT excluded.managed
RETURNING name`;

/** Removes one schedule. $1 name, $2 key */
export const deleteSchedule = (s: string) => `DELETE FROM ${s}.schedules WHERE name = $1 AND key = $2 RETURNING name`;

/** Removes the schedules of queue $1 that a @QueueHandler made and no longer declares (keys other than $2). */
export const deleteUndeclaredSchedules = (s: string) => `
DELETE FROM ${s}.schedules WHERE name = $1 AND managed AND NOT (key = ANY($2::text[])) RETURNING key`;

/** The schedules of queue $1 (null: of every queue), by queue and key. */
export const listSchedules = (s: string) => `
SELECT name, key, cron, tz, data, options, missed, managed,
  CASE WHEN next_run_on = 'infinity' THEN NULL ELSE next_run_on END AS next_run_on,
  last_run_on, last_job_id::text AS last_job_id, created_on, updated_on
FROM ${s}.schedules
WHERE $1::text IS NULL OR name = $1
ORDER BY name, key`;

/**
 * A scheduler pass's due schedules, locked for its transaction: another instance's pass skips them, and once this
 * one commits finds their next slot moved on. With the database's clock (the transaction's start, in whole ms since
 * the epoch), and the data as its JSON text, sent on as it was stored (no round trip through numbers that would
 * round a large integer). $1 limit
 */
export const lockDueSchedules = (s: string) => `
SELECT name, key, cron, tz, data::text AS data, options, missed,
  (extract(epoch FROM next_run_on) * 1000)::float8 AS next_ms,
  (extract(epoch FROM last_run_on) * 1000)::float8 AS last_ms,
  (extract(epoch FROM created_on) * 1000)::float8 AS created_ms,
  floor(extract(epoch FROM now()) * 1000)::float8 AS now_ms
FROM ${s}.schedules
WHERE next_run_on <= now()
ORDER BY next_run_on
LIMIT $1
FOR UPDATE SKIP LOCKED`;

/**
 * Moves a schedule on after its slots fired: its next slot ($3, ms since the epoch; null: none left), and when a job
 * fired, the last slot that fired ($4; for missed slots fired as one, when they fired) and its job ($5, null when
 * the queue's policy refused it).
 *
 * $1 name, $2 key, $3 next slot, $4 last slot fired (or null), $5 last job id (or null)
 */
export const advanceSchedule = (s: string) => `
UPDATE ${s}.schedules SET
  next_run_on = coalesce(to_timestamp($3::float8 / 1000), 'infinity'),
  last_run_on = CASE WHEN $4::float8 IS NULL THEN last_run_on ELSE to_timestamp($4::float8 / 1000) END,
  last_job_id = CASE WHEN $4::float8 IS NULL THEN last_job_id ELSE $5::bigint END
WHERE name = $1 AND key = $2`;

/** How long until the next slot of any schedule, in ms (negative: due now; null: no schedule). */
export const nextScheduleIn = (s: string) => `
SELECT (extract(epoch FROM min(next_run_on) - clock_timestamp()) * 1000)::float8 AS in_ms
FROM ${s}.schedules WHERE next_run_on <> 'infinity'`;
