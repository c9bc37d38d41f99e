import type { Migration } from './index.js';

/** The counts a monitor pass stores per queue, on the queue's row and on each snapshot: their columns. */
const COUNT_COLUMNS = `
  queued_count integer NOT NULL DEFAULT 0,
  deferred_count integer NOT NULL DEFAULT 0,
  blocked_count integer NOT NULL DEFAULT 0,
  ready_count integer NOT NULL DEFAULT 0,
  active_count integer NOT NULL DEFAULT 0,
  failed_count integer NOT NULL DEFAULT 0,
  total_count integer NOT NULL DEFAULT 0,
  ready_oldest_seconds double precision NOT NULL DEFAULT 0,
  created_delta integer NOT NULL DEFAULT 0,
  completed_delta integer NOT NULL DEFAULT 0,
  failed_delta integer NOT NULL DEFAULT 0,
  delta_seconds double precision,
  delta_on timestamptz,
  wait_bins integer[],
  run_bins integer[]`;

/**
 * The monitor pass (lib/core/passes/monitor.ts): every monitorIntervalSeconds one instance counts each queue's jobs and
 * caches the counts on the queue's row (`counted_on`: when), so that getQueues() and the health check read a row
 * per queue, whatever the jobs table holds. With persistQueueStats each pass also stores a snapshot in
 * `queue_stats`: the counts, what was created, completed and failed since the previous pass, and histograms of
 * how long the jobs that finished waited and ran (48 logarithmic bins: lib/core/stats/bins.ts). Snapshots go with
 * their queue, and are deleted after queueStatRetentionDays.
 */
export const monitor: Migration = {
  version: 6,
  name: 'monitor',
  up: (s) => `
ALTER TABLE ${s}.queues
  ${COUNT_COLUMNS.trim()
    .split(',\n')
    .map((c) => `ADD COLUMN ${c.trim()}`)
    .join(',\n  ')},
  ADD COLUMN singletons_active text[],
  ADD COLUMN counted_on timestamptz;

CREATE TABLE ${s}.queue_stats (
  queue text NOT NULL REFERENCES ${s}.queues (name) ON DELETE CASCADE,
  captured_on timestamptz NOT NULL,
  ${COUNT_COLUMNS.trim()},
  PRIMARY KEY (queue, captured_on)
);

CREATE INDEX queue_stats_captured_idx ON ${s}.queue_stats (captured_on);
`,
};
