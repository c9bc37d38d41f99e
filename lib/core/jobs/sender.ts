// Sending: one job (plain, throttled, debounced, deferred) or many in one statement, on the engine's pool or in
// the caller's transaction. The policy's conflict check is paid only where a queued job could meet it.
import { callerExecutor, type Executor } from '../runtime/db.js';
import { InvalidOptionError } from '../errors.js';
import { jobNameOf, resolveJob, type JobName } from '../job-definition.js';
import { assertDeadLetterTargets, deadLetterTargets } from './dead-letter-targets.js';
import { BULK_CALL_OPTIONS, INSERT_JOB_OPTIONS } from '../config/option-keys.js';
import { parseSendOptions, parseStartAfter, type ParsedSendOptions } from '../config/options.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { insertArgs } from '../sql/index.js';
import type { EnqueueResult, JobInsert, JobState, SendOptions } from '../types.js';
import { int, MAX_SECONDS, noUnknownKeys, optKey, queueName, record, toJson } from '../config/validate.js';

/** Policies whose unique indexes no queued job can meet: their inserts need no conflict check. */
const POLICIES_FREE_ON_INSERT: ReadonlySet<string> = new Set(['standard', 'singleton', 'key_strict_fifo']);

/** The sending calls; PgQueue's methods of the same names delegate here, and flows insert through insertRows. */
export class Sender {
  constructor(private readonly rt: Runtime) {}

  async send<T = unknown>(job: JobName<T>, payload?: T, options?: SendOptions): Promise<string | null> {
    const { name, data } = resolveJob(job, payload);
    queueName('name', name);
    return (await this.sendOne(name, data, options, parseSendOptions(options))).id;
  }

  /**
   * send() with its answer: the job's id, its state and when it may start, read back after the insert (in the
   * caller's transaction with `options.db`, else on the engine's pool), and whether a held `dedupeKey` gave the
   * holder's id instead of a new job. No job (refused by the queue's policy, or a dedupeKey whose holder finished
   * in between) answers id null; a job gone before the read (run and removed) answers state and startAfter null.
   */
  async enqueue<T = unknown>(job: JobName<T>, payload?: T, options?: SendOptions): Promise<EnqueueResult> {
    const { name, data } = resolveJob(job, payload);
    queueName('name', name);
    const { id, deduped, exec } = await this.sendOne(name, data, options, parseSendOptions(options));
    if (id === null) return { id: null, queue: name, state: null, startAfter: null, deduped: false };
    const [row] = await this.rt.router.withQueueStatements(
      exec,
      name,
      (st) => exec.query<{ state: JobState; start_ms: number | null }>(st.enqueuedJob, [name, id]),
      (rows) => rows.length === 0,
    );
    const startAfter = row?.start_ms == null ? null : new Date(row.start_ms);
    return { id, queue: name, state: row?.state ?? null, startAfter, deduped };
  }

  /** `underWay`: the second send of one call (sendDebounced), which a close() that began meanwhile does not refuse. */
  private async sendOne(
    name: string,
    data: unknown,
    options: SendOptions | undefined,
    parsed: ParsedSendOptions,
    underWay = false,
  ): Promise<{ id: string | null; deduped: boolean; exec: Executor }> {
    const json = toJson('data', data, this.rt.config.maxPayloadBytes);
    // In a caller's transaction too, a send made once close() has begun is refused (start()).
    await (underWay ? this.rt.ready() : this.rt.start());
    const exec = options?.db ? callerExecutor(options.db) : this.rt.exec;
    const [id] = await this.insertRows(exec, name, [json], [parsed], () => 'options.deadLetter');
    if (id !== undefined) return { id, deduped: false, exec };
    if (parsed.dedupeKey === undefined) return { id: null, deduped: false, exec };
    const [holder] = await this.rt.router.withQueueStatements(
      exec,
      name,
      (st) => exec.query<{ id: string }>(st.findPendingByDedupeKey, [name, parsed.dedupeKey]),
      (rows) => rows.length === 0,
    );
    return { id: holder?.id ?? null, deduped: holder !== undefined, exec };
  }

