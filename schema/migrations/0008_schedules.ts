import type { Migration } from './index.js';

/**
 * Cron schedules (lib/core/queues/schedules.ts, lib/core/passes/scheduler.ts): a row per queue and key. `next_run_on` is the
 * next slot not yet fired ('infinity' once the expression has none left); the scheduler fires a slot and moves
 * it on in one transaction, under the row's lock, so that each slot fires once however many instances race.
 * `managed` rows are kept in step with a `@QueueHandler`'s `schedule` option at bootstrap.
 */
export const schedules: Migration = {
  version: 8,
  name: 'schedules',
  up: (s) => `
CREATE TABLE ${s}.schedules (
  name text NOT NULL REFERENCES ${s}.queues (name) ON DELETE CASCADE,
  key text NOT NULL DEFAULT '',
  cron text NOT NULL,
  tz text NOT NULL DEFAULT 'UTC',
  data jsonb,
  options jsonb NOT NULL DEFAULT '{}',
  missed text NOT NULL DEFAULT 'once' CHECK (missed IN ('once', 'skip')),
  managed boolean NOT NULL DEFAULT false,
  next_run_on timestamptz NOT NULL,
  last_run_on timestamptz,
  last_job_id bigint,
  created_on timestamptz NOT NULL DEFAULT now(),
  updated_on timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, key)
);
CREATE INDEX schedules_next_run_idx ON ${s}.schedules (next_run_on);
`,
};
