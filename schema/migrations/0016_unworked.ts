import type { Migration } from './index.js';

/**
 * failUnworkedAfterSeconds (lib/core/passes/unworked.ts): a queue may ask that its ready jobs fail when no live
 * worker loop of the cluster has worked it for that long, instead of waiting unseen.
 * - `queues.fail_unworked_after_seconds`: the queue's setting (null: off, the default).
 * - `queues.unworked_since`: when the maintenance pass first found such a queue with no live loop (null while one
 *   works it, while it is paused, or when it has no setting). Kept by the pass alone; a change of the setting clears it.
 * Two nullable columns of `queues`: no row of `jobs` is read, and the release before keeps working (it names the
 * columns it reads and writes).
 */
export const unworked: Migration = {
  version: 16,
  name: 'unworked',
  up: (s) => `
ALTER TABLE ${s}.queues ADD COLUMN fail_unworked_after_seconds integer CHECK (fail_unworked_after_seconds > 0);
ALTER TABLE ${s}.queues ADD COLUMN unworked_since timestamptz;
`,
};
