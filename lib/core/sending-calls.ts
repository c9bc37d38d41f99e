// The sending half of the engine's public face (PgQueue extends it): one job or many, throttled, debounced,
// deferred, or a flow of jobs that wait for each other. Each call is one delegation to the sender or flows unit.
import { EventEmitter } from 'node:events';
import type { EngineUnits } from './runtime/engine-units.js';
import type { QueueEvents } from './events.js';
import type { JobDefinition, JobName } from './job-definition.js';
import type { EnqueueResult, FlowJob, JobInsert, SendOptions } from './types.js';

/** The options of sendThrottled, sendDebounced and sendAfter, which may be left out with null. */
type MaybeSendOptions = SendOptions | null | undefined;

/**
 * send()'s payload and options: the payload may be left out only where it may be undefined (a queue named by a
 * string, a job declared without a type); a declared job's payload must be given.
 */
export type PayloadArgs<T> = undefined extends T ? [data?: T, options?: SendOptions] : [data: T, options?: SendOptions];

export abstract class SendingCalls extends EventEmitter<QueueEvents> {
  /** The engine's units: PgQueue's constructor makes them. */
  protected abstract readonly units: EngineUnits;

  /**
   * Sends one job; returns its id, or null when the queue's policy (or a throttle slot) refused it. With
   * `dedupeKey`, a duplicate returns the id of the pending job that holds the key. With `options.db` the
   * insert joins the caller's transaction.
   */
  send<T = unknown>(job: JobDefinition<T>, ...args: PayloadArgs<NoInfer<T>>): Promise<string | null>;
  send<T = unknown>(name: string, data?: NoInfer<T>, options?: SendOptions): Promise<string | null>;
  send(name: JobName<unknown>, data?: unknown, options?: SendOptions): Promise<string | null> {
    return this.units.sender.send(name, data, options);
  }

  /** send() with its answer: `{ id, queue, state, startAfter, deduped }` (deduped: the id is a dedupeKey's holder). */
  enqueue<T = unknown>(job: JobDefinition<T>, ...args: PayloadArgs<NoInfer<T>>): Promise<EnqueueResult>;
  enqueue<T = unknown>(name: string, data?: NoInfer<T>, options?: SendOptions): Promise<EnqueueResult>;
  enqueue(name: JobName<unknown>, data?: unknown, options?: SendOptions): Promise<EnqueueResult> {
    return this.units.sender.enqueue(name, data, options);
  }

  /**
   * Sends at most one job per `seconds`-long time slot (and per `key`, else per `options.singletonKey`): the first
   * send of a slot wins, later ones return null. `options.startAfter`, and `options.singletonKey` beside a `key`, are
   * refused: the arguments set them.
   */
  sendThrottled<T = unknown>(
    name: JobName<T>,
    data: NoInfer<T>,
    options: MaybeSendOptions,
    seconds: number,
    key?: string | null,
  ): Promise<string | null> {
    return this.units.sender.sendThrottled(name, data, options, seconds, key);
  }

  /**
   * Like `sendThrottled`, but a send into a slot that is taken is deferred to the start of the next slot
   * instead of dropped; at most one job waits there, so later sends return null.
   */
  sendDebounced<T = unknown>(
    name: JobName<T>,
    data: NoInfer<T>,
    options: MaybeSendOptions,
    seconds: number,
    key?: string | null,
  ): Promise<string | null> {
    return this.units.sender.sendDebounced(name, data, options, seconds, key);
  }

  /**
   * `send` with `startAfter` given separately: a Date, an ISO-8601 string, or seconds from now. A `startAfter` in
   * the options as well is refused (InvalidOptionError naming `options.startAfter`), not overridden.
   */
  sendAfter<T = unknown>(
    name: JobName<T>,
    data: NoInfer<T>,
    options: MaybeSendOptions,
    startAfter: Date | string | number,
  ): Promise<string | null> {
    return this.units.sender.sendAfter(name, data, options, startAfter);
  }

  /**
   * Inserts many jobs in one statement; returns the ids of the jobs inserted, in input order. A job that
   * the queue's policy or a dedupe key refuses is skipped (its id is missing from the result).
   */
  insert<T = unknown>(name: JobName<T>, jobs: JobInsert<NoInfer<T>>[], options?: Pick<SendOptions, 'db'>): Promise<string[]> {
    return this.units.sender.insert(name, jobs, options);
  }

  /**
   * Inserts jobs that wait for each other (`dependsOn` by `ref`), in one transaction; each ref's job id (guide,
   * "Flows"). With `options.db` they join the caller's transaction: roll it back if this throws.
   */
  flow(jobs: FlowJob[], options?: Pick<SendOptions, 'db'>): Promise<Record<string, string>> {
    return this.units.flows.flow(jobs, options);
  }
}
