// A claimed row as the claim statement returns it, for unit tests of the worker's parts: defaults for every
// column, and what a test cares about given.
import type { ClaimedRow } from '../../lib/core/worker/intake/claim.js';

export function claimedRow(id: string, given: Partial<ClaimedRow> = {}): ClaimedRow {
  return {
    id,
    queue: 'q',
    data: null,
    priority: 0,
    retry_count: 0,
    claim_count: 1,
    retry_limit: 2,
    singleton_key: null,
    trace_context: null,
    stamp: '1700000000000000',
    created_on: 0,
    started_on: 0,
    start_after: 0,
    expire_seconds: 30,
    heartbeat_seconds: null,
    parent: false,
    remove: false,
    ...given,
  };
}
