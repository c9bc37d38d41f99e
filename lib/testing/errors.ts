// The errors of nestjs-pgqueue/testing. Like the engine's, each extends QueueError and carries a stable `code`;
// expectSent's failed assertion is the exception: it throws a plain Error, as any test runner reports one.
import { QueueError } from '../core/errors.js';
import type { DrainResult } from './drain.js';

/**
 * drain() or runJob() was asked about a queue whose jobs no worker loop of this process will run: waiting would only
 * end at the deadline. `reason` says why (no handler here, loops held stopped, workers off, the queue paused).
 */
export class NoWorkerError extends QueueError {
  constructor(
    readonly caller: string,
    readonly queue: string,
    readonly reason: string,
  ) {
    super(
      `${caller}("${queue}"): no worker loop of this process will run the queue's jobs: ${reason} (${caller} runs jobs through this process's own loops, those of @QueueHandler or work())`,
      'NO_WORKER',
    );
  }
}

/** drain() or runJob() did not see the end it waits for within its `timeoutMs`; `left` says what was still going on. */
export class WaitTimeoutError extends QueueError {
  constructor(
    readonly caller: string,
    readonly queue: string,
    readonly timeoutMs: number,
    readonly left: string,
  ) {
    super(`${caller}("${queue}") timed out after ${timeoutMs} ms: ${left}`, 'WAIT_TIMEOUT');
  }
}

/** runJob() sent no job: the queue's policy (singleton, throttling) suppressed it, or its dedupeKey was held. */
export class JobNotSentError extends QueueError {
  constructor(
    readonly queue: string,
    why = `the queue's policy suppressed the job (enqueue() answered no id)`,
  ) {
    super(`runJob("${queue}"): ${why}, so no handler ran for it; the jobs that hold its slot are in findJobs("${queue}")`, 'JOB_NOT_SENT');
  }
}

/** No PostgreSQL could be found or started for the tests; the message says what was tried and what to install. */
export class NoTestDatabaseError extends QueueError {
  constructor(
    readonly tried: string[],
    advice: string,
  ) {
    super(`startTestDatabase(): no PostgreSQL to test against (${tried.join('; ')}). ${advice}`, 'NO_TEST_DATABASE');
  }
}

/** drain() with `throwOnFailure`: jobs failed for good while it ran. `result` is what drain() would have returned. */
export class JobsFailedError extends QueueError {
  constructor(readonly result: DrainResult) {
    const listed = result.failed.slice(0, 5).map((f) => `job ${f.id}: ${f.error.message}`);
    if (result.failed.length > listed.length) listed.push(`and ${result.failed.length - listed.length} more`);
    super(`drain("${result.queue}"): ${result.failed.length} job(s) failed for good: ${listed.join('; ')}`, 'JOBS_FAILED');
  }
}
