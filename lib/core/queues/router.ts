// Where each queue's jobs live, and the statements that reach them there: the one place that knows a queue's
// profile (its policy, whether it has limits, the table that holds its jobs), keeps it, and reads it again
// when a call finds the queue's jobs gone from where it looked.
import type { Executor } from '../runtime/db.js';
import { QueueNotFoundError } from '../errors.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import { buildStatements, type Statements } from '../sql/index.js';
import type { ClaimProfile } from '../worker/index.js';

/** The profiles and statements of one engine's queues, kept for its life and read again when found stale. */
export class QueueRouter {
  private readonly profiles = new Map<string, ClaimProfile>();
  /** The statements for the queues whose jobs live in each table, by table. */
  private readonly byTable = new Map<string, Statements>();
  /** The texts of the statements prepared once per connection (see planOnce), for every table's statements. */
  readonly preparedTexts = new Set<string>();

  /**
   * `acrossQueues`: the statements that name the partitioned `jobs` (for flows, for work across queues, and for a queue
   * that does not exist). `schemaIdent`: the quoted schema, for the statements of each table.
   */
  constructor(
    private readonly schemaIdent: string,
    readonly acrossQueues: Statements,
  ) {
    for (const text of planOnce(acrossQueues)) this.preparedTexts.add(text);
  }

  /** How queue `name`'s jobs are claimed and where they live; read once (neither changes after the queue is made). */
  async profile(exec: Executor, name: string): Promise<ClaimProfile> {
    const profile = await this.known(exec, name);
    if (!profile) throw new QueueNotFoundError(name);
    return profile;
  }

  /** The profile as kept, or read when it is not; null when the queue does not exist. */
  async known(exec: Executor, name: string): Promise<ClaimProfile | null> {
    return this.profiles.get(name) ?? this.reread(exec, name);
  }

  /**
   * Reads queue `name`'s profile again and keeps it (null: the queue does not exist). A profile is kept for the
   * engine's life, but another instance may delete the queue and make it again with other settings (another
   * `partition` puts its jobs in another table): what runs on the old table then finds nothing there, or fails
   * with undefined_table. The callers that see that read it again (withQueueStatements, fetch, a worker's recheck).
   */
  async reread(exec: Executor, name: string): Promise<ClaimProfile | null> {
    const [row] = await exec.query<ClaimProfile>(this.acrossQueues.getClaimProfile, [name]);
    if (row) this.profiles.set(name, row);
    else this.profiles.delete(name);
    return row ?? null;
  }

  /**
   * Reads queue `name`'s profile again (see reread) for a caller that claims with `was`: the new profile and its
   * statements when the queue was made again with another table, policy or limits; undefined when nothing that a
   * claim depends on changed; null when the queue no longer exists. Callers do it after a claim came back empty or
   * met undefined_table, at most every PROFILE_RECHECK_MS, so an idle queue costs one read per interval.
   */
  async recheck(
    exec: Executor,
    name: string,
    was: ClaimProfile,
  ): Promise<{ profile: ClaimProfile; statements: Statements } | null | undefined> {
    const now = await this.reread(exec, name);
    if (now === null) return null;
    if (now.jobsTable === was.jobsTable && now.policy === was.policy && now.limited === was.limited) return undefined;
    return { profile: now, statements: this.statementsForProfile(now) };
  }

  /** Throws QueueNotFoundError unless queue `name` exists now (read, not kept: the queue may just have been deleted). */
  async assertExists(exec: Executor, name: string): Promise<void> {
    const rows = await exec.query(this.acrossQueues.queueExists, [name]);
    if (rows.length === 0) throw new QueueNotFoundError(name);
  }

  /** Forgets what is kept of queue `name` (it was deleted, or its policy turned out other than kept). */
  forget(name: string): void {
    this.profiles.delete(name);
  }

  /**
   * The statements for the jobs of a queue with this profile: those that read or change only that queue's jobs
   * name the table that holds them (its partition, or jobs_default) instead of `jobs`. Planned for `jobs`, a
   * statement covers every partition, and these are planned on each run (or, for a claim, executed) with all of
   * them: a queue among 100 with partitions of their own drained 9,849 jobs/s with these statements and 2,000
   * with statements on `jobs` (bench/RESULTS-partitions.md, `npm run bench:partitions`). For no profile (a
   * queue that does not exist), those on `jobs`.
   */
  statementsForProfile(profile: ClaimProfile | null): Statements {
    if (!profile) return this.acrossQueues;
    let statements = this.byTable.get(profile.jobsTable);
    if (!statements) {
      statements = buildStatements(this.schemaIdent, `${this.schemaIdent}.${profile.jobsTable}`);
      for (const text of planOnce(statements)) this.preparedTexts.add(text);
      this.byTable.set(profile.jobsTable, statements);
    }
    return statements;
  }

  /** The statements for the jobs of queue `name`, as far as the kept profile knows (see statementsForProfile). */
  async statementsForQueue(exec: Executor, name: string): Promise<Statements> {
    return this.statementsForProfile(await this.known(exec, name));
  }

  /**
   * Runs `run` with the statements for the jobs of queue `name`. When it fails with undefined_table, or `short`
   * says its result falls short of what was asked, the queue's profile is read again and, only if the queue's jobs
   * now live in another table, `run` runs once more there: the run on the old table changed nothing, as the
   * queue's jobs cannot be in two tables (they are routed by queue, and deleteQueue deletes them with the queue).
   * On the same table it never runs twice.
   */
  async withQueueStatements<R>(
    exec: Executor,
    name: string,
    run: (statements: Statements) => Promise<R>,
    short: (result: R) => boolean,
  ): Promise<R> {
    const first = await this.statementsForQueue(exec, name);
    let result: R;
    try {
      result = await run(first);
      if (!short(result)) return result;
    } catch (err) {
      if (sqlState(err) !== SQLSTATE.undefinedTable) throw err;
      const now = this.statementsForProfile(await this.reread(exec, name));
      if (now === first) throw err;
      return run(now);
    }
    const now = this.statementsForProfile(await this.reread(exec, name));
    return now === first ? result : run(now);
  }
}

/**
 * The statements prepared once per connection, whose generic plan cannot depend on the table's size (see
 * ENGINE_SESSION in db.ts): the claims (the ready index walked in claim order, the update by tid), the
 * inserts (no scan of jobs; publish's also probes the primary keys of subscriptions and queues), a loop's
 * read of its next due time (index probes only; planning it was most of its time: bench/design/next-due.mjs),
 * and a worker's completions of jobs that are no flow parent (a primary-key probe per job named; preparing them
 * cut a drain's machine CPU per job by 6% in two runs). A plan stays in each connection's backend for each table it
 * ran on, so the rarer writes with larger plans (failLeafJobs: 655 KiB) are planned on each run: docs/design.md,
 * "Planning: what is prepared and what is planned on each run". claim.spec.ts plans the claims, and settle.spec.ts
 * the completions, on a small table and checks what a run reads once it has grown.
 */
function planOnce(st: Statements): ReadonlySet<string> {
  return new Set([
    st.claimJobs,
    st.claimJobsOnePerKey,
    st.claimJobsKeyFifo,
    st.insertJobs,
    st.insertJobsUnchecked,
    st.insertJobsKeyed,
    st.insertJobsKeyedUnchecked,
    st.publishJobs,
    st.nextDue,
    st.completeLeafJobs,
    st.removeLeafJobs,
  ]);
}
