import { describeValue, InvalidOptionError } from '../../core/errors.js';
import type { QueueEvents, JobEventName } from '../../core/events.js';
import { isJobDefinition, jobNameOf, type JobName } from '../../core/job-definition.js';
import { QUEUE_EVENT_OPTIONS } from '../../core/config/option-keys.js';
import { noUnknownKeys, queueName, record } from '../../core/config/validate.js';
import { QUEUE_EVENT_METADATA } from '../queue.constants.js';

/**
 * What `@OnQueueEvent` records on the method: the event and the options as given. They are checked at bootstrap
 * (QueueEventExplorer, parseQueueEventOptions), where an error can name the method they decorate.
 */
export interface QueueEventMetadata {
  event: unknown;
  options: unknown;
}

/**
 * Makes a provider method a listener of a lifecycle event of a queue, as this instance sees it: `completed`,
 * `failed` (an attempt failed; `willRetry` says whether it goes back), `retrying` or `expired`. Without
 * `{ queue }` it hears the queues of its own class's @QueueHandler methods. It gets the event as QueueService
 * emits it; what it throws (or rejects with) is logged, and changes nothing of the job. An unknown event, an option
 * other than `queue`, or a `queue` that is no queue name or job of defineJob() stops the app's bootstrap with an
 * InvalidOptionError naming the method.
 */
export function OnQueueEvent<E extends JobEventName>(
  event: E,
  options: { queue?: JobName } = {},
): <M extends (...args: QueueEvents[E]) => unknown>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>) => void {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(QUEUE_EVENT_METADATA, { event, options } satisfies QueueEventMetadata, descriptor.value as object);
  };
}

const EVENTS: readonly JobEventName[] = ['completed', 'failed', 'retrying', 'expired'];

/**
 * Checks what `@OnQueueEvent` recorded on method `where` (`Class.method`): the event's name, and its options, an
 * object whose only key is `queue` (a queue name or a job of defineJob()). The queue named, or null for the queues
 * of the class's own @QueueHandler methods; InvalidOptionError naming the field otherwise.
 */
export function parseQueueEventOptions(where: string, meta: QueueEventMetadata): { event: JobEventName; queue: string | null } {
  const at = `@OnQueueEvent(${typeof meta.event === 'string' ? `'${meta.event}'` : describeValue(meta.event)}) on ${where}`;
  if (!EVENTS.includes(meta.event as JobEventName)) throw new InvalidOptionError(`${at} event`, `one of ${EVENTS.join(', ')}`, meta.event);
  const o = record(`${at} options`, meta.options);
  noUnknownKeys(`${at} options`, o, QUEUE_EVENT_OPTIONS.keys, QUEUE_EVENT_OPTIONS.hints);
  if (o.queue === undefined) return { event: meta.event as JobEventName, queue: null };
  if (typeof o.queue !== 'string' && !isJobDefinition(o.queue))
    throw new InvalidOptionError(`${at} options.queue`, 'a queue name or a job of defineJob()', o.queue);
  return { event: meta.event as JobEventName, queue: queueName(`${at} options.queue`, jobNameOf(o.queue)) };
}
