import type { JobState, JobWithMetadata, QueueCounts, QueuePolicy, QueueResult } from './types.js';

/** A `queues` row with the live counts of `getQueues`. */
export interface QueueRow {
  name: string;
  policy: QueuePolicy;
  partition: boolean;
  dead_letter: string | null;
  warning_queue_size: number | null;
  notify: boolean;
  remove_on_complete: boolean;
  failed_delete_after_seconds: number;
  fail_unworked_after_seconds: number | null;
  retry_limit: number;
  retry_delay: number;
  retry_backoff: boolean;
  retry_delay_max: number | null;
  expire_seconds: number;
  heartbeat_seconds: number | null;
  delete_after_seconds: number;
  retention_seconds: number;
  concurrency_limit: number | null;
  rate_limit_count: number | null;
  rate_limit_seconds: number | null;
  created_on: Date;
  updated_on: Date;
  queued: number;
  deferred: number;
  blocked: number;
  ready: number;
  ready_oldest: number;
  active: number;
  failed: number;
  total: number;
  singletons_active: string[] | null;
  created_delta: number;
  completed_delta: number;
  failed_delta: number;
  delta_seconds: number | null;
  delta_on: Date | null;
  wait_bins: number[] | null;
  run_bins: number[] | null;
  counted_on: Date | null;
  unworked: boolean;
  paused: boolean;
  table_name: string;
}

/** The counts of a queue row, as the last monitor pass cached them. */
export function countsOf(r: QueueRow): QueueCounts {
  return {
    queuedCount: r.queued,
    deferredCount: r.deferred,
    blockedCount: r.blocked,
    readyCount: r.ready,
    activeCount: r.active,
    failedCount: r.failed,
    totalCount: r.total,
    readyOldestSeconds: r.ready_oldest,
  };
}

/** The settings of a queue row, as stored (createQueue's row holds these columns only). */
export function settingsOf(r: QueueRow) {
  return {
    name: r.name,
    policy: r.policy,
    partition: r.partition,
    deadLetter: r.dead_letter,
    warningQueueSize: r.warning_queue_size,
    notify: r.notify,
    removeOnComplete: r.remove_on_complete,
    failedDeleteAfterSeconds: r.failed_delete_after_seconds,
    failUnworkedAfterSeconds: r.fail_unworked_after_seconds,
    retryLimit: r.retry_limit,
    retryDelay: r.retry_delay,
    retryBackoff: r.retry_backoff,
    retryDelayMax: r.retry_delay_max,
    expireInSeconds: r.expire_seconds,
    heartbeatSeconds: r.heartbeat_seconds,
    deleteAfterSeconds: r.delete_after_seconds,
    retentionSeconds: r.retention_seconds,
    concurrencyLimit: r.concurrency_limit,
    rateLimit:
      r.rate_limit_count === null || r.rate_limit_seconds === null ? null : { count: r.rate_limit_count, perSeconds: r.rate_limit_seconds },
  };
}

export function toQueueResult(r: QueueRow): QueueResult {
  return {
    ...settingsOf(r),
    ...countsOf(r),
    singletonsActive: r.singletons_active,
    createdDelta: r.created_delta,
    completedDelta: r.completed_delta,
    failedDelta: r.failed_delta,
    deltaSeconds: r.delta_seconds,
    deltaOn: r.delta_on,
    waitBins: r.wait_bins,
    runBins: r.run_bins,
    countedOn: r.counted_on,
    unworked: r.unworked,
    paused: r.paused,
    table: r.table_name,
    createdOn: r.created_on,
    updatedOn: r.updated_on,
  };
}

/** A `jobs` row as `getJobById` selects it. */
export interface JobRow {
  id: string;
  queue: string;
  state: JobState;
  priority: number;
  data: unknown;
  output: unknown;
  singleton_key: string | null;
  dedupe_key: string | null;
  start_after: Date | number;
  retry_count: number;
  claim_count: number;
  retry_base: number;
  retry_limit: number;
  retry_delay: number;
  retry_backoff: boolean;
  retry_delay_max: number | null;
  expire_seconds: number;
  heartbeat_seconds: number | null;
  delete_after_seconds: number;
  lease_until: Date | null;
  worker_id: string | null;
  created_on: Date;
  started_on: Date | null;
  completed_on: Date | null;
  keep_until: Date | number;
  dead_letter: string | null;
  source_name: string | null;
  source_id: string | null;
  source_created_on: Date | null;
  source_retry_count: number | null;
  source_output: unknown;
  source_root_id: string | null;
  /** The error record of the last failed attempt, with `on` (a timestamp as JSON text) and `attempt`. */
  last_error: { error: Record<string, unknown>; on: string; attempt: number } | null;
}

/** The last error of a job, with its time as a Date. */
export function lastErrorOf(e: JobRow['last_error']): JobWithMetadata['lastError'] {
  if (!e) return null;
  const { name, message, stack, ...fields } = e.error;
  const { on, attempt } = e;
  return {
    ...fields,
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : '',
    ...(typeof stack === 'string' ? { stack } : {}),
    on: new Date(on),
    attempt,
  };
}

/** A timestamp, or null for PostgreSQL's infinity (node-postgres reads it as the number Infinity). */
const finite = (d: Date | number): Date | null => (d instanceof Date ? d : null);

export function toJobWithMetadata<T>(r: JobRow): JobWithMetadata<T> {
  return {
    id: r.id,
    name: r.queue,
    data: r.data as T,
    state: r.state,
    priority: r.priority,
    retryCount: r.retry_count,
    claimCount: r.claim_count,
    retryBase: r.retry_base,
    retryLimit: r.retry_limit,
    retryDelay: r.retry_delay,
    retryBackoff: r.retry_backoff,
    retryDelayMax: r.retry_delay_max,
    expireInSeconds: r.expire_seconds,
    heartbeatSeconds: r.heartbeat_seconds,
    deleteAfterSeconds: r.delete_after_seconds,
    singletonKey: r.singleton_key,
    dedupeKey: r.dedupe_key,
    startAfter: finite(r.start_after),
    createdOn: r.created_on,
    startedOn: r.started_on,
    completedOn: r.completed_on,
    keepUntil: finite(r.keep_until),
    leaseUntil: r.lease_until,
    workerId: r.worker_id,
    output: r.output,
    deadLetter: r.dead_letter,
    sourceName: r.source_name,
    sourceId: r.source_id,
    sourceCreatedOn: r.source_created_on,
    sourceRetryCount: r.source_retry_count,
    sourceOutput: r.source_output,
    sourceRootId: r.source_root_id,
    lastError: lastErrorOf(r.last_error),
  };
}
