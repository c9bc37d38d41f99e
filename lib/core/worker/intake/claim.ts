// Claiming: the one statement that turns waiting rows into this worker's attempts, the shape of what it
// returns, and what narrows it. Shared by a worker's loop and by fetch().
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import { inTransaction, pgExecutor, type Executor } from '../../runtime/db.js';
import { claimSavepoint, releaseClaimSavepoint, rollbackClaimSavepoint } from '../../sql/transaction.js';
import { SQLSTATE, sqlState } from '../../runtime/pg-errors.js';
import { claimArgs, claimGroupedArgs, fetchArgs, localGroupArgs, type LocalGroupArgs, type Statements } from '../../sql/index.js';
import type { QueuePolicy } from '../../types.js';

/**
 * How often an empty claim reads its queue's profile again, at most (one primary-key probe of queues): the
 * queue may have been deleted and made again, its jobs in another table. A worker's and fetch()'s pace.
 */
export const PROFILE_RECHECK_MS = 5_000;

/**
 * Policies under which a queued job may wait for another of its key to finish (short and exclusive refuse the
 * send instead, and a job they admit is claimable at once).
 */
const HOLDING_POLICIES: ReadonlySet<string> = new Set(['singleton', 'stately', 'key_strict_fifo']);

/**
 * Whether a job of a queue with this profile may be held back until another finishes: its policy, or a
 * concurrency or rate limit. (A worker's group limits hold jobs back too; the profile does not know them.)
 */
export function holdsJobsBack(profile: ClaimProfile): boolean {
  return HOLDING_POLICIES.has(profile.policy) || profile.limited;
}

/** A row as the claim statement returns it. */
export interface ClaimedRow {
  id: string;
  queue: string;
  data: unknown;
  priority: number;
  retry_count: number;
  claim_count: number;
  retry_limit: number;
  singleton_key: string | null;
  /** The sender's trace context, W3C headers in JSON (tracing.ts), or null. */
  trace_context: string | null;
  /** The attempt's stamp: started_on in microseconds since the epoch, as decimal text (see STAMPED). */
  stamp: string;
  /** Milliseconds since the epoch. */
  created_on: number;
  started_on: number;
  start_after: number;
  expire_seconds: number;
  heartbeat_seconds: number | null;
  /** A flow parent: some job waits for this one to complete. */
  parent: boolean;
  /** Deleted on completion (the queue's removeOnComplete, and the job holds no throttle slot). */
  remove: boolean;
  /** The job's group and tier: returned by the claims under localGroupConcurrency only (LocalGroups counts them). */
  group_id?: string | null;
  group_tier?: string | null;
}

/** What a claim needs from the engine: where to send it, and a connection of its own for a limited queue. */
export interface ClaimContext {
  readonly exec: Executor;
  /** The statements for the table that holds the queue's jobs (`ClaimProfile.jobsTable`). */
  readonly statements: Statements;
  readonly connect: () => Promise<PoolClient>;
  readonly schema: string;
  /**
   * `exec` is a caller's transaction (fetch() with `db`): a limited queue's claim takes the queue's lock in it, held
   * until the caller's transaction ends (the room it counts includes the jobs claimed there, which no other
   * claimer sees before the commit), and each try runs under a savepoint.
   */
  readonly callerTransaction?: boolean;
}

/**
 * An id that says where its holder runs (host, pid and a random suffix): a loop's, a fetch() caller's (the
 * `worker_id` of the jobs it holds), and an instance's row in the cluster registry.
 */
export function newHolderId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** Policies that allow one active job per key: their claim takes one job per key. */
const ONE_ACTIVE_PER_KEY: ReadonlySet<QueuePolicy> = new Set(['singleton', 'stately']);

/** How a queue's jobs are claimed (fixed once the queue is created). */
export interface ClaimProfile {
  policy: QueuePolicy;
  /** The queue has a concurrency or rate limit: claims serialise on the queue's lock. */
  limited: boolean;
  /** The table that holds the queue's jobs, as an identifier within the schema: its own partition, or jobs_default. */
  jobsTable: string;
}

/** A worker's groupConcurrency: the default limit per group, and limits per tier. */
export interface GroupLimits {
  default: number | null;
  tiers: Record<string, number>;
}

/** What narrows a claim: priority bounds (fetch) and a worker's group limits; and how it commits. */
export interface ClaimFilter {
  minPriority?: number | null;
  maxPriority?: number | null;
  groups?: GroupLimits | null;
  /** A worker's localGroupConcurrency, as its LocalGroups counts stand at the claim (null: none). */
  localGroups?: LocalGroupArgs | null;
  /**
   * Commit without waiting for the WAL flush: a worker's claims, whose results carry the claim's stamp
   * (STAMPED). fetch() leaves it off: a result by hand is fenced on retryCount only.
   */
  asyncCommit?: boolean;
  /**
   * fetch() with options (FetchOptions): claim by the fetch... statements, which may take jobs not yet due and
   * order by due time alone. Null or absent: the workers' claims.
   */
  fetchOrder?: FetchOrder | null;
}

/** How fetch() with options picks: whether start_after is ignored, and whether priority orders the pick. */
export interface FetchOrder {
  ignoreStartAfter: boolean;
  byPriority: boolean;
}

