// Job control: what a caller does to jobs it names by id. Complete, fail and touch by hand (fenced on retryCount
// when the caller gives one), cancel, resume, retry and delete (redrive: redrive.ts; getJobById: dependencies.ts).
// Each change runs on the table that holds the queue's jobs (QueueRouter), the statement without a flow's work first.
import { callerExecutor, type Executor } from '../runtime/db.js';
import { JobNotFoundError, JobStateError, QueueError } from '../errors.js';
import { parseRefs, plainIds, type ParsedRef } from './refs.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import type { QueueRouter } from '../queues/router.js';
import { completeArgs, completeLeafArgs, failArgs, touchArgs, type Statements } from '../sql/index.js';
import type { SettleTarget } from '../sql/settle.js';
import type { JobRef, TransactionLike } from '../types.js';
import { noUnknownKeys, optBool, queueName, record, toJson } from '../config/validate.js';
import { describeFailure, holdsJobsBack } from '../worker/index.js';

/**
 * The `db` option of the calls on jobs by id and of fetch() (pg-boss's ConnectionOptions): the call runs inside the
 * caller's transaction (a Drizzle transaction or database, or a pg client), so its change commits or rolls back
 * with the caller's work; an error then aborts that transaction, as any failed statement does.
 */
export interface ConnectionOptions {
  db?: TransactionLike;
}

/** Options of `complete`. */
export interface CompleteOptions extends ConnectionOptions {
  /**
   * Also complete jobs that have not started (created, retry), as pg-boss's option of the same name; else only
   * active ones.
   */
  includeQueued?: boolean;
}

const COMPLETE_KEYS: ReadonlySet<string> = new Set(['includeQueued', 'db']);
const CONNECTION_KEYS: ReadonlySet<string> = new Set(['db']);

/** The caller's `db` of `options` (undefined: none), its keys checked against `keys`. */
function dbOf(options: unknown, keys: ReadonlySet<string> = CONNECTION_KEYS): TransactionLike | undefined {
  const o = record('options', options);
  noUnknownKeys('options', o, keys);
  return o.db as TransactionLike | undefined;
}

/**
 * `complete`'s output and options from its third and fourth arguments. Besides pg-boss's
 * `complete(name, ids, output, { includeQueued, db })`, the short form `complete(name, ids, { includeQueued, db })` is
 * read as options (no output): a third argument that is a plain object whose only keys (own, enumerable) are
 * `includeQueued` and a `db` that is a client or database, and no fourth. So an output of that exact shape is stored
 * only when options follow it, even `{}`; an output with a `db` of another kind is stored, as pg-boss stores it.
 */
export function completeOutputAndOptions(output: unknown, options: unknown): { output: unknown; options: unknown } {
  if (options !== undefined || output === null || typeof output !== 'object') return { output, options };
  const proto: unknown = Object.getPrototypeOf(output);
  if (proto !== Object.prototype && proto !== null) return { output, options };
  const keys = Reflect.ownKeys(output);
  const enumerable = (k: string | symbol) => Object.prototype.propertyIsEnumerable.call(output, k);
  // a `db` that is a client or a Drizzle database: no output JSON can hold one, so it can only be an option (an output
  // may well have a key `db` of its own: pg-boss stores it)
  const db: unknown = (output as { db?: unknown }).db;
  const client =
    typeof db === 'object' && db !== null && ['query', 'execute'].some((m) => typeof (db as Record<string, unknown>)[m] === 'function');
  const short = keys.length > 0 && keys.every((k) => (k === 'includeQueued' || (k === 'db' && client)) && enumerable(k));
  return short ? { output: undefined, options: output } : { output, options };
}

/** How many rows a job-control call asked for and how many it changed. */
export interface ChangeResult {
  requested: number;
  updated: number;
  /** The ids that were changed. */
  ids: string[];
}

/** What job control needs of the engine: its executor once started, where queues live, and the NOTIFY channel. */
export interface JobControlContext {
  /** The engine's executor, starting it if need be; rejects once close() has begun. */
  db(): Promise<Executor>;
  readonly router: QueueRouter;
  readonly channel: string;
}

/** The calls by hand on jobs named by id; PgQueue's methods of the same names delegate here. */
export class JobControl {
  constructor(private readonly ctx: JobControlContext) {}

  /** The caller's transaction when it gave `db`, else the engine's pool (starting the engine either way). */
  private async execFor(db: TransactionLike | undefined): Promise<Executor> {
    const own = await this.ctx.db();
    return db === undefined ? own : callerExecutor(db);
  }