  async sendThrottled<T = unknown>(
    job: JobName<T>,
    payload: T,
    options: SendOptions | null | undefined,
    seconds: number,
    key?: string | null,
  ): Promise<string | null> {
    const { name, data } = resolveJob(job, payload);
    queueName('name', name);
    const parsed = this.throttled(options, seconds, key);
    return (await this.sendOne(name, data, options ?? undefined, parsed)).id;
  }

  async sendDebounced<T = unknown>(
    job: JobName<T>,
    payload: T,
    options: SendOptions | null | undefined,
    seconds: number,
    key?: string | null,
  ): Promise<string | null> {
    const { name, data } = resolveJob(job, payload);
    queueName('name', name);
    const parsed = this.throttled(options, seconds, key);
    const now = (await this.sendOne(name, data, options ?? undefined, parsed)).id;
    if (now !== null) return now;
    return (await this.sendOne(name, data, options ?? undefined, { ...parsed, slotOffset: 1 }, true)).id;
  }

  /**
   * The options of a throttled or debounced send. What the arguments set may not be given in the options too, where
   * it would be overridden without a word: the start (the slot's), and the key when the `key` argument is given
   * (null or undefined: the key is `options.singletonKey`).
   */
  private throttled(options: SendOptions | null | undefined, seconds: number, key: string | null | undefined): ParsedSendOptions {
    const parsed = parseSendOptions(options);
    const throttle = int('seconds', seconds, 1, MAX_SECONDS);
    if (parsed.startAt !== undefined || parsed.startIn !== undefined) {
      throw new InvalidOptionError('options.startAfter', 'left out: a throttled job starts in its time slot', options?.startAfter);
    }
    if (key === undefined || key === null) return { ...parsed, throttle, slotOffset: 0 };
    if (parsed.singletonKey !== undefined) {
      throw new InvalidOptionError(
        'options.singletonKey',
        'left out when the key argument is given: the key argument is the throttle key',
        options?.singletonKey,
      );
    }
    return { ...parsed, singletonKey: optKey('key', key), throttle, slotOffset: 0 };
  }

  /** send() with its start given apart: `options.startAfter` is refused (the argument would override it). */
  async sendAfter<T = unknown>(
    job: JobName<T>,
    payload: T,
    options: SendOptions | null | undefined,
    startAfter: Date | string | number,
  ): Promise<string | null> {
    const { name, data } = resolveJob(job, payload);
    queueName('name', name);
    const parsed = parseSendOptions(options);
    if (parsed.startAt !== undefined || parsed.startIn !== undefined) {
      throw new InvalidOptionError('options.startAfter', "left out: sendAfter's startAfter argument is the start", options?.startAfter);
    }
    return (await this.sendOne(name, data, options ?? undefined, { ...parsed, ...parseStartAfter('startAfter', startAfter) })).id;
  }

  async insert<T = unknown>(queue: JobName<T>, jobs: JobInsert<T>[], options?: Pick<SendOptions, 'db'>): Promise<string[]> {
    const name = jobNameOf(queue);
    queueName('name', name);
    if (!Array.isArray(jobs)) throw new InvalidOptionError('jobs', 'an array of jobs', jobs);
    const opts = record('options', options);
    noUnknownKeys('options', opts, BULK_CALL_OPTIONS.keys, BULK_CALL_OPTIONS.hints);
    // a job's own db is refused (INSERT_JOB_OPTIONS): every job goes in on the call's connection
    const parsed = jobs.map((job, i) => parseSendOptions(job, `jobs[${i}]`, INSERT_JOB_OPTIONS));
    const data = jobs.map((job, i) =>
      toJson(
        `jobs[${i}].data`,
        typeof queue === 'string' ? job.data : resolveJob(queue, job.data, `jobs[${i}].data`).data,
        this.rt.config.maxPayloadBytes,
      ),
    );
    if (jobs.length === 0) return [];
    const exec = opts.db ? (await this.rt.start(), callerExecutor(opts.db)) : await this.rt.db();
    return this.insertRows(exec, name, data, parsed, (i) => `jobs[${i}].deadLetter`);
  }

