/**
 * Versioned migrations: the installer of the queue's tables. Each is applied once, in order, inside the
 * transaction that holds the migration lock (see lib/core/runtime/migrate.ts), and recorded in `migrations`.
 * `s` is the schema name, already validated and quoted as an identifier.
 *
 * A migration keeps the release before it working on the migrated schema (a rolling deploy runs both): it adds
 * (expand), and drops, renames or constrains what that release still uses only a release later (contract).
 * docs/operations.md, "Upgrades", has the rules; test/package/rolling-deploy.spec.ts runs the release before the
 * newest migration beside this one.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly up: (s: string) => string;
}

import { init } from './0001_init.js';
import { fifoWait } from './0002_fifo_wait.js';
import { removeOnComplete } from './0003_remove_on_complete.js';
import { dueWakeups } from './0004_due_wakeups.js';
import { retention } from './0005_retention.js';
import { monitor } from './0006_monitor.js';
import { workers } from './0007_workers.js';
import { schedules } from './0008_schedules.js';
import { pause } from './0009_pause.js';
import { findJobs } from './0010_find_jobs.js';
import { retryBudget } from './0011_retry_budget.js';
import { dashboard } from './0012_dashboard.js';
import { traceContext } from './0013_trace_context.js';
import { subscriptions } from './0014_subscriptions.js';
import { fillfactor } from './0015_fillfactor.js';
import { unworked } from './0016_unworked.js';
import { statsPartitions } from './0017_stats_partitions.js';
import { attempts } from './0018_attempts.js';

export const MIGRATIONS: readonly Migration[] = [
  init,
  fifoWait,
  removeOnComplete,
  dueWakeups,
  retention,
  monitor,
  workers,
  schedules,
  pause,
  findJobs,
  retryBudget,
  dashboard,
  traceContext,
  subscriptions,
  fillfactor,
  unworked,
  statsPartitions,
  attempts,
];
