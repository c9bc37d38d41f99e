// Changing jobs that have not started: update() gives waiting jobs (created, retry), named by id or by singleton
// key, a new payload and new options; upsert() does that or, when no job of the key waits, sends one. Each
// update is one statement that re-checks the job's state under its row lock, so a job a worker claimed is never
// changed (sql/update.ts).
import { callerExecutor, inTransaction, pgExecutor, type Executor } from '../runtime/db.js';
import { assertDeadLetterTargets } from './dead-letter-targets.js';
import { InvalidOptionError } from '../errors.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import { isJobDefinition, jobNameOf, resolveJob, type JobName } from '../job-definition.js';
import { isJobId } from './refs.js';
import { jobDefaultKeys, parseSendOptions } from '../config/options.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Sender } from './sender.js';
import { updateArgs, type Statements, type UpdateValues } from '../sql/index.js';
import type { SendOptions, TransactionLike } from '../types.js';
import { noUnknownKeys, oneOf, optKey, queueName, record, toJson } from '../config/validate.js';

/** Which waiting jobs of a singleton key an update changes: the one sent last, the one sent first, or every one. */
export type UpdateMatch = 'newest' | 'oldest' | 'all';

/** The options of update(): which jobs (`id` or `singletonKey`, with `match`), and the send options to change. */
export interface UpdateOptions extends Omit<SendOptions, 'singletonKey' | 'dedupeKey'> {
  /** The job's id. Give this or `singletonKey`. */
  id?: string;
  /** The waiting jobs of this key. Give this or `id`. */
  singletonKey?: string;
  /** With `singletonKey`: which of its waiting jobs change (default 'newest'). */
  match?: UpdateMatch;
}

/**
 * The options of upsert(): the jobs of `singletonKey`, or the job `id`, to update, else the options the new job is
 * sent with. `dedupeKey` applies to the job an upsert inserts; a job it updates keeps its own. With `db`, a READ
 * COMMITTED transaction (the key's lock lasts until it ends).
 */
export interface UpsertOptions extends SendOptions {
  /** The waiting jobs of this key. Give this or `id`. */
  singletonKey?: string;
  /**
   * The job of this id, updated while it waits; when the queue has no job of this id, the job upsert inserts gets it
   * (an id the jobs' sequence has handed out already: ids are not chosen here otherwise). Not on key_strict_fifo queues.
   */
  id?: string;
  /** Which waiting jobs of the key change (default 'newest'). */
  match?: UpdateMatch;
}

/** update()'s answer: the ids of the jobs changed, and how many. */
export interface UpdateResult {
  jobs: string[];
  updated: number;
}

/** upsert()'s answer: the ids of the jobs changed or the one inserted, and how many of each. */
export interface UpsertResult extends UpdateResult {
  inserted: number;
}

/** The object form of update() and upsert(). */
export interface UpdateSpec<T = unknown, O = UpdateOptions> {
  name: JobName<T>;
  data?: T;
  options?: O;
}

/** The options that name the jobs, not a change. */
const TARGET_KEYS = new Set(['id', 'singletonKey', 'match', 'db']);

/** The options a waiting job's update may change: what send() takes but the keys a stored job keeps. */
const CHANGE_KEYS = ['priority', 'startAfter', 'deadLetter', 'group', ...jobDefaultKeys()];
const UPDATE_KEYS = new Set([...TARGET_KEYS, ...CHANGE_KEYS]);
const UPSERT_KEYS = new Set([...UPDATE_KEYS, 'dedupeKey']);

/** update()/upsert() options after validation. */
export interface ParsedUpdate {
  id?: string;
  key?: string;
  match: UpdateMatch;
  db?: TransactionLike;
  /** The SendOptions names of the fields to change ('data' included when the payload changes). */
  given: string[];
  values: UpdateValues;
  /** The options as send() takes them, for upsert's insert. */
  sendOptions: SendOptions;
}

/** update() and upsert(); PgQueue's methods of the same names delegate here. */
export class JobUpdate {
  constructor(
    private readonly rt: Runtime,
    private readonly sender: Sender,
  ) {}

  async update<T>(job: JobName<T> | UpdateSpec<T>, payload?: T, options?: UpdateOptions): Promise<UpdateResult> {
    const call = spec('update', job, payload, options);
    const name = jobNameOf(call.name);
    queueName('name', name);
    const p = parseUpdateOptions(call.options, false);
    const values = this.withData(call.name, call.data, p);
    const exec = p.db ? (await this.rt.start(), callerExecutor(p.db)) : await this.rt.db();
    return this.change(exec, name, p, values);
  }

