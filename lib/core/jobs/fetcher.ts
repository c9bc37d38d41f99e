// Working by hand: fetch() claims jobs for a caller that runs them itself and settles them with complete() or
// fail() (jobs/control.ts). The claim is the workers' claim, under a holder id of this engine's own.
import { InvalidOptionError, QueueNotFoundError } from '../errors.js';
import { FETCH_OPTIONS } from '../config/option-keys.js';
import { callerExecutor, type Executor } from '../runtime/db.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import { claimSavepoint, releaseClaimSavepoint, transactionIsolation } from '../sql/transaction.js';
import type { Runtime } from '../runtime/runtime.js';
import { heartbeatArgs } from '../sql/index.js';
import type { GroupLimitsOption, Job, TransactionLike } from '../types.js';
import { parseGroupConcurrency } from '../config/options.js';
import { int, noUnknownKeys, optBool, optKey, queueName, record } from '../config/validate.js';
import { claimJobs, LazyAbort, newHolderId, PROFILE_RECHECK_MS, toJob } from '../worker/index.js';

/** Options of `fetch`. */
export interface FetchOptions {
  batchSize?: number;
  minPriority?: number;
  maxPriority?: number;
  /**
   * Also claim jobs whose start_after has not come (sent deferred, or waiting for a retry's delay), as pg-boss's
   * option of the same name; never a flow child waiting for its parents, nor a job its queue's policy holds back.
   */
  ignoreStartAfter?: boolean;
  /** false: claim in due-time then id order, whatever the priority (default true: highest priority first). */
  priority?: boolean;
  /**
   * At most this many active jobs of one group across all workers and fetches (a job's `group.id`): one number, or
   * per tier as work()'s `groupConcurrency`. Standard queues only; not with `ignoreStartAfter` or `priority: false`.
   */
  groupConcurrency?: GroupLimitsOption;
  /** Claim no job of these groups (pg-boss's option: a caller's own count of the groups it runs at their limit). */
  ignoreGroups?: string[] | null;
  /**
   * Claim inside the caller's transaction (a Drizzle transaction, or a pg client inside BEGIN): the jobs are active
   * for others once it commits, and back in the queue if it rolls back, so fetch, work and complete({ db }) can be
   * one transaction. On a queue with a concurrency or rate limit the queue's claim lock is held until it ends.
   * Outside a transaction the claim commits at once, as without `db`.
   */
  db?: TransactionLike;
}

const MIN_PRIORITY = -2_147_483_648;

/** The fetch call; PgQueue.fetch delegates here. */
export class Fetcher {
  /** Holder id of jobs claimed by `fetch` (settled by hand). */
  readonly holderId = newHolderId();
  /** When fetch() last read each queue's profile again after an empty claim (Date.now()). */
  private readonly recheckedAt = new Map<string, number>();

  constructor(private readonly rt: Runtime) {}

