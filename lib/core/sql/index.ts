import * as claim from './claim.js';
import * as enqueue from './enqueue.js';
import * as jobs from './jobs.js';
import * as lease from './lease.js';
import * as limits from './limits.js';
import * as maintenance from './maintenance.js';
import * as queues from './queues.js';
import * as settle from './settle.js';

const builders = { ...queues, ...enqueue, ...claim, ...settle, ...lease, ...jobs, ...maintenance, ...limits };

/** Every runtime statement, rendered once for one schema. */
export type Statements = { readonly [K in keyof typeof builders]: string };

/** Renders every statement for the (already validated and quoted) schema identifier. */
export function buildStatements(schemaIdent: string): Statements {
  const out: Record<string, string> = {};
  for (const [name, build] of Object.entries(builders)) out[name] = build(schemaIdent);
  return Object.freeze(out) as Statements;
}
