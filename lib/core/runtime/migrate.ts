import type pg from 'pg';
import { MIGRATIONS } from '../../../schema/migrations/index.js';
import type { QueueLogger } from '../types.js';
import * as sql from '../sql/migrate.js';
import { inTransaction } from './db.js';
import { QueueError } from '../errors.js';
import { closedError } from './pool-gate.js';
import { SQLSTATE, sqlState } from './pg-errors.js';
import { unsupportedServer } from './server-version.js';
import { packageVersion } from './version.js';

/** What `migrate` did: the version found and the version left installed. */
export interface MigrationResult {
  from: number;
  to: number;
}

/** The newest schema version this code installs. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * How a migration waits for the locks its DDL takes: each lock at most `lockTimeoutMs` (sql/migrate.ts,
 * setMigrationLockTimeout), less when the role's lock_timeout, or half its statement_timeout, is shorter (so a lock
 * wait always ends as a lock timeout). A try that waits longer is undone and the next begins `retryDelayMs` later,
 * up to `attempts` tries; a deadlock the server broke is tried again the same way. Between tries the migration
 * holds only the schema's advisory lock: the sessions it made wait go on, and an instance booting beside it waits
 * for its turn, never in a table's queue. A wait for the turn is warned of every `turnWarningMs`, naming the
 * session that holds it: one that is not an engine (a script applied by hand, left open) is never given up on.
 */
export interface MigrationLocks {
  lockTimeoutMs: number;
  attempts: number;
  retryDelayMs: number;
  turnWarningMs: number;
}

/** About two minutes in all before a start gives up on a lock someone holds. */
export const MIGRATION_LOCKS: MigrationLocks = { lockTimeoutMs: 5_000, attempts: 12, retryDelayMs: 5_000, turnWarningMs: 30_000 };

/** The longest pause between two looks at `stopped` (close() begun): while waiting for the turn, and between tries. */
const PAUSE_SLICE_MS = 250;

/**
 * Installs or upgrades the queue's tables. Everything happens in one transaction that first takes an
 * advisory lock on the schema name, so instances booting together queue up: the first installs, the
 * others then find the version recorded and do nothing. A failure rolls back every step. A lock the DDL cannot
 * get in time (`locks`) undoes the try, with a warning, and it is tried again; after the last try the call fails
 * with a QueueError of code MIGRATION_LOCK_TIMEOUT, and nothing is changed. `stopped` (close() has begun) ends
 * the wait for the turn or the tries with QUEUE_CLOSED. A server older than PostgreSQL 15 is refused before
 * anything else, with UnsupportedServerError (UNSUPPORTED_SERVER).
 */
export async function migrate(
  pool: pg.Pool,
  schema: string,
  schemaIdent: string,
  log?: QueueLogger,
  locks: MigrationLocks = MIGRATION_LOCKS,
  stopped: () => boolean = () => false,
): Promise<MigrationResult> {
  const result = await inTransaction(pool, async (client) => {
    const settings = await client.query<{ lock_ms: number; statement_ms: number; server_version_num: number }>(sql.sessionSettings);
    const { lock_ms, statement_ms, server_version_num } = settings.rows[0]!;
    refuseUnsupported(server_version_num);
    // a slice is a statement: under half the role's statement_timeout, as the lock waits are
    const sliceMs = statement_ms > 0 ? Math.max(1, Math.min(PAUSE_SLICE_MS, statement_ms / 2)) : PAUSE_SLICE_MS;
    await awaitTurn(client, schema, sliceMs, locks.turnWarningMs, stopped, log);
    const timeoutMs = tryTimeoutMs(locks.lockTimeoutMs, lock_ms, statement_ms);
    await client.query(sql.setMigrationLockTimeout, [`${timeoutMs}ms`]);
    for (let attempt = 1; ; attempt++) {
      await client.query(sql.beginMigrationTry);
      try {
        const done = await migrationSteps(client, schemaIdent);
        await client.query(sql.endMigrationTry);
        return done;
      } catch (err) {
        const waited = lockWait(err, timeoutMs);
        if (waited === null) throw err;
        if (attempt >= locks.attempts)
          throw Object.assign(
            new QueueError(
              `schema ${schema}: the migration ${waited}, ${attempt} times; nothing was changed. Find the transaction that holds the lock (pg_locks joined to pg_stat_activity), end it, and start again`,
              'MIGRATION_LOCK_TIMEOUT',
            ),
            { cause: err },
          );
        await client.query(sql.undoMigrationTry);
        if (stopped()) throw closedError();
        log?.warn(
          `schema ${schema}: the migration ${waited} and was undone; try ${attempt + 1} of ${locks.attempts} in ${locks.retryDelayMs} ms`,
        );
        await pause(client, locks.retryDelayMs, sliceMs, stopped);
      }
    }
  });
  if (result.to !== result.from) log?.log(`schema ${schema} migrated from version ${result.from} to ${result.to}`);
  if (result.from > LATEST_VERSION) log?.warn(`schema ${schema} is at version ${result.from}, newer than this code (${LATEST_VERSION})`);
  return result;
}

/** Throws UnsupportedServerError for a server older than the queue supports (server-version.ts). */
function refuseUnsupported(serverVersionNum: number): void {
  const refused = unsupportedServer(serverVersionNum);
  if (refused) throw refused;
}

/**
 * How long a try waits for each lock (ms): `ours`, or the session's lock_timeout when shorter, or half its
 * statement_timeout when that is shorter still, so that a lock wait ends as a lock timeout, which is tried again,
 * and not as a cancelled statement. 0 means none for either setting; the result is at least 1.
 */