  async fetch<T>(name: string, options?: FetchOptions): Promise<Job<T>[]> {
    queueName('name', name);
    const o = record('options', options) as FetchOptions;
    // a pg-boss option not built here (includeMetadata, groupConcurrency) is refused, not ignored
    noUnknownKeys('options', o as Record<string, unknown>, FETCH_OPTIONS.keys, FETCH_OPTIONS.hints);
    const batchSize = o.batchSize === undefined ? 1 : int('options.batchSize', o.batchSize, 1, 10_000);
    const minPriority = o.minPriority === undefined ? null : int('options.minPriority', o.minPriority, MIN_PRIORITY);
    const maxPriority = o.maxPriority === undefined ? null : int('options.maxPriority', o.maxPriority, MIN_PRIORITY);
    const ignoreStartAfter = optBool('options.ignoreStartAfter', o.ignoreStartAfter) ?? false;
    const byPriority = optBool('options.priority', o.priority) ?? true;
    // Without either option, the workers' own claim.
    const fetchOrder = ignoreStartAfter || !byPriority ? { ignoreStartAfter, byPriority } : null;
    const groups = parseGroupConcurrency('options.groupConcurrency', o.groupConcurrency);
    const ignoreGroups = ignoredGroups(o.ignoreGroups);
    if ((groups || ignoreGroups) && fetchOrder)
      throw new InvalidOptionError(
        groups ? 'options.groupConcurrency' : 'options.ignoreGroups',
        'left out with ignoreStartAfter or priority: false (a claim by group takes jobs due now, by priority)',
        groups ? o.groupConcurrency : o.ignoreGroups,
      );
    const own = await this.rt.db();
    const exec = o.db === undefined ? own : callerExecutor(o.db);
    const callerTransaction = o.db !== undefined && (await inTransactionBlock(exec));
    const { router, connect, config } = this.rt;
    let profile = await router.profile(exec, name);
    if ((groups || ignoreGroups) && profile.policy !== 'standard')
      throw new InvalidOptionError(
        groups ? 'options.groupConcurrency' : 'options.ignoreGroups',
        `left out on a ${profile.policy} queue (group limits apply to standard queues)`,
        groups ? o.groupConcurrency : o.ignoreGroups,
      );
    if (callerTransaction && (profile.limited || groups)) {
      // the limit's count of active jobs is read in the caller's snapshot: under REPEATABLE READ or SERIALIZABLE that
      // snapshot predates the queue's lock, and misses what other claimers committed since
      const [row] = await exec.query<{ isolation: string }>(transactionIsolation);
      if (row?.isolation !== 'read committed')
        throw new InvalidOptionError(
          'options.db',
          'a READ COMMITTED transaction on a queue with a concurrency or rate limit, or with groupConcurrency (its count would miss claims committed after your snapshot)',
          row?.isolation,
        );
    }
    let statements = router.statementsForProfile(profile);
    const claim = () =>
      claimJobs({ exec, statements, connect, schema: config.schema, callerTransaction }, name, profile, batchSize, this.holderId, {
        minPriority,
        maxPriority,
        fetchOrder,
        groups,
        // the groups to leave out, as a loop's localGroupConcurrency leaves out those it runs to their limit
        localGroups: ignoreGroups ? { saturated: ignoreGroups, busy: [], counts: [], default: null, tiers: [], limits: [] } : null,
      });
    let rows: Awaited<ReturnType<typeof claim>> = [];
    let failure: Error | null = null;
    try {
      rows = await claim();
    } catch (err) {
      // undefined_table: the queue's partition is gone (the queue was made again), read below at once
      if (sqlState(err) !== SQLSTATE.undefinedTable) throw err;
      failure = err as Error;
      this.recheckedAt.delete(name);
    }
    // An empty claim may come from a table the queue's jobs left: its profile is read again, at most every 5 s.
    if (rows.length === 0 && Date.now() - (this.recheckedAt.get(name) ?? 0) >= PROFILE_RECHECK_MS) {
      this.recheckedAt.set(name, Date.now());
      const moved = await router.recheck(exec, name, profile);
      if (moved === null) throw new QueueNotFoundError(name);
      if (moved) {
        ({ profile, statements } = moved);
        failure = null;
        rows = await claim();
      }
    }
    if (failure) throw failure;
    // the heartbeat goes through the engine's pool: a caller's transaction may have ended by then
    return rows.map((row) =>
      toJob<T>(row, new LazyAbort(), async () => {
        await own.query(statements.heartbeatJobs, heartbeatArgs(name, [row], this.holderId));
      }),
    );
  }
}

/** fetch()'s `ignoreGroups`: group ids (null, or none: no group left out). */
function ignoredGroups(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length > 10_000)
    throw new InvalidOptionError('options.ignoreGroups', 'an array of at most 10000 group ids', value);
  const ids = value.map((v, i) => optKey(`options.ignoreGroups[${i}]`, v, 255)!);
  if (ids.some((id) => id === undefined)) throw new InvalidOptionError('options.ignoreGroups', 'group ids (strings)', value);
  return ids.length > 0 ? ids : null;
}

/** Whether a caller's `db` is inside a transaction block: SAVEPOINT is refused outside one (sql/transaction.ts). */
async function inTransactionBlock(exec: Executor): Promise<boolean> {
  try {
    await exec.query(claimSavepoint);
  } catch (err) {
    if (sqlState(err) === SQLSTATE.noActiveTransaction) return false;
    throw err;
  }
  await exec.query(releaseClaimSavepoint);
  return true;
}
