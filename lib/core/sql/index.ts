import * as bulkDelete from './bulk-delete.js';
import * as claim from './claim.js';
import * as dashboard from './dashboard.js';
import * as due from './due.js';
import * as enqueue from './enqueue.js';
import * as find from './find.js';
import * as jobView from './job-view.js';
import * as jobs from './jobs.js';
import * as lease from './lease.js';
import * as limits from './limits.js';
import * as maintenance from './maintenance.js';
import * as monitor from './monitor.js';
import * as pubSub from './pub-sub.js';
import * as dependencies from './dependencies.js';
import * as queues from './queues.js';
import * as retention from './retention.js';
import * as schedules from './schedules.js';
import * as settle from './settle.js';
import * as stats from './stats.js';
import * as unworked from './unworked.js';
import * as update from './update.js';
import * as workers from './workers.js';

const builders = {
  ...queues,
  ...enqueue,
  ...claim,
  ...due,
  ...settle,
  ...lease,
  ...jobs,
  ...find,
  ...maintenance,
  ...monitor,
  ...retention,
  ...stats,
  ...workers,
  ...schedules,
  ...limits,
  ...dashboard,
  ...jobView,
  ...bulkDelete,
  ...pubSub,
  ...dependencies,
  ...update,
  ...unworked,
};

/** The sql files also export the argument builders of their statements (named ...Args): not statements. */
type StatementName<K> = K extends `${string}Args` ? never : K;

/** Every runtime statement, rendered once for one schema. */
export type Statements = { readonly [K in keyof typeof builders as StatementName<K>]: string };

export { claimArgs, claimGroupedArgs, fetchArgs, localGroupArgs, type LocalGroupArgs } from './claim.js';
export { completeArgs, completeLeafArgs, failArgs } from './settle.js';
export { heartbeatArgs, releaseArgs, touchArgs } from './lease.js';
export { insertArgs } from './enqueue.js';
export { createQueueArgs } from './queues.js';
export { updateArgs, type UpdateValues } from './update.js';

/**
 * Renders every statement for the (already validated and quoted) schema identifier. `jobsTable`: the table that
 * holds the jobs of the queue the statements will be run for (its own partition, or jobs_default), quoted and
 * schema-qualified; the statements that read or change only that queue's jobs then name it instead of `jobs`
 * (see QueueRouter.statementsForQueue). Without it, they name `jobs`.
 */
export function buildStatements(schemaIdent: string, jobsTable?: string): Statements {
  const out: Record<string, string> = {};
  for (const [name, build] of Object.entries(builders)) {
    if (!name.endsWith('Args')) out[name] = (build as (s: string, t?: string) => string)(schemaIdent, jobsTable);
  }
  return Object.freeze(out) as Statements;
}