  /**
   * Inserts jobs of one queue, in a span of their send when tracing; its callers (send, insert, flows, the scheduler)
   * have started the engine. With `deadLetterField` (the field that names the i-th job's deadLetter), the jobs'
   * own dead-letter queues are checked first (dead-letter-targets.ts); flows check theirs before their first insert,
   * and the scheduler sends what schedule() checked.
   */
  insertRows(
    exec: Executor,
    name: string,
    data: (string | null)[],
    jobs: ParsedSendOptions[],
    deadLetterField?: (i: number) => string,
  ): Promise<string[]> {
    const tracing = this.rt.tracing;
    if (!tracing) return this.insertTraced(exec, name, data, jobs, null, deadLetterField);
    return tracing.send(name, data.length, (context) => this.insertTraced(exec, name, data, jobs, context, deadLetterField));
  }

  /** `traceContext`: stored in every job of the insert, for its attempts' spans to link to. */
  private async insertTraced(
    exec: Executor,
    name: string,
    data: (string | null)[],
    jobs: ParsedSendOptions[],
    traceContext: string | null,
    deadLetterField: ((i: number) => string) | undefined,
  ): Promise<string[]> {
    const profile = await this.rt.router.profile(exec, name);
    // after the queue's own profile, so that a call to a queue that does not exist says so first
    const targets = deadLetterField ? deadLetterTargets(jobs, deadLetterField) : [];
    if (targets.length > 0) await assertDeadLetterTargets(this.rt.router, exec, targets);
    if (profile.policy === 'key_strict_fifo') {
      jobs.forEach((job, i) => {
        if (job.singletonKey === undefined) {
          const field = jobs.length === 1 && data.length === 1 ? 'options.singletonKey' : `jobs[${i}].singletonKey`;
          throw new InvalidOptionError(field, `a key on every job of key_strict_fifo queue "${name}"`, undefined);
        }
      });
    }
    // A column no job sets goes as one null (unnest pads it), not as an array of nulls. Which keys any job
    // sets is found in one pass over the jobs (a search per column was 20 passes).
    const set = new Set<string>();
    for (const job of jobs) for (const key in job) if (job[key as keyof ParsedSendOptions] !== undefined) set.add(key);
    const col = <K extends keyof ParsedSendOptions>(key: K) => (set.has(key) ? jobs.map((j) => j[key] ?? null) : null);
    // Inside a caller's transaction the checked insert is always used: if the cached policy were out of
    // date, an unchecked insert's unique violation would abort the caller's transaction.
    const mayConflict =
      exec !== this.rt.exec ||
      !POLICIES_FREE_ON_INSERT.has(profile.policy) ||
      jobs.some((j) => j.dedupeKey !== undefined || j.throttle !== undefined);
    const args = insertArgs(
      name,
      `[${data.map((d) => d ?? 'null').join(',')}]`,
      col,
      jobs.map((j) => j.slotOffset ?? 0),
      traceContext,
    );
    const insert = (text: string) => exec.query<{ id: string }>(text, args);
    // Only a batch of two or more jobs with keys may hold a key_strict_fifo job that waits behind another.
    const keyed = jobs.length >= 2 && jobs.some((j) => j.singletonKey !== undefined);
    const checked = keyed ? this.rt.statements.insertJobsKeyed : this.rt.statements.insertJobs;
    let rows: { id: string }[];
    if (mayConflict) {
      rows = await insert(checked);
    } else {
      try {
        rows = await insert(keyed ? this.rt.statements.insertJobsKeyedUnchecked : this.rt.statements.insertJobsUnchecked);
      } catch (err) {
        // The cached policy was out of date (the queue was deleted and created again with another policy).
        // The refused statement wrote nothing (it ran on its own, outside any transaction).
        if (sqlState(err) !== SQLSTATE.uniqueViolation) throw err;
        this.rt.router.forget(name);
        rows = await insert(checked);
      }
    }
    // The insert reads the queue's row: no row back means no such queue, or every job was refused.
    if (rows.length === 0) await this.rt.router.assertExists(exec, name);
    return rows.map((r) => r.id);
  }
}
