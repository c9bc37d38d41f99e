// drain(): runs the jobs of a queue that are due now through this process's worker loops, and waits until none is
// left. It claims nothing itself: it wakes the loops (which claim, run and settle as always: fencing, policies, the
// Nest pipeline) and watches the queue's counts, recounted at each look.
import { QueueNotFoundError } from '../core/errors.js';
import type { JobName } from '../core/job-definition.js';
import type { PgQueue } from '../core/pg-queue.js';
import { noUnknownKeys, optBool, record } from '../core/config/validate.js';
import { JobsFailedError, NoWorkerError, WaitTimeoutError } from './errors.js';
import { assertRuns, heldHere, LOOK_EVERY_MS, queueOf, timeoutOf, withLoops, type JobError, type OutcomeWatch } from './watch.js';

/** Options of drain(). */
export interface DrainOptions {
  /** How long drain waits for the queue to run dry, in milliseconds (1 to 2147483647; default 4000). */
  timeoutMs?: number;
  /** Throw JobsFailedError when a job failed for good during the drain (default false: it is in `failed`). */
  throwOnFailure?: boolean;
}

/**
 * What a drain ran: the outcomes this process wrote for the queue's jobs while it waited (every job it ran, when the
 * loops were held before it), and what it left.
 */
export interface DrainResult {
  queue: string;
  /** The ids of the jobs completed, in the order they completed. */
  completed: string[];
  /** Jobs that failed for good (no retry left, or a PermanentJobError), with the error of their last attempt. */
  failed: { id: string; error: JobError }[];
  /**
   * Jobs an attempt of which failed, and that wait for a retry due later (retryDelay, retryBackoff,
   * retryAfterSeconds): not run again by this drain. A retry due at once is run, and ends in another list.
   */
  retrying: { id: string; error: JobError; retryInSeconds: number | null }[];
  /** How many of the queue's jobs wait for a later `startAfter` (sent deferred, or retrying) once the drain ended. */
  deferred: number;
}

const KEYS = new Set(['timeoutMs', 'throwOnFailure']);

/**
 * Runs every job of queue `name` that is due now through this process's worker loops (those of `@QueueHandler` or
 * `work()`), and resolves once the queue has no job due and none active. It claims nothing itself: it wakes the
 * queue's loops and waits, so each job runs as in production (the Nest pipeline, the queue's policy, fencing,
 * retries). Loops held stopped (`startWorkers: false`, stopWorking) are started for the drain and held again after.
 * Throws NoWorkerError, WaitTimeoutError after `timeoutMs`, and with `throwOnFailure` JobsFailedError.
 * What it runs, lists and leaves: docs/testing.md, "Running the jobs".
 */
export async function drain(queue: PgQueue, name: JobName, options: DrainOptions = {}): Promise<DrainResult> {
  const queueName = queueOf(name);
  const o = record('options', options);
  noUnknownKeys('options', o, KEYS);
  const timeoutMs = timeoutOf('options.timeoutMs', o.timeoutMs);
  const throwOnFailure = optBool('options.throwOnFailure', o.throwOnFailure) ?? false;
  return withLoops(queue, queueName, 'drain', async (registry, watch) => {
    const deadline = Date.now() + timeoutMs;
    let dry = 0;

    for (;;) {
      const counts = await queue.getQueue(queueName, { force: true });
      if (!counts) throw new QueueNotFoundError(queueName);
      // checked again at each look: a loop may stop, and a queue be paused, while drain waits
      assertRuns(queue, registry, queueName, 'drain');
      if (counts.paused) throw new NoWorkerError('drain', queueName, 'the queue is paused; resumeQueue() lets the loops claim again');
      // The database's counts say the queue is dry; the loops' own count says every outcome written here was also
      // reported (an attempt leaves its loop after its events), so the result misses none. Dry twice in a row: a
      // retry due at once is stamped with its settle's transaction time, which is later than a count's own now()
      // when the settle began after the count and committed before it read; to that count the job looks deferred.
      // A count begun after it ended reads it as due.
      if (counts.readyCount === 0 && counts.activeCount === 0 && heldHere(registry, queueName) === 0) {
        if (++dry < 2) continue;
        const result = resultOf(queueName, watch, counts.deferredCount);
        if (throwOnFailure && result.failed.length > 0) throw new JobsFailedError(result);
        return result;
      }
      dry = 0;
      if (Date.now() >= deadline) {
        const done = resultOf(queueName, watch, counts.deferredCount);
        throw new WaitTimeoutError(
          'drain',
          queueName,
          timeoutMs,
          `${counts.readyCount} job(s) due and not started, ${counts.activeCount} active (${done.completed.length} completed and ${done.failed.length} failed meanwhile)` +
            (counts.policy === 'key_strict_fifo' ? '; a key held back by a failed job keeps its jobs waiting (getBlockedKeys)' : ''),
        );
      }
      // The loops claim what is due when woken, without waiting for a NOTIFY or their poll.
      if (counts.readyCount > 0) registry.wake(queueName);
      await watch.next(Math.min(LOOK_EVERY_MS, Math.max(1, deadline - Date.now())));
    }
  });
}

function resultOf(queue: string, watch: OutcomeWatch, deferred: number): DrainResult {
  const result: DrainResult = { queue, completed: [], failed: [], retrying: [], deferred };
  for (const [id, outcome] of watch.outcomes) {
    if (outcome.state === 'completed') result.completed.push(id);
    else if (outcome.state === 'failed') result.failed.push({ id, error: outcome.error });
    else result.retrying.push({ id, error: outcome.error, retryInSeconds: outcome.retryInSeconds });
  }
  return result;
}
