import type pg from 'pg';
import { MIGRATIONS } from '../../schema/migrations/index.js';
import type { QueueLogger } from './types.js';
import * as sql from './sql/migrate.js';
import { inTransaction } from './db.js';
import { QueueError } from './errors.js';
import { closedError } from './pool-gate.js';
import { SQLSTATE, sqlState } from './pg-errors.js';
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
 * setMigrationLockTimeout; a stricter lock_timeout of the session's role stays); a try that waits longer is undone
 * and the next begins `retryDelayMs` later, up to `attempts` tries. A deadlock the server broke is tried again the
 * same way. Between tries the migration holds only the schema's advisory lock: the sessions it made wait go on,
 * and an instance booting beside it waits for the advisory lock, never in a table's queue.
 */
export interface MigrationLocks {
  lockTimeoutMs: number;
  attempts: number;
  retryDelayMs: number;
}

/** About two minutes in all before a start gives up on a lock someone holds. */
export const MIGRATION_LOCKS: MigrationLocks = { lockTimeoutMs: 5_000, attempts: 12, retryDelayMs: 5_000 };

/** The longest slice of a pause between tries: how long a stop (`stopped`) may wait for the pause to notice it. */
const PAUSE_SLICE_MS = 250;

/**
 * Installs or upgrades the queue's tables. Everything happens in one transaction that first takes an
 * advisory lock on the schema name, so instances booting together queue up: the first installs, the
 * others then find the version recorded and do nothing. A failure rolls back every step. A lock the DDL cannot
 * get in time (`locks`) undoes the try, with a warning, and it is tried again; after the last try the call fails
 * with a QueueError of code MIGRATION_LOCK_TIMEOUT, and nothing is changed. `stopped` (close() has begun) ends
 * the tries early with QUEUE_CLOSED.
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
    const [given] = (await client.query<{ given_ms: number }>(sql.suspendLockTimeout)).rows;
    await client.query(sql.lockMigrations, [schema]);
    const timeoutMs = given!.given_ms > 0 ? Math.min(given!.given_ms, locks.lockTimeoutMs) : locks.lockTimeoutMs;
    await client.query(sql.setMigrationLockTimeout, [`${timeoutMs}ms`]);
    for (let attempt = 1; ; attempt++) {
      await client.query(sql.beginMigrationTry);
      try {
        const done = await migrationSteps(client, schemaIdent);
        await client.query(sql.endMigrationTry);
        return done;
      } catch (err) {
        const state = sqlState(err);
        if (state !== SQLSTATE.lockNotAvailable && state !== SQLSTATE.deadlockDetected) throw err;
        const waited =
          state === SQLSTATE.deadlockDetected
            ? 'was ended by the server to break a deadlock with another session'
            : `waited more than ${timeoutMs} ms for a lock another session holds on its tables`;
        if (attempt >= locks.attempts)
          throw Object.assign(
            new QueueError(
              `schema ${schema}: the migration ${waited}, ${attempt} times; nothing was changed. Find the transaction that holds the lock (pg_locks joined to pg_stat_activity), end it, and start again`,
              'MIGRATION_LOCK_TIMEOUT',
            ),
            { cause: err },
          );
        await client.query(sql.undoMigrationTry);
        log?.warn(
          `schema ${schema}: the migration ${waited} and was undone; try ${attempt + 1} of ${locks.attempts} in ${locks.retryDelayMs} ms`,
        );
        await pause(client, locks.retryDelayMs, stopped);
      }
    }
  });
  if (result.to !== result.from) log?.log(`schema ${schema} migrated from version ${result.from} to ${result.to}`);
  if (result.from > LATEST_VERSION) log?.warn(`schema ${schema} is at version ${result.from}, newer than this code (${LATEST_VERSION})`);
  return result;
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

/** Waits `ms` between tries, in slices (sql/migrate.ts, pauseMigration); throws QUEUE_CLOSED once `stopped`. */
async function pause(client: pg.PoolClient, ms: number, stopped: () => boolean): Promise<void> {
  for (let left = ms; ; left -= PAUSE_SLICE_MS) {
    if (stopped()) throw closedError();
    if (left <= 0) return;
    await client.query(sql.pauseMigration, [Math.min(left, PAUSE_SLICE_MS) / 1000]);
  }
}

/**
 * The schema version installed in `schema` (`schemaIdent` quoted): 0 when nothing is (not even the installer's
 * table). Reads only: a tool that must not install anything checks with this what it may run.
 */
export async function installedVersion(db: pg.Pool | pg.ClientBase, schema: string, schemaIdent: string): Promise<number> {
  const [presence] = (await db.query<{ present: boolean }>(sql.migrationsTablePresent, [schema])).rows;
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
