// A job's attempts as the job view lists them: the ones that failed, from the row's `attempts` (migration 18: number,
// worker, start, end, error name, message and stack, the 20 most recent), then the attempt running or the one that
// completed the job. Pure: the rows come from
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

/** The error records of output.errors (docs/guide.md, "Working"), by the retryCount each was written at. */
function errorsOf(output: unknown): Map<number, { name?: unknown; message?: unknown; stack?: unknown }> {
  const errors = (output as { errors?: unknown } | null)?.errors;
  const out = new Map<number, { name?: unknown; message?: unknown; stack?: unknown }>();
  if (!Array.isArray(errors)) return out;
  for (const e of errors)
    if (e && typeof e === 'object' && typeof (e as { retryCount?: unknown }).retryCount === 'number')
      out.set((e as { retryCount: number }).retryCount, e as object);
  return out;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const date = (v: string | null): Date | null => (v === null ? null : new Date(v));

/**
 * The attempts of `job`, oldest first. `stored`: the row's attempts (null before any failed, or for a job that failed
 * before migration 18: then the failures are read from output.errors, without worker or times).
 */
export function attemptsOf(job: JobWithMetadata, stored: readonly StoredAttempt[] | null): AttemptView[] {
  const errors = errorsOf(job.output);
  const failed: AttemptView[] = (stored ?? []).map((a): AttemptView => ({
    attempt: a.attempt,
    outcome: a.name === 'LeaseExpiredError' ? 'lease-expired' : 'failed',
    worker: a.worker,
    startedOn: date(a.startedOn),
    endedOn: date(a.endedOn),
    error: { name: a.name ?? 'Error', message: a.message ?? '', stack: text(a.stack) },
  }));
  if (stored === null)
    for (const [retryCount, e] of [...errors].sort((x, y) => x[0] - y[0]))
      failed.push({
        attempt: retryCount + 1,
        outcome: e.name === 'LeaseExpiredError' ? 'lease-expired' : 'failed',
        worker: null,
        startedOn: null,
        endedOn: null,
        error: { name: text(e.name) ?? 'Error', message: text(e.message) ?? '', stack: text(e.stack) },
      });
  // the attempt the row holds now: running, or the one that ended the job without a failure
  const current = job.retryCount + 1;
  const last = failed.at(-1);
  // (a cancelled job's row does not say whether an attempt ran when it was cancelled: none is listed for it)
  const outcome: AttemptOutcome | null = job.state === 'active' ? 'running' : job.state === 'completed' ? 'completed' : null;
  if (outcome && (!last || last.attempt < current))
    failed.push({ attempt: current, outcome, worker: job.workerId, startedOn: job.startedOn, endedOn: job.completedOn, error: null });
  return failed;
}
