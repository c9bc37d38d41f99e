// What a batch handler's result says of each job of its call: one output for them all, a Map from job id to result,
// or, with `perJobResults`, pg-boss's array of `{ id, status, output }`. Pure (no database, no clock): the batch
// runner writes what this reads, and test/unit/batch-results.spec.ts checks every shape.
import { QueueError } from '../../errors.js';
import { toJson } from '../../config/validate.js';
import { describeFailure, type FailureInfo } from './failure.js';

/** One attempt's outcome: what it returned (JSON text, or null), or how it failed. */
export interface Outcome {
  output: string | null;
  failure: FailureInfo | null;
}

/** The statuses a per-job result may have (pg-boss's JobResultStatus). */
export const RESULT_STATUSES: readonly string[] = ['completed', 'failed', 'deadletter'];

/** A job of the call, as the result is read against it. */
export interface ResultJob {
  readonly id: string;
  readonly retryCount: number;
}

/** Each job's outcome by id (every job of the call has one), and what the result named that is no job of the call. */
export interface ReadResults {
  readonly outcomes: ReadonlyMap<string, Outcome>;
  /** Ids (or a description of an entry that has none) that name no job of the call: said in the log. */
  readonly strays: readonly string[];
}

/** A failure the result itself decides (a job it leaves out, a status it does not know): retried as a throw is. */
function resultFailure(job: ResultJob, message: string, code: string): Outcome {
  return { output: null, failure: describeFailure(new QueueError(message, code), job.retryCount) };
}

const leftOut = (job: ResultJob, form: string): Outcome =>
  resultFailure(
    job,
    `the batch handler's ${form} named no result for job ${job.id}: a job the results leave out fails (it is retried while retries remain)`,
    'BATCH_RESULT_MISSING',
  );

/** A value the handler gave as a job's output; one JSON cannot hold fails that job alone. */
function completed(job: ResultJob, value: unknown): Outcome {
  try {
    return { output: toJson('handler output', value), failure: null };
  } catch (err) {
    return { output: null, failure: describeFailure(err, job.retryCount) };
  }
}

/** A failure the handler reported: `value` described as a throw of it would be, or a default when it gave none. */
function failed(job: ResultJob, value: unknown, permanent: boolean): Outcome {
  const failure = describeFailure(value ?? new Error('failed by its batch handler'), job.retryCount);
  return { output: null, failure: permanent ? { ...failure, permanent: true } : failure };
}

/**
 * Reads a batch handler's (resolved) result against the jobs of its call:
 * - `perJob` (WorkOptions.perJobResults): an array of `{ id, status, output }`. `completed` completes the job with
 *   `output`; `failed` fails it with `output` as what was thrown (retried while retries remain); `deadletter` fails it
 *   for good (copied to the queue's dead-letter queue, if it has one). A later entry for the same id wins. A status
 *   it does not know fails that job; anything but an array fails every job of the call.
 * - otherwise a `Map` from job id to result: a value completes the job with it, an `Error` fails it as a throw would.
 * - anything else: every job completes with it as its output (one JSON cannot hold fails them all).
 * Under a Map or an array, a job the result leaves out fails with `BATCH_RESULT_MISSING` (never completes unsaid).
 */
export function readResults(result: unknown, jobs: readonly ResultJob[], perJob: boolean): ReadResults {
  const outcomes = new Map<string, Outcome>();
  const ids = new Set(jobs.map((j) => j.id));
  const strays: string[] = [];
  if (perJob) {
    if (!Array.isArray(result)) {
      const got = result === null ? 'null' : result instanceof Map ? 'a Map' : typeof result;
      for (const job of jobs) {
        outcomes.set(
          job.id,
          resultFailure(
            job,
            `the batch handler resolved with ${got}; with perJobResults it must resolve with an array of { id, status, output }, one per job`,
            'BATCH_RESULT_INVALID',
          ),
        );
      }
      return { outcomes, strays };
    }
    const byId = new Map(jobs.map((j) => [j.id, j]));
    for (const entry of result as unknown[]) {
      const id = typeof entry === 'object' && entry !== null ? (entry as { id?: unknown }).id : undefined;
      const job = typeof id === 'string' ? byId.get(id) : undefined;
      if (!job) {
        strays.push(typeof id === 'string' ? `"${id}"` : `an entry whose id is ${id === undefined ? 'missing' : typeof id}`);
        continue;
      }
      const { status, output } = entry as { status?: unknown; output?: unknown };
      if (status === 'completed') outcomes.set(id as string, completed(job, output));
      else if (status === 'failed' || status === 'deadletter') outcomes.set(id as string, failed(job, output, status === 'deadletter'));
      else {
        const said = typeof status === 'string' ? `"${status.slice(0, 100)}"` : String(typeof status);
        outcomes.set(
          id as string,
          resultFailure(
            job,
            `the batch handler's result for job ${job.id} has status ${said}; a status is one of ${RESULT_STATUSES.join(', ')}`,
            'BATCH_RESULT_INVALID',
          ),
        );
      }
    }
    for (const job of jobs) if (!outcomes.has(job.id)) outcomes.set(job.id, leftOut(job, 'array of results'));
    return { outcomes, strays };
  }
  if (result instanceof Map) {
    for (const key of result.keys())
      if (!(typeof key === 'string' && ids.has(key))) strays.push(typeof key === 'string' ? `"${key}"` : typeof key);
    for (const job of jobs) {
      if (!result.has(job.id)) outcomes.set(job.id, leftOut(job, 'Map'));
      else {
        const value: unknown = result.get(job.id);
        outcomes.set(job.id, value instanceof Error ? failed(job, value, false) : completed(job, value));
      }
    }
    return { outcomes, strays };
  }
  let shared: string | null;
  try {
    shared = toJson('handler output', result);
  } catch (err) {
    for (const job of jobs) outcomes.set(job.id, { output: null, failure: describeFailure(err, job.retryCount) });
    return { outcomes, strays };
  }
  for (const job of jobs) outcomes.set(job.id, { output: shared, failure: null });
  return { outcomes, strays };
}