  /**
   * A change by hand in two steps: `leaf` for all of `refs` (the statement without a flow's work, which changes
   * only jobs that no job waits for), then `full` for those it did not change, if any: flow parents, and jobs
   * the change does not apply to (`full` finds nothing there either). The flow's work names `jobs`, so `full`
   * is planned with every partition; most changes never run it.
   */
  private async leafFirst(
    refs: ParsedRef[],
    leaf: (some: ParsedRef[]) => Promise<{ id: string }[]>,
    full: (rest: ParsedRef[]) => Promise<{ id: string }[]>,
  ): Promise<{ id: string }[]> {
    const done = await leaf(refs);
    const changedIds = new Set(done.map((r) => r.id));
    const rest = refs.filter((r) => !changedIds.has(r.id));
    return rest.length === 0 ? done : [...done, ...(await full(rest))];
  }

  async complete(name: string, ids: JobRef | JobRef[], output?: unknown, options?: CompleteOptions): Promise<ChangeResult> {
    queueName('name', name);
    const refs = parseRefs(ids);
    const given = completeOutputAndOptions(output, options);
    const json = toJson('output', given.output);
    const o = record('options', given.options);
    const db = dbOf(o, COMPLETE_KEYS);
    const queued = optBool('options.includeQueued', o.includeQueued) ?? false;
    const exec = await this.execFor(db);
    const outputs = (some: ParsedRef[]) => some.map(() => json);
    const wake = await this.wakeChannel(exec, name);
    const rows = await this.ctx.router.withQueueStatements(
      exec,
      name,
      (st) =>
        this.leafFirst(
          refs,
          (some) =>
            exec.query<{ id: string }>(
              queued ? st.completeQueuedNonParentJobs : st.completeNonParentJobs,
              completeLeafArgs(byHand(name, some), outputs(some), wake),
            ),
          (rest) =>
            exec.query<{ id: string }>(
              queued ? st.completeQueuedJobs : st.completeJobs,
              completeArgs(byHand(name, rest), outputs(rest), this.ctx.channel, wake),
            ),
        ),
      (rows) => rows.length < new Set(refs.map((r) => r.id)).size,
    );
    return changed(refs.length, rows);
  }

  async fail(name: string, ids: JobRef | JobRef[], error?: unknown, options?: ConnectionOptions): Promise<ChangeResult> {
    queueName('name', name);
    const refs = parseRefs(ids);
    const db = dbOf(options);
    const info = describeFailure(error ?? new Error('failed by request'));
    const list = refs.map((r) => r.id);
    const exec = await this.execFor(db);
    const wake = await this.wakeChannel(exec, name);
    const attempts = (some: ParsedRef[]) =>
      failArgs(
        byHand(name, some),
        {
          errors: some.map(() => JSON.stringify(info.error)),
          permanent: some.map(() => info.permanent),
          retryAfterSeconds: some.map(() => info.retryAfterSeconds),
        },
        this.ctx.channel,
        wake,
      );
    const rows = await this.ctx.router
      .withQueueStatements(
        exec,
        name,
        (st) =>
          this.leafFirst(
            refs,
            (some) => exec.query<{ id: string }>(st.failLeafJobs, attempts(some)),
            (rest) => exec.query<{ id: string }>(st.failJobs, attempts(rest)),
          ),
        (rows) => rows.length < new Set(list).size,
      )
      .catch((err) => {
        throw keyTaken(err, name, list);
      });
    return changed(refs.length, rows);
  }

  /**
   * Extends the heartbeat of active jobs (touchJobs), for a caller that runs fetched jobs itself and names them by
   * id; `ids` lists the jobs still active (on the attempt a ref names), which the caller therefore still holds.
   */
  async touch(name: string, ids: JobRef | JobRef[], options?: ConnectionOptions): Promise<ChangeResult> {
    queueName('name', name);
    const refs = parseRefs(ids);
    const exec = await this.execFor(dbOf(options));
    const rows = await this.ctx.router.withQueueStatements(
      exec,
      name,
      (st) => exec.query<{ id: string }>(st.touchJobs, touchArgs(name, refs)),
      (rows) => rows.length < new Set(refs.map((r) => r.id)).size,
    );
    return changed(refs.length, rows);
  }

  async cancel(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.changeJobs('cancelJobs', name, ids, options);
  }

  async resume(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.changeJobs('resumeJobs', name, ids, options);
  }

