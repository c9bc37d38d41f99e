export * from './errors.js';
export * from './types.js';
export { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './config/config.js';
export {
  PgQueue,
  type ChangeResult,
  type CompleteOptions,
  type ConnectionOptions,
  type FetchOptions,
  type FindJobsOptions,
  type JobPage,
  type RedriveOptions,
  type RedriveResult,
} from './pg-queue.js';
export { migrate, LATEST_VERSION, MIGRATION_LOCKS, type MigrationLocks, type MigrationResult } from './runtime/migrate.js';
export { QUEUE_DEFAULTS } from './config/options.js';
export { defineJob, type JobData, type JobDefinition, type JobName, type JobSchema } from './job-definition.js';
export { addBins, percentile, binOf, binLowerEdge, BIN_COUNT, type Bins } from './stats/bins.js';
export type { MaintenanceResult } from './passes/maintenance.js';
export type { UpdateMatch, UpdateOptions, UpdateResult, UpdateSpec, UpsertOptions, UpsertResult } from './jobs/update.js';
export type { HealthReport, HealthThresholds, QueueHealth } from './stats/health.js';
export type { QueueEvents, QueueWarning, QueueEngineError, JobEvent, JobTiming } from './events.js';
export type { MonitorResult, MonitoredQueue } from './passes/monitor.js';
export type { PublishedJob } from './jobs/pub-sub.js';
export type { JobDetails } from './jobs/dependencies.js';
export { FIND_MAX_BYTES } from './jobs/finder.js';
export type { Redact, RedactedError } from './http/redact.js';
