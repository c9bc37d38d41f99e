// The calls on jobs named by id or by queue, half of the engine's public face (PgQueue extends it, and it extends
// SendingCalls): fetch and settle by hand, cancel, resume, retry, redrive, delete, read, and the bulk deletes.
// Each is one delegation to the unit that owns it.
import type { ChangeResult, CompleteOptions } from './job-control.js';
import type { FetchOptions } from './fetcher.js';
import type { FindJobsOptions, JobPage } from './job-finder.js';
import type { RedriveOptions, RedriveResult } from './redrive.js';
import { SendingCalls } from './sending-calls.js';
import type { Job, JobRef, JobWithMetadata } from './types.js';

export abstract class JobCalls extends SendingCalls {
  /** Claims up to `batchSize` runnable jobs (default 1); settle them with `complete` or `fail`. */
  fetch<T = unknown>(name: string, options?: FetchOptions): Promise<Job<T>[]> {
    return this.units.fetcher.fetch<T>(name, options);
  }

  /**
   * Completes active jobs with `output`; a `{ id, retryCount }` ref completes only that attempt. With
   * `includeQueued`, also jobs that have not started (created, retry).
   */
  complete(name: string, ids: JobRef | JobRef[], output?: unknown, options?: CompleteOptions): Promise<ChangeResult> {
    return this.units.jobs.complete(name, ids, output, options);
  }

  /** Fails jobs that have not finished: retried while retries remain, else failed. */
  fail(name: string, ids: JobRef | JobRef[], error?: unknown): Promise<ChangeResult> {
    return this.units.jobs.fail(name, ids, error);
  }

  /**
   * Extends the heartbeat of active jobs by their `heartbeatSeconds` from now (not their lease); a
   * `{ id, retryCount }` ref touches only that attempt. `ids` names the jobs still active.
   */
  touch(name: string, ids: JobRef | JobRef[]): Promise<ChangeResult> {
    return this.units.jobs.touch(name, ids);
  }

  /** Cancels jobs that have not finished; a running handler's result is then discarded. */
  cancel(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.units.jobs.cancel(name, ids);
  }

  /** Brings cancelled jobs back to the queue. */
  resume(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.units.jobs.resume(name, ids);
  }

  /**
   * Puts failed jobs back in the queue to run again. All or nothing: a job that is not failed makes it
   * throw `JobStateError` (an unknown id `JobNotFoundError`) and nothing changes.
   */
  retry(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.units.jobs.retry(name, ids);
  }

  /**
   * Moves dead-lettered jobs of the dead-letter queue `name` (waiting or failed there) back to the queues
   * they came from, as new jobs under those queues' settings. `ids` limits it to some jobs, `limit` caps
   * how many move (default 1000), `sourceName` keeps to jobs that came from that queue, and `destination` moves
   * them into that queue (under its settings) instead. Returns the new jobs' ids.
   */
  redrive(name: string, options?: RedriveOptions): Promise<RedriveResult> {
    return this.units.redrive.redrive(name, options);
  }

  /** Deletes jobs in any state. */
  deleteJob(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.units.jobs.deleteJob(name, ids);
  }

  /** The job with id `id` in queue `name`, in any state, with its metadata; null when there is none. */
  getJobById<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T> | null> {
    return this.units.jobs.getJobById<T>(name, id);
  }

  /** A page of queue `name`'s jobs, newest first, filtered by state and key; `next` is the cursor of the next page. */
  findJobs<T = unknown>(name: string, options?: FindJobsOptions): Promise<JobPage<T>> {
    return this.units.finder.findJobs<T>(name, options);
  }

  /** Deletes the queue's waiting jobs (created, retry) in batches; flow children waiting for them fail or are cancelled. Returns how many. */
  deleteQueuedJobs(name: string): Promise<number> {
    return this.units.bulk.deleteQueuedJobs(name);
  }

  /** Deletes the queue's finished jobs in batches, but those retention also keeps (docs/guide.md, "Queues"). Returns how many. */
  deleteStoredJobs(name: string): Promise<number> {
    return this.units.bulk.deleteStoredJobs(name);
  }

  /** deleteQueuedJobs then deleteStoredJobs, for queue `name` or every queue; active jobs stay. Returns how many. */
  deleteAllJobs(name?: string): Promise<number> {
    return this.units.bulk.deleteAllJobs(name);
  }
}
