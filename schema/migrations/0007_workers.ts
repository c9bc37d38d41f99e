import type { Migration } from './index.js';

/**
 * The cluster registry (lib/core/passes/cluster-registry.ts): a row per running instance of the engine, which it refreshes
 * every few seconds and deletes when it closes. `loops` lists its worker loops: each one's worker id (the
 * `worker_id` of the jobs it holds), queue, concurrency and active jobs. A row whose heartbeat is older than the
 * live window belongs to an instance that died without closing; any instance's next refresh deletes it.
 */
export const workers: Migration = {
  version: 7,
  name: 'workers',
  up: (s) => `
CREATE TABLE ${s}.workers (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  loops jsonb NOT NULL DEFAULT '[]',
  started_on timestamptz NOT NULL DEFAULT now(),
  heartbeat_on timestamptz NOT NULL DEFAULT now()
);
`,
};
