import type { Migration } from './index.js';

/**
 * Finding jobs (findJobs) and a job's last error (getJobById's lastError). `last_error` is set by every statement
 * that fails an attempt, and outlives a later completion (output.errors does not: a completion writes the handler's
 * output). The indexes let findJobs read only what a page shows, newest first:
 * - failed jobs: few among many completed ones, and what an operator looks for. Not cancelled ones too: resumeJobs'
 *   probe by id then read every cancelled and failed job of the queue through it (test/core/settle.spec.ts).
 * - the finished jobs of one singleton or dedupe key (waiting and active ones have indexes already, sql/find.ts).
 *   Finished ones only: a keyed job adds one entry, when it finishes. On every state, the keyed drain of
 *   `node bench/drain-cpu.mjs --keys` lost 17% of its throughput; finished only, its median was 7% lower with the
 *   runs' ranges overlapping (24,587 vs 22,829 jobs/s, 6 rounds).
 * Each is partial: a job without a key that never failed adds nothing. Pages of other states read the primary key
 * backwards.
 */
export const findJobs: Migration = {
  version: 10,
  name: 'find_jobs',
  up: (s) => `
ALTER TABLE ${s}.jobs ADD COLUMN last_error jsonb;
CREATE INDEX jobs_failed_find_idx ON ${s}.jobs (queue, id) WHERE state = 'failed';
CREATE INDEX jobs_key_find_idx ON ${s}.jobs (queue, singleton_key, id) WHERE singleton_key IS NOT NULL AND state > 'active';
CREATE INDEX jobs_dedupe_find_idx ON ${s}.jobs (queue, dedupe_key, id) WHERE dedupe_key IS NOT NULL AND state > 'active';
`,
};