  async retry(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    queueName('name', name);
    const list = [...new Set(plainIds(ids))];
    const exec = await this.execFor(dbOf(options));
    const rows = await this.ctx.router
      .withQueueStatements(
        exec,
        name,
        (st) => exec.query<{ id: string }>(st.retryJobs, [name, list, this.ctx.channel]),
        (rows) => rows.length < list.length,
      )
      .catch((err) => {
        throw keyTaken(err, name, list);
      });
    if (rows.length === list.length) return changed(list.length, rows);
    const statements = await this.ctx.router.statementsForQueue(exec, name);
    const states = new Map(
      (await exec.query<{ id: string; state: string }>(statements.getJobStates, [name, list])).map((r) => [r.id, r.state]),
    );
    for (const id of list) {
      const state = states.get(id);
      if (state === undefined) throw new JobNotFoundError(name, id);
      if (state !== 'failed') throw new JobStateError(name, id, state, 'failed');
    }
    throw new QueueError(`retrying jobs of queue "${name}" raced with another change; nothing was retried`, 'JOB_RACE');
  }

  async deleteJob(name: string, ids: string | string[], options?: ConnectionOptions): Promise<ChangeResult> {
    return this.changeJobs('deleteJobs', name, ids, options);
  }

  private async changeJobs(
    statement: 'cancelJobs' | 'resumeJobs' | 'deleteJobs',
    name: string,
    ids: string | string[],
    options: ConnectionOptions | undefined,
  ): Promise<ChangeResult> {
    queueName('name', name);
    const list = plainIds(ids);
    const db = dbOf(options);
    const params = statement === 'resumeJobs' ? [name, list, this.ctx.channel] : [name, list];
    const exec = await this.execFor(db);
    const run = (st: Statements) =>
      statement === 'cancelJobs'
        ? this.leafFirst(
            list.map((id) => ({ id, retryCount: null })),
            (some) => exec.query<{ id: string }>(st.cancelLeafJobs, [name, some.map((r) => r.id)]),
            (rest) => exec.query<{ id: string }>(st.cancelJobs, [name, rest.map((r) => r.id)]),
          )
        : exec.query<{ id: string }>(st[statement], params);
    const rows = await this.ctx.router
      .withQueueStatements(exec, name, run, (rows) => rows.length < new Set(list).size)
      .catch((err) => {
        throw keyTaken(err, name, list);
      });
    // resumeJobs sends its own NOTIFY (its jobs are new work).
    if (statement !== 'resumeJobs') await this.wake(exec, name, rows, db === undefined);
    return changed(list.length, rows);
  }

  /**
   * The channel when queue `name` holds jobs back (a policy other than standard, or a concurrency limit), for the
   * statements that end its jobs by hand to wake its workers as they commit (WAKE_HOLDING); else null. An unknown
   * queue: null (the statement then finds no job to change).
   */
  private async wakeChannel(exec: Executor, name: string): Promise<string | null> {
    const profile = await this.ctx.router.known(exec, name);
    return profile && holdsJobsBack(profile) ? this.ctx.channel : null;
  }

  /**
   * After cancel or deleteJob ended jobs of a queue that holds jobs back (a policy other than standard, or a
   * concurrency limit), wakes the queue's workers: the change may have released the next job of a key or a slot
   * (complete and fail send it from their statement: wakeChannel). A plain queue sends nothing. On the engine's
   * pool (`committed`) the change has committed: a NOTIFY that fails is not the caller's error, and the workers' next
   * poll finds the job. In a caller's transaction the NOTIFY goes out at its commit, and a failure is the
   * caller's to see: its transaction is aborted.
   */
  private async wake(exec: Executor, name: string, rows: readonly unknown[], committed: boolean): Promise<void> {
    if (rows.length === 0) return;
    if (!committed) {
      const channel = await this.wakeChannel(exec, name);
      if (channel) await exec.query(this.ctx.router.acrossQueues.wakeQueue, [channel, name]);
      return;
    }
    const channel = await this.wakeChannel(exec, name).catch(() => null);
    if (channel) await exec.query(this.ctx.router.acrossQueues.wakeQueue, [channel, name]).catch(() => undefined);
  }
}

/** A change by hand names jobs by id, and an attempt only by its retryCount when the caller gave one. */
function byHand(queue: string, refs: ParsedRef[]): SettleTarget {
  return {
    queue,
    ids: refs.map((r) => r.id),
    retryCounts: refs.map((r) => r.retryCount),
    workerId: null,
    claimCounts: refs.map(() => null),
    stamps: null,
  };
}

/** A unique index refused bringing jobs back: another pending job holds the key (policy or dedupe). */
function keyTaken(err: unknown, queue: string, ids: string[]): unknown {
  if (sqlState(err) !== SQLSTATE.uniqueViolation) return err;
  return new QueueError(
    `job(s) ${ids.join(', ')} of queue "${queue}" cannot move to that state now: another job holds the same key there (${(err as { constraint?: string }).constraint ?? 'policy'}); nothing was changed`,
    'KEY_TAKEN',
  );
}

function changed(requested: number, rows: { id: string }[]): ChangeResult {
  return { requested, updated: rows.length, ids: rows.map((r) => r.id) };
}
