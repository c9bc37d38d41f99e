import { createHash } from 'node:crypto';
import pg from 'pg';
import { InvalidOptionError } from '../errors.js';
import { sqlState, SQLSTATE } from './pg-errors.js';
import { beginEngineTransaction, commitTransaction, rollbackTransaction } from '../sql/transaction.js';

/** Runs one parameterised statement and returns its rows. */
export interface Executor {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
}

/** Anything with node-postgres' `query(config)`: a Pool, a Client, a PoolClient. */
interface PgQueryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

/**
 * Session settings of the connections the engine opens itself (run when each connects):
 * - plan_cache_mode: generic plans, made for any values, unnamed statements' too (so none may leave to the planner
 *   what only the values decide: READY in sql/claim.ts). A prepared statement is planned once per connection, so
 *   only those whose plan cannot depend on the table's size are prepared (planOnce in queues/router.ts).
 * - enable_seqscan, enable_bitmapscan: a plan made on a small or unanalysed table must not read the whole table
 *   once it has grown; the claim's update by tid has no other plan to fall back to.
 * - pgqueue.session: a mark no server default sets, which openEnginePool reads back to tell whether these arrived.
 * - jit: no statement runs long enough to pay compilation back. default_transaction_isolation: READ COMMITTED,
 *   which every statement assumes. Why each, and what it cost without: docs/design.md, "Planning: what is prepared
 *   and what is planned on each run".
 * They go as startup options, added to those the connection string may carry (pg lets the string's own `options`
 * replace the config's). Behind a transaction-mode pooler (found by openEnginePool, or `preparedStatements: false`)
 * neither they nor prepared statements are used.
 */
export const ENGINE_SESSION =
  '-c pgqueue.session=on -c plan_cache_mode=force_generic_plan -c enable_seqscan=off -c enable_bitmapscan=off -c jit=off -c default_transaction_isolation=read\\ committed';

/** The pool settings that open connections with ENGINE_SESSION, keeping the connection string's options. */
export function withEngineSession(connectionString: string): { connectionString: string; options?: string } {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return { connectionString, options: ENGINE_SESSION };
  }
  const own = url.searchParams.get('options');
  url.searchParams.set('options', own ? `${own} ${ENGINE_SESSION}` : ENGINE_SESSION);
  return { connectionString: url.toString() };
}

const statementNames = new Map<string, string>();

/** A prepared statement's name, derived from its text: the same text always gets the same name. */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `pgq_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * The statements a pool prepares, until a pooler shows that a prepared statement does not last there: a pooler in
 * transaction mode that passed the start's check (openEnginePool) hands each transaction a server connection of its
 * own, which lacks (26000) or already has (42P05) the statement the client believes it prepared. The first such
 * error turns naming off for the pool (`onLost` says so once); the statement failed before it ran, so it is sent
 * again unnamed.
 */
export class StatementNames {
  #lost = false;

  constructor(
    private readonly texts: ReadonlySet<string>,
    private readonly onLost: (err: unknown) => void,
  ) {}

  /** Whether statements are still prepared. */
  get active(): boolean {
    return !this.#lost;
  }

  /** The name `text` is prepared under, or null: sent unnamed. */
  nameOf(text: string): string | null {
    return !this.#lost && this.texts.has(text) ? statementName(text) : null;
  }

  /** Naming is off from now on. */
  lose(err: unknown): void {
    if (this.#lost) return;
    this.#lost = true;
    this.onLost(err);
  }
}

/**
 * A prepared statement the server connection did not have, or had already (see StatementNames); or one PostgreSQL
 * refuses to run since the columns it returns changed type (a newer release's migration, while this one runs): it
 * would refuse it on that connection however often it was sent. Each error comes before the statement ran.
 */
export function lostPreparedStatement(err: unknown): boolean {
  const code = sqlState(err);
  return (
    code === SQLSTATE.preparedStatementMissing ||
    code === SQLSTATE.preparedStatementExists ||
    // told apart by the server's routine, which a translated message (lc_messages) leaves as it is
    (code === SQLSTATE.featureNotSupported && (err as { routine?: unknown }).routine === 'RevalidateCachedQuery')
  );
}

/**
 * An executor over a pg Pool or client. A statement whose text is in `planOnce` is prepared once per
 * connection (named after its text) and runs its generic plan; only for connections that ran
 * ENGINE_SESSION. Every other statement is unnamed: planned on each run, for the table as it is then.
 */
export function pgExecutor(target: PgQueryable, planOnce: ReadonlySet<string> | StatementNames = NONE): Executor {
  const nameOf =
    planOnce instanceof StatementNames
      ? (text: string) => planOnce.nameOf(text)
      : (text: string) => (planOnce.has(text) ? statementName(text) : null);
  return {
    async query<R>(text: string, values: unknown[] = []) {
      const name = nameOf(text);
      if (name === null) return (await target.query({ text, values })).rows as R[];
      try {
        return (await target.query({ name, text, values })).rows as R[];
      } catch (err) {
        if (!(planOnce instanceof StatementNames) || !lostPreparedStatement(err)) throw err;
        planOnce.lose(err);
        return (await target.query({ text, values })).rows as R[];
      }
    },
  };
}

const NONE: ReadonlySet<string> = new Set();

/** The engine's own pool, and the pooler found on the way to PostgreSQL (null: none found, or none looked for). */
export interface EnginePool {
  readonly pool: pg.Pool;
  /** What showed a transaction-mode pooler: a clause for a warning ("… refused …"). */
  readonly pooler: string | null;
}

/** How PgBouncer answers a startup parameter it does not pass on (`options` unless in ignore_startup_parameters). */
function refusedStartupParameter(err: unknown): boolean {
  return sqlState(err) === SQLSTATE.protocolViolation && /startup parameter/i.test((err as Error).message ?? '');
}

/**
 * Opens the engine's pool on `connectionString` (`prepared`: the preparedStatements option). Unless it is false, the
 * connections open with ENGINE_SESSION and `check` (sql/migrate.ts: engineSessionMarked) reads on one of them that
 * they did: a pooler refuses the startup parameter that carries them (PgBouncer: "unsupported startup parameter:
 * options") or drops it. Then the pool opens again without them (left out), or the start fails (true:
 * InvalidOptionError naming the option). Another error ends the pool and is thrown. Whether LISTEN hears what the
 * pool sends is another question, which the LISTEN connection answers itself (WakeListener's hearing check).
 */
export async function openEnginePool(connectionString: string, max: number, prepared: boolean | null, check: string): Promise<EnginePool> {
  // allowExitOnIdle: idle connections never keep the process alive on their own.
  const open = (target: { connectionString: string; options?: string }) => new pg.Pool({ ...target, max, allowExitOnIdle: true });
  if (prepared === false) return { pool: open({ connectionString }), pooler: null };
  const pool = open(withEngineSession(connectionString));
  let pooler: string | null = null;
  try {
    const { rows } = await pool.query<{ marked: boolean }>(check);
    if (rows[0]?.marked !== true) pooler = "dropped the session settings the engine's connections open with (they did not arrive)";
  } catch (err) {
    if (!refusedStartupParameter(err)) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    pooler = `refused the session settings the engine's connections open with (${(err as Error).message})`;
  }
  if (pooler === null) return { pool, pooler };
  await pool.end().catch(() => undefined);
  if (prepared === true)
    throw new InvalidOptionError('preparedStatements', `left out or false here: the way to PostgreSQL ${pooler}, as a pooler does`, true);
  return { pool: open({ connectionString }), pooler };
}

