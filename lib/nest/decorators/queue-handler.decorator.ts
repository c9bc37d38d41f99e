import { isJobDefinition, type JobDefinition } from '../../core/job-definition.js';
import { queueName } from '../../core/config/validate.js';
import type { DeclaredSchedule } from '../../core/queues/schedules.js';
import type { BatchJob, Job, QueueOptions, WorkOptions } from '../../core/types.js';
import { QUEUE_HANDLER_METADATA } from '../queue.constants.js';

/**
 * Options of `@QueueHandler`: the queue's settings (used when it is created), the loop's, and a cron schedule
 * (an expression, or `{ cron, tz?, data?, key?, missed? }`) kept in step with the code at bootstrap.
 */
export type QueueHandlerOptions = QueueOptions & WorkOptions & { schedule?: string | DeclaredSchedule };

/** What `@QueueHandler` records on the method. */
export interface QueueHandlerMetadata {
  name: string;
  options: QueueHandlerOptions;
  /** The declared job it handles, when it was given one: its schema checks each payload. */
  job: JobDefinition | null;
}

/** A method that handles jobs with payloads of type T, one at a time or in batches. */
type HandlerMethod<T> = ((job: Job<T>) => unknown) | ((jobs: BatchJob<T>[]) => unknown);

/**
 * Binds a provider method to a queue: at bootstrap the queue is created if missing and a worker loop
 * calls the method for each job. What it returns becomes the job's output; a throw fails the attempt.
 * Given a job of defineJob(), the method's parameter must take that job's payload type (a compile error
 * otherwise), the job's queue options are the queue's (the decorator's own win), and its schema checks each
 * payload before the method runs.
 */
export function QueueHandler<T>(
  job: JobDefinition<T>,
  options?: QueueHandlerOptions,
): <M extends HandlerMethod<T>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>) => void;
export function QueueHandler(name: string, options?: QueueHandlerOptions): MethodDecorator;
export function QueueHandler(name: string | JobDefinition, options: QueueHandlerOptions = {}): MethodDecorator {
  const job = isJobDefinition(name) ? name : null;
  const queue = job ? job.name : name;
  queueName('@QueueHandler name', queue);
  const merged = job ? { ...job.options, ...options } : options;
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(
      QUEUE_HANDLER_METADATA,
      { name: queue as string, options: merged, job } satisfies QueueHandlerMetadata,
      descriptor.value as object,
    );
    return descriptor;
  };
}