export function tryTimeoutMs(ours: number, sessionLockMs: number, sessionStatementMs: number): number {
  let ms = ours;
  if (sessionLockMs > 0) ms = Math.min(ms, sessionLockMs);
  if (sessionStatementMs > 0) ms = Math.min(ms, sessionStatementMs / 2);
  return Math.max(1, Math.floor(ms));
}

/** What a try's failure `err` says of it when another session held it back (tried again), else null. */
export function lockWait(err: unknown, timeoutMs: number): string | null {
  const state = sqlState(err);
  if (state === SQLSTATE.lockNotAvailable) return `waited more than ${timeoutMs} ms for a lock another session holds on its tables`;
  if (state === SQLSTATE.deadlockDetected) return 'was ended by the server to break a deadlock with another session';
  return null;
}

/**
 * Takes the schema's advisory lock, asking every `sliceMs` (sql/migrate.ts, tryLockMigrations); warns every
 * `warningMs` with the pid of the session that holds it; throws QUEUE_CLOSED once `stopped`.
 */
async function awaitTurn(
  client: pg.PoolClient,
  schema: string,
  sliceMs: number,
  warningMs: number,
  stopped: () => boolean,
  log: QueueLogger | undefined,
): Promise<void> {
  const waitFrom = Date.now();
  let warnAt = waitFrom + warningMs;
  while (!(await client.query<{ taken: boolean }>(sql.tryLockMigrations, [schema])).rows[0]!.taken) {
    if (Date.now() >= warnAt) {
      warnAt += warningMs;
      const holders = (await client.query<{ pid: number }>(sql.migrationTurnHolders, [schema])).rows.map((r) => r.pid);
      const heldBy = holders.length > 0 ? `the session of pid ${holders.join(', ')}` : 'a session that has just let it go';
      log?.warn(
        `schema ${schema}: waiting ${Math.round((Date.now() - waitFrom) / 1000)} s for the turn to migrate, held by ${heldBy} (pg_stat_activity says what it runs)`,
      );
    }
    await pause(client, sliceMs, sliceMs, stopped);
  }
}

/** The installer's table, then each migration newer than the version it records, each recorded. */
async function migrationSteps(client: pg.PoolClient, schemaIdent: string): Promise<MigrationResult> {
  await client.query(sql.createSchema(schemaIdent));
  await client.query(sql.createMigrationsTable(schemaIdent));
  const from = (await client.query<{ version: number }>(sql.selectInstalledVersion(schemaIdent))).rows[0]!.version;
  let to = from;
  for (const m of MIGRATIONS) {
    if (m.version <= from) continue;
    await client.query(m.up(schemaIdent));
    await client.query(sql.recordMigration(schemaIdent), [m.version, m.name]);
    to = m.version;
  }
  return { from, to };
}

/** Waits `ms`, in slices of `sliceMs` (sql/migrate.ts, pauseMigration); throws QUEUE_CLOSED once `stopped`. */
async function pause(client: pg.PoolClient, ms: number, sliceMs: number, stopped: () => boolean): Promise<void> {
  for (let left = ms; ; left -= sliceMs) {
    if (stopped()) throw closedError();
    if (left <= 0) return;
    await client.query(sql.pauseMigration, [Math.min(left, sliceMs) / 1000]);
  }
}

/**
 * The schema version installed in `schema` (`schemaIdent` quoted): 0 when nothing is (not even the installer's
 * table). Reads only: a tool that must not install anything checks with this what it may run. A server older than
 * the queue supports is refused with UnsupportedServerError, as migrate() refuses it.
 */
export async function installedVersion(db: pg.Pool | pg.ClientBase, schema: string, schemaIdent: string): Promise<number> {
  const [presence] = (await db.query<{ present: boolean; server_version_num: number }>(sql.migrationsTablePresent, [schema])).rows;
  refuseUnsupported(presence!.server_version_num);
  if (!presence!.present) return 0;
  return (await db.query<{ version: number }>(sql.selectInstalledVersion(schemaIdent))).rows[0]!.version;
}

/** What migrationScript wrote: the versions it upgrades from and to, and the script. */
export interface MigrationScript extends MigrationResult {
  sql: string;
}

/**
 * What `migrate` would run on a schema at version `from`, as one SQL script (sql/migrate.ts, migrationScript): for a
 * DBA who applies the DDL by hand (`psql -v ON_ERROR_STOP=1 -f`). It records each version as `migrate` does, so an
 * engine starting afterwards finds the schema installed; applied to a schema at another version it changes nothing.
 * At or past the newest version there is nothing to apply, and the script is a comment.
 */
export function migrationScript(schema: string, schemaIdent: string, from: number): MigrationScript {
  const steps = MIGRATIONS.filter((m) => m.version > from).map((m) => ({ version: m.version, name: m.name, sql: m.up(schemaIdent) }));
  const to = steps.at(-1)?.version ?? from;
  if (steps.length === 0)
    return { from, to, sql: `-- schema "${schema}" is at version ${from}: nothing to apply (newest: ${LATEST_VERSION})\n` };
  const header = [
    `-- nestjs-pgqueue ${packageVersion()}: schema "${schema}" from version ${from} to ${to}, in one transaction.`,
    '-- Apply with: psql -v ON_ERROR_STOP=1 -f <this file>',
  ].join('\n');
  return { from, to, sql: sql.migrationScript(schema, schemaIdent, from, steps, header) };
}
