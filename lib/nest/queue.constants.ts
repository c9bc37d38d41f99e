/** Injection token of the resolved, frozen module configuration. */
export const QUEUE_CONFIG = Symbol('pgqueue:config');

/** Metadata key that `@QueueHandler` sets on a method. */
export const QUEUE_HANDLER_METADATA = 'pgqueue:handler';

/** Metadata key that `@OnQueueEvent` sets on a method. */
export const QUEUE_EVENT_METADATA = 'pgqueue:event';
