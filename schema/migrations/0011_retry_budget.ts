import type { Migration } from './index.js';

/**
 * retry() gives a failed job a fresh attempt budget. `retry_count` never goes back (it is the attempt's fence: a
 * result held for an earlier attempt must not settle a later one), so retry() raises `retry_limit` by the budget
 * instead and records in `retry_base` the retry count its budget starts from: backoff counts its exponent from
 * there (a retried job backs off from its first delay again), and `retry_limit - retry_base` is the budget the
 * next retry() restores. A constant default: adding the column rewrites no row.
 */
export const retryBudget: Migration = {
  version: 11,
  name: 'retry_budget',
  up: (s) => `
ALTER TABLE ${s}.jobs ADD COLUMN retry_base integer NOT NULL DEFAULT 0;
`,
};
