import { queueName } from '../../core/validate.js';
import type { DeclaredSchedule } from '../../core/schedules.js';
import type { QueueOptions, WorkOptions } from '../../core/types.js';
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
}

/**
 * Binds a provider method to a queue: at bootstrap the queue is created if missing and a worker loop
 * calls the method for each job. What it returns becomes the job's output; a throw fails the attempt.
 */
export function QueueHandler(name: string, options: QueueHandlerOptions = {}): MethodDecorator {
  queueName('@QueueHandler name', name);
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(QUEUE_HANDLER_METADATA, { name, options } satisfies QueueHandlerMetadata, descriptor.value as object);
    return descriptor;
  };
}
