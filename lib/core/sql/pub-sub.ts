import { insertStatement } from './insert-jobs.js';

/**
 * subscribe(): adds the subscription of queue $2 to event $1, when the queue exists. Answers whether the queue
 * exists and whether a row was added (false: it was there already). A queue deleted by another transaction while
 * this one runs makes the insert fail on the foreign key (23503), which the caller reads as "no such queue".
 */
export const subscribeQueue = (s: string) => `
WITH q AS (SELECT name FROM ${s}.queues WHERE name = $2),
added AS (
  INSERT INTO ${s}.subscriptions (event, queue) SELECT $1, q.name FROM q
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM q) AS queue_exists, EXISTS (SELECT 1 FROM added) AS added`;

/** unsubscribe(): removes the subscription of queue $2 to event $1; a row back when there was one. */
export const unsubscribeQueue = (s: string) => `
DELETE FROM ${s}.subscriptions WHERE event = $1 AND queue = $2 RETURNING 1 AS removed`;

/** The subscribed queues of event $1 (one probe of the primary key), joined to their queues. */
const SUBSCRIBED = (s: string) => `${s}.subscriptions sub JOIN ${s}.queues q ON q.name = sub.queue`;

/**
 * publish(): the insert of send (insert-jobs.ts), once per queue subscribed to event $1, in one statement: each job
 * under its own queue's settings and policy, ON CONFLICT DO NOTHING as a send in a caller's transaction (a job its
 * queue's policy, dedupe key or throttle slot refuses is not made). $2-$23 as insertJobs, with one job: the arrays
 * hold one entry (or are null). The jobs go into `jobs`, which routes each row to its queue's partition, and its
 * statement trigger sends each queue's NOTIFY, delivered at commit.
 *
 * A key_strict_fifo queue takes no job without a singleton key (send refuses it): when such a queue is subscribed
 * and $6 gives no key, nothing is inserted and the rows back name those queues with a null id.
 * Rows: (queue, id) of each job made, by queue name, then (queue, null) of each refusing queue.
 */
export const publishJobs = (s: string) => `
WITH keyless AS (
  SELECT q.name FROM ${SUBSCRIBED(s)}
  WHERE sub.event = $1 AND q.policy = 'key_strict_fifo' AND ($6::text[])[1] IS NULL
), published AS (${insertStatement(s, true, false, {
  from: SUBSCRIBED(s),
  where: 'sub.event = $1 AND NOT EXISTS (SELECT 1 FROM keyless)',
  order: 'x.queue',
  returning: 'queue, id::text',
})})
SELECT queue, id FROM published
UNION ALL
SELECT name, NULL FROM keyless
ORDER BY 1`;
