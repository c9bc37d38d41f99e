import type { ParsedSendOptions } from '../config/options.js';
import { WAKE_PAYLOAD } from './fragments.js';

/** Row j's start after the update: as send() computes it when startAfter is given. */
const NEW_START = `CASE WHEN 'startAfter' = ANY ($4::text[])
      THEN coalesce($7::timestamptz, now() + coalesce($8::int, 0) * interval '1 second') ELSE j.start_after END`;

/**
 * update()/upsert(): changes the payload and options of waiting jobs (created, retry) of queue $1, in one
 * statement, never a job that started: the jobs are locked first (FOR NO KEY UPDATE), and PostgreSQL checks the
 * state again on a row's newest version before it locks it. Only the fields named in $4 change, each to what send()
 * would have stored; keep_until moves with start_after. A job waiting for its flow parents refuses a change of
 * either (its rows come back `blocked`), and a change of startAfter wakes the queue's workers as resume does
 * (docs/design.md, "Changing a waiting job: update() and upsert()").
 *
 * $1 queue, $2 id bigint (by id) or singleton key text (by key), $3 channel, $4 the fields given text[],
 * $5-$19 their values in updateArgs' order (UpdateValues; $5 data: JSON null for no data)
 */

const updateStatement = (s: string, t: string, find: string) => `
WITH target AS (
  SELECT j.id, j.blocked_by FROM ${t} j
  WHERE j.queue = $1 AND j.state IN ('created', 'retry') AND ${find}
  FOR NO KEY UPDATE OF j
), verdict AS (
  SELECT NOT EXISTS (SELECT 1 FROM target x WHERE x.blocked_by > 0)
    OR NOT ($4::text[] && ARRAY['startAfter', 'retentionSeconds']) AS ok
), changed AS (
  UPDATE ${t} j SET
    data = CASE WHEN 'data' = ANY ($4::text[]) THEN nullif($5::jsonb, 'null'::jsonb) ELSE j.data END,
    priority = CASE WHEN 'priority' = ANY ($4::text[]) THEN $6::int ELSE j.priority END,
    start_after = ${NEW_START},
    keep_until = CASE WHEN 'retentionSeconds' = ANY ($4::text[]) THEN ${NEW_START} + $16::int * interval '1 second'
      WHEN j.keep_until = 'infinity' OR j.start_after = 'infinity' THEN j.keep_until
      ELSE ${NEW_START} + (j.keep_until - j.start_after) END,
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
  CROSS JOIN (SELECT q.retry_delay_max, q.heartbeat_seconds FROM ${s}.queues q WHERE q.name = $1) q
  WHERE v.ok AND j.queue = $1 AND j.id = x.id
  RETURNING j.id, j.start_after
), woke AS (
  SELECT pg_notify($3, ${WAKE_PAYLOAD('$1', 'w.at')})::text AS notified FROM (
    SELECT min(c.start_after) AS at FROM changed c
    WHERE 'startAfter' = ANY ($4::text[]) AND c.start_after < 'infinity'
    GROUP BY c.start_after > now()
    UNION ALL
    SELECT now() WHERE 'startAfter' = ANY ($4::text[]) AND EXISTS (SELECT 1 FROM changed)
      AND (SELECT q.policy FROM ${s}.queues q WHERE q.name = $1) = 'key_strict_fifo'
  ) w
  WHERE (SELECT q.notify FROM ${s}.queues q WHERE q.name = $1)
)
SELECT c.id::text, false AS blocked, (SELECT min(w.notified) FROM woke w) AS notified FROM changed c
UNION ALL
SELECT x.id::text, true, NULL FROM target x, verdict v WHERE NOT v.ok AND x.blocked_by > 0`;

/** update() by id: the one job, if it waits. $2 id */
export const updateJobById = (s: string, t = `${s}.jobs`) => updateStatement(s, t, 'j.id = $2::bigint');

/** update() by singletonKey, match 'all': every waiting job of the key, locked in id order. $2 singleton key */
export const updateJobsByKey = (s: string, t = `${s}.jobs`) => updateStatement(s, t, `j.singleton_key = $2::text ORDER BY j.id`);

