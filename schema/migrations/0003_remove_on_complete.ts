import type { Migration } from './index.js';

/**
 * removeOnComplete: a queue whose jobs are deleted when they complete, instead of kept for deleteAfterSeconds
 * (see completeJobs in lib/core/sql/settle.ts). Adding a column with a constant default rewrites nothing.
 */
export const removeOnComplete: Migration = {
  version: 3,
  name: 'remove_on_complete',
  up: (s) => `ALTER TABLE ${s}.queues ADD COLUMN remove_on_complete boolean NOT NULL DEFAULT false;`,
};
