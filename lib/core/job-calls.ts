// The calls on jobs named by id or by queue, half of the engine's public face (PgQueue extends it, and it extends
// SendingCalls): fetch and settle by hand, cancel, resume, retry, redrive, update, delete, read (with a flow's
// links), the bulk deletes, and publish/subscribe. Each is one delegation to the unit that owns it.
import type { JobDetails } from './jobs/dependencies.js';
import type { ChangeResult, CompleteOptions } from './jobs/control.js';
import type { FetchOptions } from './jobs/fetcher.js';
import type { FindJobsOptions, JobPage } from './jobs/finder.js';
import type { JobName } from './job-definition.js';
import type { UpdateOptions, UpdateResult, UpdateSpec, UpsertOptions, UpsertResult } from './jobs/update.js';
import type { RedriveOptions, RedriveResult } from './jobs/redrive.js';
import { SendingCalls } from './sending-calls.js';
import type { PublishedJob } from './jobs/pub-sub.js';
import type { Job, JobRef, JobWithMetadata, SendOptions } from './types.js';

export abstract class JobCalls extends SendingCalls {
  /** Claims up to `batchSize` runnable jobs (default 1); settle them with `complete` or `fail`. */
  fetch<T = unknown>(name: string, options?: FetchOptions): Promise<Job<T>[]> {
    return this.units.fetcher.fetch<T>(name, options);
  }

  /**
   * Completes active jobs with `output`; a `{ id, retryCount }` ref completes only that attempt. With
   * `includeQueued`, also jobs that have not started (created, retry). The options may also come third, with no
   * output: `complete(name, ids, { includeQueued: true })`. A third argument with `includeQueued` as its only
   * key and no fourth is read so; to store such an object as output, pass options after it (`{}` will do).
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

  /**
   * Changes the payload (`data`; undefined keeps it, null clears it) and the given send options of jobs that have
   * not started (created, retry): the job `options.id`, or the waiting jobs of `options.singletonKey` (`match`:
   * 'newest', the default, 'oldest' or 'all'). A job a worker has claimed is never changed. Returns the ids changed.
   */
  update<T = unknown>(spec: UpdateSpec<T>): Promise<UpdateResult>;
  update<T = unknown>(name: JobName<T>, data?: NoInfer<T>, options?: UpdateOptions): Promise<UpdateResult>;
  update(name: JobName<unknown> | UpdateSpec, data?: unknown, options?: UpdateOptions): Promise<UpdateResult> {
    return this.units.updates.update(name, data, options);
  }

  /**
   * update() by `options.singletonKey`; when no job of the key waits, sends the job as send() would. Upserts of one
   * key run one after the other. Returns the ids changed or inserted.
   */
  upsert<T = unknown>(spec: UpdateSpec<T, UpsertOptions>): Promise<UpsertResult>;
  upsert<T = unknown>(name: JobName<T>, data: NoInfer<T> | undefined, options: UpsertOptions): Promise<UpsertResult>;
  upsert(name: JobName<unknown> | UpdateSpec<unknown, UpsertOptions>, data?: unknown, options?: UpsertOptions): Promise<UpsertResult> {
    return this.units.updates.upsert(name, data, options);
  }

  /** Deletes jobs in any state. */
  deleteJob(name: string, ids: string | string[]): Promise<ChangeResult> {
    return this.units.jobs.deleteJob(name, ids);
  }

  /**
   * The job with id `id` in queue `name`, in any state, with its metadata and its place among other jobs (policy,
   * group, throttle slot, `blocked`, `blocking`); null when there is none.
   */
  getJobById<T = unknown>(name: string, id: string): Promise<JobDetails<T> | null> {
    return this.units.dependencies.getJobById<T>(name, id);
  }

  /** The jobs a flow made job `id` of queue `name` wait for (its parents, in any state); null when there is no such job. */
  getDependencies<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T>[] | null> {
    return this.units.dependencies.getDependencies<T>(name, id);
  }

  /** The jobs a flow made wait for job `id` of queue `name` (its children, in any state); null when there is no such job. */
  getDependents<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T>[] | null> {
    return this.units.dependencies.getDependents<T>(name, id);
  }

  /**
   * Makes one job of `data` in every queue subscribed to `event`, in one statement (all or none; in the caller's
   * transaction with `options.db`), each under its own queue's settings and policy. Returns the jobs made, by queue
   * name: none when no queue subscribes, and none for a queue whose policy or dedupe key refused its job.
   */
  publish(event: string, data?: unknown, options?: SendOptions): Promise<PublishedJob[]> {
    return this.units.pubSub.publish(event, data, options);
  }

  /** Subscribes queue `queue` (which must exist) to `event`; true when new, false when it was subscribed already. */
  subscribe(event: string, queue: string): Promise<boolean> {
    return this.units.pubSub.subscribe(event, queue);
  }

  /** Ends the subscription of queue `queue` to `event`; true when there was one. */
  unsubscribe(event: string, queue: string): Promise<boolean> {
    return this.units.pubSub.unsubscribe(event, queue);
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
