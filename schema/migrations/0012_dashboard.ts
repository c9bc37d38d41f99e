import type { Migration } from './index.js';

/**
 * What the dashboard reads once a second (lib/core/sql/dashboard.ts), so that a sample never walks the table:
 * - the jobs that finished in a window of time, newest first: throughput per second, the latest finishes' wait and
 *   run times, the live feed. One entry per job, added when it finishes. The drain of
 *   `node bench/drain-cpu.mjs --dist dist,<build with it> --rounds 6 --jobs 40000` measured 25,902 jobs/s without
 *   and 25,269 with (medians, the runs' ranges overlapping), and the same worker CPU per job.
 * - the jobs waiting for a retry, by when the retry is due: the dashboard's count of retries. A job that never fails
 *   adds nothing to it.
 */
export const dashboard: Migration = {
  version: 12,
  name: 'dashboard',
  up: (s) => `
CREATE INDEX jobs_finished_on_idx ON ${s}.jobs (completed_on) WHERE state > 'active';
CREATE INDEX jobs_retry_idx ON ${s}.jobs (start_after) WHERE state = 'retry';
`,
};
