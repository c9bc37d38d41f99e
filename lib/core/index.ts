export * from './errors.js';
export * from './types.js';
export { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './config.js';
export {
  PgQueue,
  type ChangeResult,
  type CompleteOptions,
  type FetchOptions,
  type FindJobsOptions,
  type JobPage,
  type RedriveOptions,
  type RedriveResult,
} from './pg-queue.js';
export { migrate, LATEST_VERSION, MIGRATION_LOCKS, type MigrationLocks, type MigrationResult } from './migrate.js';
export { QUEUE_DEFAULTS } from './options.js';
export { defineJob, type JobData, type JobDefinition, type JobName, type JobSchema } from './job-definition.js';
export { addBins, percentile, binOf, binLowerEdge, BIN_COUNT, type Bins } from './bins.js';
export type { MaintenanceResult } from './maintenance.js';
export type { UpdateMatch, UpdateOptions, UpdateResult, UpdateSpec, UpsertOptions, UpsertResult } from './job-update.js';
export type { HealthReport, HealthThresholds, QueueHealth } from './health.js';
export type { QueueEvents, QueueWarning, QueueEngineError, JobEvent, JobTiming } from './events.js';
export type { MonitorResult, MonitoredQueue } from './monitor.js';
export type { PublishedJob } from './pub-sub.js';
export type { JobDetails } from './dependencies.js';
export { FIND_MAX_BYTES } from './job-finder.js';
export type { Redact, RedactedError } from './redact.js';
