// What a worker loop needs from the engine that owns it (the loop registry makes one per loop).
import type { PoolClient } from 'pg';
import type { Executor } from '../runtime/db.js';
import type { EngineEvents } from '../events.js';
import type { Statements } from '../sql/index.js';
import type { Tracing } from '../runtime/tracing.js';
import type { QueueLogger } from '../types.js';
import type { ClaimProfile } from './intake/claim.js';

/** What a worker loop needs from the engine that owns it. Read-only: a worker keeps its own profile after a recheck. */
export interface LoopContext {
  readonly exec: Executor;
  /** How the queue's jobs are claimed, and where they are stored, when the worker starts. */
  readonly profile: ClaimProfile;
  /** A dedicated connection for a transactional handler; released by the worker. */
  readonly connect: () => Promise<PoolClient>;
  /** Counts a result refused by the fence (the worker no longer held the job). */
  staleResult(): void;
  /** The statements for the queue's jobs (for `profile.jobsTable`). */
  readonly statements: Statements;
  /**
   * Reads the queue's profile again (the queue may have been deleted and made again, its jobs in another
   * table): the new profile and its statements when a claim made with `was` would now differ, undefined when it
   * would not, null when the queue does not exist (QueueRouter.recheck).
   */
  recheck(was: ClaimProfile): Promise<{ profile: ClaimProfile; statements: Statements } | null | undefined>;
  readonly schema: string;
  readonly channel: string;
  readonly log: QueueLogger;
  /** Log each failed attempt (a warning) and each failure for good (an error): the module's logJobFailures. */
  readonly logFailures: boolean;
  /** Reports a failure of the loop itself (never a handler's throw). */
  error(err: unknown, context: string): void;
  /** Warnings and the jobs' lifecycle events. */
  readonly events: Pick<EngineEvents, 'warning' | 'listens' | 'job'>;
  /** A claim slower than this many milliseconds is reported (a `slow-claim` warning); 0: never. */
  readonly slowClaimMs: number;
  /** Spans around attempts (null: not tracing). */
  readonly tracing: Tracing | null;
}
