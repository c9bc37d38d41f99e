// The job object a handler receives, and its abort signal, made only when the handler asks for it. Built
// once per job on the drain's hot path, so both are shaped for what they cost to make.
import type { PoolClient } from 'pg';
import type { Job } from '../../types.js';
import type { ClaimedRow } from '../intake/claim.js';

/**
 * The job a handler receives. A class, so that `signal` is a getter on the prototype: an object literal with a
 * getter builds an order of magnitude more slowly, on every job (docs/design.md, "The job object handed to handlers").
 */
export class ClaimedJob<T> implements Job<T> {
  readonly id: string;
  readonly name: string;
  readonly data: T;
  readonly priority: number;
  readonly retryCount: number;
  readonly retryLimit: number;
  readonly singletonKey: string | null;
  readonly createdOn: Date;
  readonly startedOn: Date;
  readonly expireInSeconds: number;
  readonly heartbeatSeconds: number | null;
  readonly heartbeat: () => Promise<void>;
  /** Set only for a transactional handler (a declared field: no own `db` property otherwise). */
  declare db?: PoolClient;
  readonly #abort: { readonly signal: AbortSignal };

  constructor(row: ClaimedRow, abort: { readonly signal: AbortSignal }, heartbeat: () => Promise<void>) {
    this.id = row.id;
    this.name = row.queue;
    this.data = row.data as T;
    this.priority = row.priority;
    this.retryCount = row.retry_count;
    this.retryLimit = row.retry_limit;
    this.singletonKey = row.singleton_key;
    this.createdOn = new Date(row.created_on);
    this.startedOn = new Date(row.started_on);
    this.expireInSeconds = row.expire_seconds;
    this.heartbeatSeconds = row.heartbeat_seconds;
    this.heartbeat = heartbeat;
    this.#abort = abort;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }
}

/** Builds the job a handler receives; `heartbeat` is fenced to this attempt and holder. */
export function toJob<T>(
  row: ClaimedRow,
  abort: { readonly signal: AbortSignal },
  heartbeat: () => Promise<void>,
  db?: PoolClient,
): Job<T> {
  const job = new ClaimedJob<T>(row, abort, heartbeat);
  if (db) job.db = db;
  return job;
}

/**
 * A job's abort signal, made only when its handler reads `job.signal` (most never do: an AbortController
 * per job was the largest cost in Node of draining no-op jobs). Aborting before that makes the signal
 * aborted from the start.
 */
export class LazyAbort {
  private controller: AbortController | null = null;
  private reason: unknown;
  aborted = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
