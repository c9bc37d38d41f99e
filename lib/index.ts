import 'reflect-metadata';

// the engine's public names, as nestjs-pgqueue/core exports them, then Nest's
export * from './core/index.js';
export { QueueModule, type QueueModuleAsyncOptions, type QueueOptionsFactory } from './nest/queue.module.js';
export type { QueueFeatureEntry } from './nest/queue-feature.js';
export { QueueService } from './nest/queue.service.js';
export { QueueHandler, type QueueHandlerOptions } from './nest/decorators/queue-handler.decorator.js';
export { QUEUE_CONFIG, QUEUE_CONTEXT_TYPE } from './nest/queue.constants.js';
export { OnQueueEvent } from './nest/decorators/on-queue-event.decorator.js';
export { CurrentJob, JobPayload } from './nest/decorators/job-params.decorator.js';
export { QueueErrorFilter } from './nest/error-filter.js';
export { httpErrorOf, type HttpError } from './core/http/errors.js';