interface DrizzleLike {
  execute(query: unknown): Promise<unknown>;
}

type SqlTag = ((strings: TemplateStringsArray, ...params: unknown[]) => unknown) & { param(value: unknown): unknown };
let sqlTag: Promise<SqlTag> | null = null;

/**
 * An executor over a Drizzle database or transaction: the statement is rebuilt as Drizzle SQL with each
 * value bound as a parameter (never spliced), so it runs on whatever connection the transaction holds.
 */
function drizzleExecutor(db: DrizzleLike): Executor {
  return {
    async query<R>(text: string, values: unknown[] = []) {
      sqlTag ??= import('drizzle-orm').then((m) => m.sql as unknown as SqlTag);
      const sql = await sqlTag;
      const parts = text.split(/\$(\d+)/);
      const strings: string[] = [];
      const params: unknown[] = [];
      parts.forEach((part, i) => (i % 2 === 0 ? strings.push(part) : params.push(sql.param(values[Number(part) - 1]))));
      const template = Object.assign([...strings], { raw: [...strings] }) as unknown as TemplateStringsArray;
      const result = await db.execute(sql(template, ...params));
      return (Array.isArray(result) ? result : (result as { rows: R[] }).rows) as R[];
    },
  };
}

/** Resolves the `db` option of `send`/`insert` into an executor bound to the caller's transaction. */
export function callerExecutor(db: unknown, field = 'options.db'): Executor {
  if (db && typeof db === 'object') {
    if (typeof (db as PgQueryable).query === 'function') return pgExecutor(db as PgQueryable);
    if (typeof (db as DrizzleLike).execute === 'function') return drizzleExecutor(db as DrizzleLike);
  }
  throw new InvalidOptionError(field, 'a Drizzle database or transaction, or a pg Client/PoolClient', db);
}

/** The pool behind a Drizzle node-postgres database (`$client`). */
export function drizzlePool(db: object): pg.Pool {
  return (db as { $client: pg.Pool }).$client;
}

/**
 * Checks a client out of the pool with an 'error' listener for as long as it is held: pg guards only idle clients,
 * and a connection that dies while held would otherwise crash the process with an unhandled 'error'. The listener
 * goes on in pg-pool's connect callback, never after an await: a client handed over may already carry the server's
 * FATAL, emitted before a promise's continuation runs (test/reliability/campaign.spec.ts). `release` returns the
 * client once however often it is called; a client released with an error keeps its listener for its late errors.
 * The whole story: docs/design.md, "A client held between statements".
 */
export function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((err: Error | undefined, client: pg.PoolClient | undefined) => {
      if (err || !client) {
        reject(err ?? new Error('pg-pool gave no client'));
        return;
      }
      const onError = (): void => undefined;
      client.on('error', onError);
      const release = client.release.bind(client);
      let released = false;
      client.release = (releaseErr?: Error | boolean) => {
        if (released) return;
        released = true;
        if (!releaseErr) client.removeListener('error', onError);
        release(releaseErr);
      };
      resolve(client);
    });
  });
}

/**
 * Runs `fn` in one of the engine's own transactions (bounded: see beginEngineTransaction; `begin` for another kind)
 * on a client of its own (from `source`: a pool, or a function that checks one out): committed when it returns,
 * rolled back when it throws. A client that cannot roll back is not given back to the pool.
 */
export async function inTransaction<T>(
  source: pg.Pool | (() => Promise<pg.PoolClient>),
  fn: (client: pg.PoolClient) => Promise<T>,
  begin: string = beginEngineTransaction,
): Promise<T> {
  const client = typeof source === 'function' ? await source() : await checkout(source);
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await fn(client);
    await client.query(commitTransaction);
    return result;
  } catch (err) {
    await client.query(rollbackTransaction).catch((rollbackError: Error) => (broken = rollbackError));
    throw err;
  } finally {
    client.release(broken);
  }
}
