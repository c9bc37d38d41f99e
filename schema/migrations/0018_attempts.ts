import type { Migration } from './index.js';

/**
 * Every attempt of a job, for the dashboard's job view (lib/core/dashboard/job-view.ts):
 * - `jobs.attempts`: the attempts that ended in a failure, oldest first, the 20 most recent (RETRY_OR_FAIL in
 *   lib/core/sql/fragments.ts appends one as it fails an active job): its number, worker, start, end and error's name,
 *   message and stack. Null until an attempt fails, so a job that completes at its first attempt writes nothing more;
 *   kept when a completion replaces `output` (and its `errors`). A job's last attempt is its own row's (started_on,
 *   completed_on).
 * - `jobs_source_idx`: a dead-letter copy by its source (source_name, source_id), so that a failed job's view links to
 *   its copy. Partial: only copies have a source, and only their inserts write to it.
 * A nullable column and an index: the release before keeps working (it names the columns it reads and writes).
 */
export const attempts: Migration = {
  version: 18,
  name: 'attempts',
  up: (s) => `
ALTER TABLE ${s}.jobs ADD COLUMN attempts jsonb;
CREATE INDEX jobs_source_idx ON ${s}.jobs (source_name, source_id) WHERE source_id IS NOT NULL;
`,
};
