// A job's attempts as the job view lists them: the ones that failed, from the row's `attempts` (migration 18: number,
// worker, start, end, error name, message and stack, the 20 most recent), then the attempt running or the one that
// completed the job. A failure that ended no attempt (retention, an unworked queue, a failed parent, fail() of a
// waiting job) is the job's last error, not an attempt. Pure: the rows come from
// sql/job-view.ts, what `redact` lets be seen is decided by the page (lib/dashboard/job-page.ts).
import type { JobWithMetadata } from '../types.js';

/** One attempt of a failure's record, as RETRY_OR_FAIL stores it (lib/core/sql/fragments.ts). */
export interface StoredAttempt {
  attempt: number;
  worker: string | null;
  startedOn: string | null;
  endedOn: string | null;
  name: string | null;
  message: string | null;
  stack?: string | null;
}

/** How an attempt ended (or that it runs). */
export type AttemptOutcome = 'failed' | 'lease-expired' | 'running' | 'completed';

export interface AttemptView {
  /** From 1. */
  attempt: number;
  outcome: AttemptOutcome;
  worker: string | null;
  startedOn: Date | null;
  endedOn: Date | null;
  /** The error that ended it (a failure's), as stored. */
  error: { name: string; message: string; stack: string | null } | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const date = (v: string | null): Date | null => (v === null ? null : new Date(v));

/**
 * The attempts of `job`, oldest first: those that failed, from `stored` (the row's attempts: null before any did, and
 * for a job whose failures came before migration 18, whose list then starts at its next failure; a dead-letter copy
 * starts with none of its source's), then the one it runs now, or the one that completed it, when that attempt
 * started after the last failure ended (a job completed by hand while it waited ran no attempt of its own).
 */
export function attemptsOf(job: JobWithMetadata, stored: readonly StoredAttempt[] | null): AttemptView[] {
  const failed: AttemptView[] = (stored ?? []).map((a): AttemptView => ({
    attempt: a.attempt,
    outcome: a.name === 'LeaseExpiredError' ? 'lease-expired' : 'failed',
    worker: a.worker,
    startedOn: date(a.startedOn),
    endedOn: date(a.endedOn),
    error: { name: a.name ?? 'Error', message: a.message ?? '', stack: text(a.stack) },
  }));
  const last = failed.at(-1);
  const startedSince = job.startedOn !== null && (!last?.endedOn || job.startedOn > last.endedOn);
  // (a cancelled job's row does not say whether an attempt ran when it was cancelled: none is listed for it)
  const outcome: AttemptOutcome | null =
    job.state === 'active' ? 'running' : job.state === 'completed' && startedSince ? 'completed' : null;
  if (outcome)
    failed.push({
      attempt: job.retryCount + 1,
      outcome,
      worker: job.workerId,
      startedOn: job.startedOn,
      endedOn: job.completedOn,
      error: null,
    });
  return failed;
}
