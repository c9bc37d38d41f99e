import { createHash } from 'node:crypto';
import type pg from 'pg';
import { InvalidOptionError } from '../errors.js';
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
 * - plan_cache_mode: a prepared statement is planned once per connection, for any values (a generic plan),
 *   and never again. Planning was the largest part of a small statement: 0.46 ms of a claim of 200 and 1.1 ms
 *   of its completion (EXPLAIN ANALYZE); a one-job claim took 0.75-0.84 ms planned for its values and
 *   0.49-0.55 ms with the generic plan (p50; docs/design.md, "Planning: what is prepared and what is planned
 *   on each run"). But a plan made once is often made while the jobs table is small, and kept until an
 *   ANALYZE replans it: a queue's table goes from empty to millions of rows and back. So only statements
 *   whose plan cannot depend on the table's size are prepared (planOnce in queues/router.ts: the claims, which
 *   walk the ready index and update by tid, and the inserts, which scan no jobs); test/core/claim.spec.ts
 *   plans them on an empty table, grows it, and checks what a run reads. Every other statement is unnamed:
 *   planned on each run for the table as it is then, and (this setting applies to unnamed statements too) for
 *   any values, so a statement must not leave to the planner what only the values decide (see READY in
 *   sql/claim.ts).
 * - enable_seqscan: a sequential scan in a plan made on a small table would read the whole table on every
 *   run once it has grown, and the claim's update by tid has no other plan to fall back to. Every
 *   statement of the engine reads jobs through an index or by tid (where a table has no other path,
 *   PostgreSQL still scans it).
 * - enable_bitmapscan: a table without statistics yet (a new queue's first burst: autovacuum has not
 *   analysed it) is estimated at a few rows, and the planner would read the whole backlog through a bitmap
 *   scan and sort it. A claim of 150 jobs from a 20,000-job backlog took 10.4-12.5 ms that way and
 *   1.3-2.0 ms walking the index (EXPLAIN ANALYZE, machine PG15). (The previous engine forced a plan per
 *   run for this reason; with bitmap scans off the generic claim walks the index as the custom one does.)
 * - jit: off. With sequential scans off, a plan that must read a whole small table (the queues, the workers
 *   registry) is costed at 10^10 and crosses jit_above_cost, and JIT compilation then took 140-370 ms of a
 *   registry heartbeat that runs in under a millisecond, and 1,860 ms of a 2 ms monitor pass (EXPLAIN ANALYZE,
 *   machine PG15; test/core/monitor.spec.ts "is never compiled"). No statement of the engine runs long enough
 *   for compiled code to pay back.
 * - default_transaction_isolation: every statement of the engine assumes READ COMMITTED (a limited claim
 *   counts what committed before it; key_strict_fifo's triggers look at a fresh snapshot), whatever the
 *   server's default is.
 * They go as startup options, added to those the connection string may carry (pg lets the string's own
 * `options` replace the config's). With `preparedStatements: false` (transaction-mode poolers, which
 * refuse or drop session settings) neither they nor prepared statements are used.
 */
export const ENGINE_SESSION =
  '-c plan_cache_mode=force_generic_plan -c enable_seqscan=off -c enable_bitmapscan=off -c jit=off -c default_transaction_isolation=read\\ committed';

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
 * An executor over a pg Pool or client. A statement whose text is in `planOnce` is prepared once per
 * connection (named after its text) and runs its generic plan; only for connections that ran
 * ENGINE_SESSION. Every other statement is unnamed: planned on each run, for the table as it is then.
 */
export function pgExecutor(target: PgQueryable, planOnce: ReadonlySet<string> = NONE): Executor {
  return {
    async query<R>(text: string, values: unknown[] = []) {
      const result = await target.query(planOnce.has(text) ? { name: statementName(text), text, values } : { text, values });
      return result.rows as R[];
    },
  };
}

const NONE: ReadonlySet<string> = new Set();

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
 * Checks a client out of the pool with an 'error' listener for as long as it is held. pg guards only idle
 * clients: a connection that dies between two statements of a held client (a server restart during a
 * transaction) would otherwise emit an unhandled 'error' and crash the process. The next query on it
 * fails instead, and is handled where it was sent; pg does not return a dead client to the pool.
 *
 * The listener goes on in pg-pool's connect callback, which runs in the same tick as the hand-over, never
 * after an await: pg-pool hands a client released by its previous holder to the next waiter while the
 * parser is still reading that client's socket, and when the same chunk carries the server's FATAL
 * (a terminated session: ReadyForQuery, then 57P01), the error is emitted before a promise's continuation
 * could attach anything. That crashed worker processes in the fault campaign
 * (test/reliability/campaign.spec.ts).
 *
 * `release` may be called more than once (pg-pool throws on a second call): only the first returns the
 * client, so no order of a failed COMMIT, a connection's error and a lease sweep can release it twice. A
 * client released with an error is discarded by the pool and keeps its listener: a late error of its
 * dying connection has nowhere else to go.
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
