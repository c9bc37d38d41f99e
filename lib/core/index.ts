export * from './errors.js';
export * from './types.js';
export { resolveConfig, type QueueModuleOptions, type ResolvedConfig } from './config.js';
export { PgQueue, type ChangeResult, type FetchOptions } from './pg-queue.js';
export { migrate, LATEST_VERSION, type MigrationResult } from './migrate.js';
export { QUEUE_DEFAULTS } from './options.js';
export { addBins, percentile, binOf, binLowerEdge, BIN_COUNT, type Bins } from './bins.js';
export type { MaintenanceResult } from './maintenance.js';
export type { MonitorResult, MonitoredQueue } from './monitor.js';
