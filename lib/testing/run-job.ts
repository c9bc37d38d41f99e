// runJob(): one job, sent for real and run by the handler this process registered for its queue, with the outcome
// read back from the database. Nothing is called directly: the job goes through what a production job goes through
// (its payload's schema, the claim, the Nest pipeline's guards and interceptors, the fenced settle).
import { InvalidOptionError, JobNotFoundError } from '../core/errors.js';
import type { JobName } from '../core/job-definition.js';
import type { PgQueue } from '../core/pg-queue.js';
import type { JobWithMetadata, SendOptions } from '../core/types.js';
import { noUnknownKeys, record } from '../core/config/validate.js';
import { JobNotSentError, NoWorkerError, WaitTimeoutError } from './errors.js';
import { assertRuns, LOOK_EVERY_MS, queueOf, timeoutOf, withLoops } from './watch.js';

/** Options of runJob(). */
export interface RunJobOptions {
  /** How long runJob waits for the job's end, in milliseconds (1 to 2147483647; default 4000). */
  timeoutMs?: number;
  /**
   * The options of the send (priority, singletonKey, startAfter…). `retryLimit` is 0 unless given here: the handler
   * runs once, and a throw fails the job. With retries, runJob waits for the last attempt.
   */
  send?: SendOptions;
}

/** How a job that runJob ran ended. */
export interface RunJobResult<T = unknown, O = unknown> {
  state: 'completed' | 'failed' | 'cancelled';
  /** What the handler returned (as stored: JSON), when the job completed; else null. */
  output: O | null;
  /** The error of the job's last attempt (`name`, `message`, `stack`, its own fields), when the job failed; else null. */
  error: JobWithMetadata['lastError'];
  /** The job as stored at its end; null when the queue's `removeOnComplete` deleted it (its output went with it). */
  job: JobWithMetadata<T> | null;
}

const KEYS = new Set(['timeoutMs', 'send']);
const ENDS = new Set(['completed', 'failed', 'cancelled']);

/**
 * Sends one job with `data` to queue `name` (a name or a `defineJob()` job) and waits until the handler this process
 * registered for the queue (`@QueueHandler` or `work()`) has run it, through the same path as any other job.
 * Resolves with its end (`completed`, `failed` with the error, or `cancelled`); it does not throw for a failed job.
 * The job is sent with `retryLimit: 0` unless `options.send` says otherwise. Throws what send() throws,
 * NoWorkerError, JobNotSentError and WaitTimeoutError (only the last leaves a job behind).
 * More: docs/testing.md, "Running the jobs".
 */
export async function runJob<T = unknown, O = unknown>(
  queue: PgQueue,
  name: JobName<T>,
  data: NoInfer<T>,
  options: RunJobOptions = {},
): Promise<RunJobResult<T, O>> {
  const queueName = queueOf(name);
  const o = record('options', options);
  noUnknownKeys('options', o, KEYS);
  const timeoutMs = timeoutOf('options.timeoutMs', o.timeoutMs);
  if (o.send !== undefined && (o.send === null || typeof o.send !== 'object' || Array.isArray(o.send)))
    throw new InvalidOptionError('options.send', 'an object of send options', o.send);
  const stored = await queue.getQueue(queueName);
  if (stored?.paused) throw new NoWorkerError('runJob', queueName, 'the queue is paused; resumeQueue() lets the loops claim again');
  const send = o.send as SendOptions | undefined;
  // in a caller's transaction the job is not visible until it commits: runJob would wait for nothing
  if (send?.db !== undefined) throw new InvalidOptionError('options.send.db', "left out: runJob sends on the engine's pool", send.db);
  // watched before the send: an outcome written before the first look is not missed
  return withLoops(queue, queueName, 'runJob', async (registry, watch) => {
    const deadline = Date.now() + timeoutMs;

    const opts = { retryLimit: 0, ...send };
    // (each branch picks its overload: a declared job's, or a queue name's)
    const sent = await (typeof name === 'string' ? queue.enqueue(name, data, opts) : queue.enqueue(name, data, opts));
    if (sent.id === null) throw new JobNotSentError(queueName);
    // a dedupeKey held by another job answers that job: its outcome is not this call's
    if (sent.deduped) throw new JobNotSentError(queueName, `its dedupeKey is held by job ${sent.id}`);
    const id = sent.id;
    for (;;) {
      const job = await queue.getJobById<T>(queueName, id);
      if (!job) {
        // deleted at its end by removeOnComplete: its completion was reported here
        if (watch.outcomes.get(id)?.state === 'completed') return { state: 'completed', output: null, error: null, job: null };
        throw new JobNotFoundError(queueName, id);
      }
      if (ENDS.has(job.state)) {
        const state = job.state as RunJobResult['state'];
        return {
          state,
          output: state === 'completed' ? ((job.output ?? null) as O | null) : null,
          error: state === 'failed' ? job.lastError : null,
          job,
        };
      }
      if (Date.now() >= deadline) {
        const when = job.startAfter && job.startAfter.getTime() > Date.now() ? `, due at ${job.startAfter.toISOString()}` : '';
        throw new WaitTimeoutError('runJob', queueName, timeoutMs, `job ${id} is ${job.state}${when}`);
      }
      assertRuns(queue, registry, queueName, 'runJob');
      if (job.state !== 'active') registry.wake(queueName);
      await watch.next(Math.min(LOOK_EVERY_MS, Math.max(1, deadline - Date.now())));
    }
  });
}