  /**
   * Updates the waiting jobs of `options.singletonKey` as update() does; when none waits, sends the job as send()
   * would. The two run in one transaction (the caller's with `options.db`) that holds a lock on the key, so
   * upserts of one key run one after the other and a second finds what the first inserted.
   */
  async upsert<T>(job: JobName<T> | UpdateSpec<T, UpsertOptions>, payload?: T, options?: UpsertOptions): Promise<UpsertResult> {
    const call = spec('upsert', job, payload, options);
    const name = jobNameOf(call.name);
    queueName('name', name);
    const p = parseUpdateOptions(call.options, true);
    const values = this.withData(call.name, call.data, p);
    const st = this.rt.statements;
    const run = async (exec: Executor, db: TransactionLike): Promise<UpsertResult> => {
      // by id, the lock is the id's (written so that no singleton key of the queue shares it but by chance of its hash)
      const [lock] = await exec.query<{ isolation: string }>(st.lockUpsertKey, [name, p.key ?? `\u0001id:${p.id}`]);
      if (lock?.isolation !== 'read committed') {
        throw new InvalidOptionError(
          'options.db',
          'a READ COMMITTED transaction (upsert serialises one key by a lock taken after its snapshot)',
          lock?.isolation,
        );
      }
      if (p.id !== undefined && (await this.rt.router.profile(exec, name)).policy === 'key_strict_fifo')
        throw new InvalidOptionError('options.id', 'left out on a key_strict_fifo queue: upsert goes by options.singletonKey there', p.id);
      const changed = await this.change(exec, name, p, values);
      if (changed.updated > 0) return { ...changed, inserted: 0 };
      const none = { jobs: [], updated: 0, inserted: 0 };
      if (p.id !== undefined && !(await this.insertableId(exec, name, p.id))) return none;
      // enqueue, not send: a dedupeKey held by another job answers the holder's id, which this call did not insert
      if (p.id === undefined) {
        const sent = await this.sender.enqueue(call.name, call.data, { ...p.sendOptions, db });
        return sent.id === null || sent.deduped ? none : { jobs: [sent.id], updated: 0, inserted: 1 };
      }
      // by id, under a savepoint: a job of the queue that holds the id, but whose send has not committed (the check
      // above could not see it), makes the re-keying a unique violation, undone alone as when the id is held
      const id = p.id;
      await exec.query(st.upsertSavepoint);
      try {
        const sent = await this.sender.enqueue(call.name, call.data, { ...p.sendOptions, db });
        if (sent.id !== null && !sent.deduped)
          await exec.query((await this.rt.router.statementsForQueue(exec, name)).rekeyJob, [name, sent.id, id]);
        await exec.query(st.releaseUpsertSavepoint);
        return sent.id === null || sent.deduped ? none : { jobs: [id], updated: 0, inserted: 1 };
      } catch (err) {
        await exec.query(st.rollbackUpsertSavepoint);
        await exec.query(st.releaseUpsertSavepoint);
        if (sqlState(err) === SQLSTATE.uniqueViolation && (err as { constraint?: string }).constraint?.endsWith('_pkey')) return none;
        throw err;
      }
    };
    if (p.db) {
      await this.rt.start();
      const exec = callerExecutor(p.db);
      await inCallersTransaction(exec, st);
      return run(exec, p.db);
    }
    await this.rt.db();
    return inTransaction(this.rt.connect, async (client) => {
      await client.query(st.upsertIsolation);
      return run(pgExecutor(client), client);
    });
  }

  /**
   * Whether upsert() by id may insert a job of `id` into queue `name`, none of whose jobs was updated: not when the
   * queue holds a job of that id (started or finished: the update leaves it, as update() does), and refused for an id
   * the jobs' sequence has not handed out yet (it would hand it to another job later).
   */
  private async insertableId(exec: Executor, name: string, id: string): Promise<boolean> {
    const st = await this.rt.router.statementsForQueue(exec, name);
    if ((await exec.query(st.getJobStates, [name, [id]])).length > 0) return false;
    const [seq] = await exec.query<{ last: string }>(st.lastJobId);
    if (BigInt(id) > BigInt(seq!.last))
      throw new InvalidOptionError(
        'options.id',
        `an id up to ${seq!.last}, the last the jobs' sequence handed out, or a job's of this queue (ids are not chosen here: a later one would be handed to another job)`,
        id,
      );
    return true;
  }

  /** The values with the payload when one is given (through the job's schema, as send() takes it). */
  private withData(job: JobName<unknown>, data: unknown, p: ParsedUpdate): UpdateValues {
    if (data === undefined) return p.values;
    const resolved = resolveJob(job, data).data;
    return { ...p.values, data: toJson('data', resolved, this.rt.config.maxPayloadBytes) };
  }

