/** Injection token of the resolved, frozen module configuration. */
export const QUEUE_CONFIG = Symbol('pgqueue:config');

/** Metadata key that `@QueueHandler` sets on a method. */
export const QUEUE_HANDLER_METADATA = 'pgqueue:handler';

/** Metadata key that `@OnQueueEvent` sets on a method. */
export const QUEUE_EVENT_METADATA = 'pgqueue:event';

/** The type of the execution context a @QueueHandler method runs in (`context.getType()` in a guard or interceptor). */
export const QUEUE_CONTEXT_TYPE = 'pgqueue';
