import 'reflect-metadata';

export * from './core/errors.js';
export * from './core/types.js';
export {
  PgQueue,
  type ChangeResult,
  type CompleteOptions,
  type FetchOptions,
  type FindJobsOptions,
  type JobPage,
  type RedriveOptions,
  type RedriveResult,
} from './core/pg-queue.js';
export { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './core/config.js';
export { QUEUE_DEFAULTS } from './core/options.js';
export { defineJob, type JobData, type JobDefinition, type JobName, type JobSchema } from './core/job-definition.js';
export { addBins, percentile, binOf, binLowerEdge, BIN_COUNT, type Bins } from './core/bins.js';
export type { MaintenanceResult } from './core/maintenance.js';
export type { UpdateMatch, UpdateOptions, UpdateResult, UpdateSpec, UpsertOptions, UpsertResult } from './core/job-update.js';
export type { HealthReport, HealthThresholds, QueueHealth } from './core/health.js';
export type { QueueEvents, QueueWarning, QueueEngineError, JobEvent, JobTiming } from './core/events.js';
export type { MonitorResult, MonitoredQueue } from './core/monitor.js';
export type { PublishedJob } from './core/pub-sub.js';
export type { JobDetails } from './core/dependencies.js';
export { QueueModule, type QueueModuleAsyncOptions, type QueueOptionsFactory } from './nest/queue.module.js';
export type { QueueFeatureEntry } from './nest/queue-feature.js';
export { QueueService } from './nest/queue.service.js';
export { QueueHandler, type QueueHandlerOptions } from './nest/decorators/queue-handler.decorator.js';
export { QUEUE_CONFIG, QUEUE_CONTEXT_TYPE } from './nest/queue.constants.js';
export { OnQueueEvent } from './nest/decorators/on-queue-event.decorator.js';
export { CurrentJob, JobPayload } from './nest/decorators/job-params.decorator.js';
export { QueueErrorFilter } from './nest/error-filter.js';
export { httpErrorOf, type HttpError } from './core/http-errors.js';