  private async change(exec: Executor, name: string, p: ParsedUpdate, values: UpdateValues): Promise<UpdateResult> {
    // a job's new dead-letter queue is checked as send() checks it
    if (values.deadLetter !== undefined)
      await assertDeadLetterTargets(this.rt.router, exec, [{ field: 'options.deadLetter', queue: values.deadLetter }]);
    const given = 'data' in values ? [...p.given, 'data'] : p.given;
    const statement = (st: Statements): string =>
      p.id !== undefined
        ? st.updateJobById
        : p.match === 'all'
          ? st.updateJobsByKey
          : p.match === 'oldest'
            ? st.updateOldestByKey
            : st.updateNewestByKey;
    const args = updateArgs(name, p.id ?? p.key!, this.rt.config.channel, given, values);
    const rows = await this.rt.router.withQueueStatements(
      exec,
      name,
      (st) => exec.query<{ id: string; blocked: boolean }>(statement(st), args),
      (rows) => rows.length === 0,
    );
    if (rows.length === 0) await this.rt.router.assertExists(exec, name);
    const blocked = rows.filter((r) => r.blocked).map((r) => r.id);
    if (blocked.length > 0) {
      // RELEASE_CHILDREN sets both when the parents complete: a change now would be lost then
      const field = p.given.includes('startAfter') ? 'startAfter' : 'retentionSeconds';
      throw new InvalidOptionError(
        `options.${field}`,
        `left out for a job that waits for its flow parents (job ${blocked.join(', ')}): it starts, and its retention counts, when they complete`,
        p.sendOptions[field],
      );
    }
    return { jobs: rows.map((r) => r.id), updated: rows.length };
  }
}

/** The arguments of either form: `(name, data, options)` or `({ name, data, options })`. */
function spec<T, O>(call: string, job: JobName<T> | UpdateSpec<T, O>, data: T | undefined, options: O | undefined): UpdateSpec<T, O> {
  if (typeof job === 'string' || isJobDefinition(job)) return { name: job, data, options };
  const o = record(call, job) as unknown as UpdateSpec<T, O>;
  noUnknownKeys(call, o as unknown as Record<string, unknown>, new Set(['name', 'data', 'options']));
  if (data !== undefined || options !== undefined) {
    throw new InvalidOptionError(
      `${call}()`,
      'called with one object ({ name, data, options }) or with (name, data, options)',
      data ?? options,
    );
  }
  if (o.name === undefined) throw new InvalidOptionError(`${call}.name`, 'a queue name or a job of defineJob()', o.name);
  return o;
}

/** Validates update/upsert options: the target, then the changes as send() validates them. */
export function parseUpdateOptions(options: unknown, upsert: boolean): ParsedUpdate {
  const o = record('options', options);
  const key = optKey('options.singletonKey', o.singletonKey);
  const id = o.id === undefined ? undefined : jobId(o.id);
  if (id !== undefined && key !== undefined) {
    throw new InvalidOptionError('options', 'given either id or singletonKey, not both', { id, singletonKey: key });
  }
  if (id === undefined && key === undefined) {
    throw new InvalidOptionError('options.id', 'given, or options.singletonKey (it names the jobs to change)', undefined);
  }
  if (id !== undefined && o.match !== undefined) {
    throw new InvalidOptionError('options.match', 'left out with options.id (one job)', o.match);
  }
  const match = o.match === undefined ? 'newest' : oneOf('options.match', o.match, ['newest', 'oldest', 'all'] as const);
  if (o.data !== undefined) throw new InvalidOptionError('options.data', 'left out: the payload is the data argument', o.data);
  // A stored job keeps its dedupeKey: it places the job under a unique index. upsert sends it with a job it
  // inserts; a job it updates keeps its own, as it keeps its singletonKey.
  if (!upsert && o.dedupeKey !== undefined) {
    throw new InvalidOptionError('options.dedupeKey', 'left out: a stored job keeps its dedupeKey', o.dedupeKey);
  }
  noUnknownKeys('options', o, upsert ? UPSERT_KEYS : UPDATE_KEYS);
  const changes: Record<string, unknown> = {};
  const sendOptions: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || k === 'match' || k === 'id') continue;
    if (k !== 'db') sendOptions[k] = v;
    if (!TARGET_KEYS.has(k) && k !== 'dedupeKey') changes[k] = v;
  }
  // the same checks as send(), on the whole of the options (unknown keys included), and the fields to change
  parseSendOptions(sendOptions);
  const values: UpdateValues = parseSendOptions(changes);
  return {
    id,
    key,
    match,
    db: o.db as TransactionLike | undefined,
    given: Object.keys(changes),
    values,
    sendOptions: sendOptions,
  };
}

function jobId(value: unknown): string {
  if (isJobId(value)) return value;
  throw new InvalidOptionError('options.id', 'a job id (a string of digits, 1 to 9223372036854775807)', value);
}

/**
 * Refuses a caller's `db` that is not inside a transaction (a pool, a Drizzle database, a client without BEGIN):
 * upsert's lock on the key would end with its own statement, and two upserts could both insert.
 */
async function inCallersTransaction(exec: Executor, st: Statements): Promise<void> {
  try {
    await exec.query(st.upsertSavepoint);
  } catch (err) {
    if (sqlState(err) !== SQLSTATE.noActiveTransaction) throw err;
    throw new InvalidOptionError(
      'options.db',
      'a transaction (a Drizzle tx, or a pg client inside BEGIN): upsert holds its key lock until it ends',
      'a connection outside any transaction',
    );
  }
  await exec.query(st.releaseUpsertSavepoint);
}
