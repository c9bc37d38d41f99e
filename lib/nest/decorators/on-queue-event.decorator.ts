import { InvalidOptionError } from '../../core/errors.js';
import type { QueueEvents, JobEventName } from '../../core/events.js';
import { jobNameOf, type JobName } from '../../core/job-definition.js';
import { queueName } from '../../core/validate.js';
import { QUEUE_EVENT_METADATA } from '../queue.constants.js';

const EVENTS: readonly JobEventName[] = ['completed', 'failed', 'retrying', 'expired'];

/** What `@OnQueueEvent` records on the method. */
export interface QueueEventMetadata {
  event: JobEventName;
  /** The queue named in the options; null: the queues of the class's own @QueueHandler methods. */
  queue: string | null;
}

/**
 * Makes a provider method a listener of a lifecycle event of a queue, as this instance sees it: `completed`,
 * `failed` (an attempt failed; `willRetry` says whether it goes back), `retrying` or `expired`. Without
 * `{ queue }` it hears the queues of its own class's @QueueHandler methods. It gets the event as QueueService
 * emits it; what it throws (or rejects with) is logged, and changes nothing of the job.
 */
export function OnQueueEvent<E extends JobEventName>(
  event: E,
  options: { queue?: JobName } = {},
): <M extends (...args: QueueEvents[E]) => unknown>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>) => void {
  if (!EVENTS.includes(event)) throw new InvalidOptionError('@OnQueueEvent event', `one of ${EVENTS.join(', ')}`, event);
  const queue = options.queue === undefined ? null : queueName('@OnQueueEvent options.queue', jobNameOf(options.queue));
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(QUEUE_EVENT_METADATA, { event, queue } satisfies QueueEventMetadata, descriptor.value as object);
  };
}
