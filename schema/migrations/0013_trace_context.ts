import type { Migration } from './index.js';

/**
 * The trace context of the send that made a job (W3C trace headers as JSON, lib/core/runtime/tracing.ts), so that each
 * attempt's span links to the request that sent it. Nullable without a default: adding it rewrites no row, and a
 * job sent without tracing stores nothing.
 */
export const traceContext: Migration = {
  version: 13,
  name: 'trace_context',
  up: (s) => `
ALTER TABLE ${s}.jobs ADD COLUMN trace_context text;
`,
};
