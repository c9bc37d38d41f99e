import type { Migration } from './index.js';

/**
 * Two lookups pg-boss users reach for:
 * - `subscriptions`: which queues an event fans out to (publish/subscribe). A row per event and queue; deleting a
 *   queue deletes its subscriptions, so a publish never names a queue that is gone.
 * - `job_deps_child_idx`: a flow child's parents (getDependencies). job_deps is keyed by the parent, so without
 *   it the lookup by child reads the whole table. A flow insert adds one more index entry per link; sends
 *   without a flow write no job_deps row and pay nothing.
 * Both are new objects: neither rewrites a row of `jobs`.
 */
export const subscriptions: Migration = {
  version: 14,
  name: 'subscriptions',
  up: (s) => `
CREATE TABLE ${s}.subscriptions (
  event text NOT NULL,
  queue text NOT NULL REFERENCES ${s}.queues (name) ON DELETE CASCADE,
  created_on timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event, queue)
);
CREATE INDEX subscriptions_queue_idx ON ${s}.subscriptions (queue);
CREATE INDEX job_deps_child_idx ON ${s}.job_deps (child_queue, child_id);
`,
};