/**
 * Claims up to `limit` jobs of `queue` for `workerId`, in claim order. When a racing claimer took the
 * same key first (the policy's unique index refuses the statement), it claims again once, then returns
 * what it got: a lost race is an empty fetch, never an error. A queue with limits (and a claim under
 * group limits) is claimed in a transaction that holds the queue's lock and claims no more than the
 * room the limits leave.
 */
export async function claimJobs(
  ctx: ClaimContext,
  queue: string,
  profile: ClaimProfile,
  limit: number,
  workerId: string,
  filter: ClaimFilter = {},
): Promise<ClaimedRow[]> {
  const savepoints = ctx.callerTransaction === true;
  if (!profile.limited && !filter.groups)
    return claimWith(ctx.exec, ctx.statements, queue, profile.policy, limit, workerId, filter, 2, savepoints);
  const limited = async (exec: Executor): Promise<ClaimedRow[]> => {
    await exec.query(ctx.statements.lockQueueClaims, [queue, ctx.schema]);
    const room = (await exec.query<{ room: number }>(ctx.statements.claimRoom, [queue]))[0]?.room ?? 0;
    if (room <= 0) return [];
    // One try: a unique violation would abort this transaction (limited claimers are serialised anyway).
    const rows = await claimWith(exec, ctx.statements, queue, profile.policy, Math.min(limit, room), workerId, filter, 1, savepoints);
    if (rows.length > 0 && profile.limited) await exec.query(ctx.statements.recordStarts, [queue, rows.length]);
    return rows;
  };
  if (savepoints) return underSavepoint(ctx.exec, () => limited(ctx.exec));
  return inTransaction(ctx.connect, (client) => limited(pgExecutor(client)));
}

/**
 * `step` in a caller's transaction under a savepoint of its own: undone alone if it throws (its locks too), so that the
 * caller's transaction goes on and the error is the step's, as the claim's own tries are (claimWith).
 */
async function underSavepoint<T>(exec: Executor, step: () => Promise<T>): Promise<T> {
  await exec.query(claimSavepoint);
  try {
    const result = await step();
    await exec.query(releaseClaimSavepoint);
    return result;
  } catch (err) {
    await exec.query(rollbackClaimSavepoint);
    await exec.query(releaseClaimSavepoint);
    throw err;
  }
}

async function claimWith(
  exec: Executor,
  statements: Statements,
  queue: string,
  policy: QueuePolicy,
  limit: number,
  workerId: string,
  filter: ClaimFilter,
  tries: number,
  savepoints = false,
): Promise<ClaimedRow[]> {
  const request = {
    queue,
    limit,
    workerId,
    minPriority: filter.minPriority ?? null,
    maxPriority: filter.maxPriority ?? null,
    asyncCommit: filter.asyncCommit ?? false,
  };
  const claim = async (text: string, args: unknown[]): Promise<ClaimedRow[]> => {
    for (let attempt = 1; attempt <= tries; attempt++) {
      if (savepoints) await exec.query(claimSavepoint);
      try {
        const rows = await exec.query<ClaimedRow>(text, args);
        if (savepoints) await exec.query(releaseClaimSavepoint);
        return rows;
      } catch (err) {
        // in a caller's transaction the try is undone alone, and its savepoint closed (ROLLBACK TO keeps it open), so
        // that the caller's transaction goes on: a lost race for a key is tried again, anything else thrown as it was
        if (savepoints) {
          await exec.query(rollbackClaimSavepoint);
          await exec.query(releaseClaimSavepoint);
        }
        if (sqlState(err) !== SQLSTATE.uniqueViolation) throw err;
      }
    }
    return [];
  };
  let rows: ClaimedRow[];
  const local = filter.localGroups;
  const f = filter.fetchOrder;
  if (f && !filter.groups) {
    const text =
      policy === 'key_strict_fifo'
        ? f.byPriority
          ? statements.fetchJobsKeyFifo
          : statements.fetchJobsKeyFifoByDue
        : ONE_ACTIVE_PER_KEY.has(policy)
          ? f.byPriority
            ? statements.fetchJobsOnePerKey
            : statements.fetchJobsOnePerKeyByDue
          : f.byPriority
            ? statements.fetchJobs
            : statements.fetchJobsByDue;
    rows = await claim(text, fetchArgs(request, f.ignoreStartAfter));
    if (!f.byPriority) return rows.sort((a, b) => a.start_after - b.start_after || compareIds(a.id, b.id));
  } else if (filter.groups) {
    const args = claimGroupedArgs(request, filter.groups);
    rows = await (local
      ? claim(statements.claimJobsGroupedLocal, [...args, ...localGroupArgs(local)])
      : claim(statements.claimJobsGrouped, args));
  } else if (local) {
    // standard queues only (LoopRegistry refuses the option on others)
    rows = await claim(statements.claimJobsLocalGroups, [...claimArgs(request), ...localGroupArgs(local)]);
  } else if (policy === 'key_strict_fifo') {
    // One pass: the heads' index holds every job that may be its key's head, so a short claim means no more.
    rows = await claim(statements.claimJobsKeyFifo, claimArgs(request));
  } else {
    rows = await claim(ONE_ACTIVE_PER_KEY.has(policy) ? statements.claimJobsOnePerKey : statements.claimJobs, claimArgs(request));
  }
  // RETURNING does not keep the pick's order; handlers start in claim order.
  return rows.sort((a, b) => b.priority - a.priority || a.start_after - b.start_after || compareIds(a.id, b.id));
}

/** Orders bigint ids given as decimal text (no sign, no leading zeros) without parsing them. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