/** update() by singletonKey, match 'newest': the waiting job of the key sent last. $2 singleton key */
export const updateNewestByKey = (s: string, t = `${s}.jobs`) =>
  updateStatement(s, t, `j.singleton_key = $2::text ORDER BY j.id DESC LIMIT 1`);

/** update() by singletonKey, match 'oldest': the waiting job of the key sent first. $2 singleton key */
export const updateOldestByKey = (s: string, t = `${s}.jobs`) => updateStatement(s, t, `j.singleton_key = $2::text ORDER BY j.id LIMIT 1`);

/**
 * upsert(): serialises the upserts of one key of one queue until the transaction ends, so that two of them
 * that find nothing to update do not both insert (the queue's length first keeps every (queue, key) pair apart).
 * That holds only under READ COMMITTED, where the update after the lock reads what an upsert before it committed:
 * a REPEATABLE READ or SERIALIZABLE snapshot was taken before the wait, so the row answers the level and the
 * caller refuses the others. $1 queue, $2 singleton key
 */
export const lockUpsertKey = (_s: string) => `
SELECT current_setting('transaction_isolation') AS isolation,
  pg_advisory_xact_lock(1885824377, hashtext(length($1) || ':' || $1 || $2))::text AS locked`;

/**
 * upsert() with a caller's `db`: the key's lock lasts until the transaction ends, so the caller's executor must be
 * inside one. SAVEPOINT is refused outside a transaction block (25P01), which is how a pool, a Drizzle database or
 * a client without BEGIN is told apart; the savepoint itself is released at once.
 */
export const upsertSavepoint = (_s: string) => `SAVEPOINT pgqueue_upsert`;
export const releaseUpsertSavepoint = (_s: string) => `RELEASE SAVEPOINT pgqueue_upsert`;
export const rollbackUpsertSavepoint = (_s: string) => `ROLLBACK TO SAVEPOINT pgqueue_upsert`;

/**
 * upsert() by id, when no job of the queue has the id: the last id the jobs' sequence handed out. An id up to it may
 * be given to the job upsert inserts (its job is gone, or never committed); one above it would be handed to another
 * job later.
 */
export const lastJobId = (s: string) => `SELECT last_value::text AS last FROM ${s}.jobs_id_seq`;

/** upsert() by id: gives the job it just inserted (in its transaction, named by nothing else yet) the id asked. $1 queue, $2 id, $3 new id */
export const rekeyJob = (s: string, t = `${s}.jobs`) =>
  `UPDATE ${t} j SET id = $3::bigint WHERE j.queue = $1 AND j.id = $2::bigint RETURNING j.id::text`;

/** upsert()'s own transaction: READ COMMITTED whatever the server's default (lockUpsertKey needs it). */
export const upsertIsolation = (_s: string) => `SET TRANSACTION ISOLATION LEVEL READ COMMITTED`;

/** The fields update() may change, as send() parses them (SendOptions names), and the payload's JSON text. */
export interface UpdateValues extends Omit<
  ParsedSendOptions,
  'blockedBy' | 'onParentFailure' | 'singletonKey' | 'dedupeKey' | 'throttle' | 'slotOffset'
> {
  data?: string | null;
}

/** The arguments of the update statements ($1-$19). `given`: the SendOptions names of the fields to change. */
export function updateArgs(queue: string, target: string, channel: string, given: readonly string[], v: UpdateValues): unknown[] {
  return [
    queue,
    target,
    channel,
    given,
    v.data ?? null,
    v.priority ?? null,
    v.startAt ?? null,
    v.startIn ?? null,
    v.retryLimit ?? null,
    v.retryDelay ?? null,
    v.retryBackoff ?? null,
    v.retryDelayMax ?? null,
    v.expireInSeconds ?? null,
    v.heartbeatSeconds ?? null,
    v.deleteAfterSeconds ?? null,
    v.retentionSeconds ?? null,
    v.deadLetter ?? null,
    v.groupId ?? null,
    v.groupTier ?? null,
  ];
}
