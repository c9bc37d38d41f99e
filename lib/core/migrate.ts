import type pg from 'pg';
import { MIGRATIONS } from '../../schema/migrations/index.js';
import type { QueueLogger } from './types.js';
import * as sql from './sql/migrate.js';
import { inTransaction } from './db.js';
import { QueueError } from './errors.js';
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
 * setMigrationLockTimeout); a try that times out rolls back whole, and the next begins `retryDelayMs` later, up
 * to `attempts` tries. Between tries the migration holds nothing, so the sessions it made wait go on.
 */
export interface MigrationLocks {
  lockTimeoutMs: number;
  attempts: number;
  retryDelayMs: number;
}

/** About two minutes in all before a start gives up on a lock someone holds. */
export const MIGRATION_LOCKS: MigrationLocks = { lockTimeoutMs: 5_000, attempts: 12, retryDelayMs: 5_000 };

/**
 * Installs or upgrades the queue's tables. Everything happens in one transaction that first takes an
 * advisory lock on the schema name, so instances booting together queue up: the first installs, the
 * others then find the version recorded and do nothing. A failure rolls back every step. A lock the DDL cannot
 * get in time (`locks`) rolls it back too, with a warning, and it is tried again; after the last try the start
 * fails with a QueueError of code MIGRATION_LOCK_TIMEOUT, and nothing is changed.
 */
export async function migrate(
  pool: pg.Pool,
  schema: string,
  schemaIdent: string,
  log?: QueueLogger,
  locks: MigrationLocks = MIGRATION_LOCKS,
): Promise<MigrationResult> {
  let result: MigrationResult;
  for (let attempt = 1; ; attempt++) {
    try {
      result = await migrateOnce(pool, schema, schemaIdent, locks.lockTimeoutMs);
      break;
    } catch (err) {
      if (sqlState(err) !== SQLSTATE.lockNotAvailable) throw err;
      const waited = `waited more than ${locks.lockTimeoutMs} ms for a lock another session holds on its tables`;
      if (attempt >= locks.attempts)
        throw Object.assign(
          new QueueError(
            `schema ${schema}: the migration ${waited}, ${attempt} times; nothing was changed. Find the transaction that holds it (pg_locks joined to pg_stat_activity), end it, and start again`,
            'MIGRATION_LOCK_TIMEOUT',
          ),
          { cause: err },
        );
      log?.warn(`schema ${schema}: the migration ${waited} and was rolled back; try ${attempt + 1} of ${locks.attempts} in ${locks.retryDelayMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, locks.retryDelayMs));
    }
  }
  if (result.to !== result.from) log?.log(`schema ${schema} migrated from version ${result.from} to ${result.to}`);
  if (result.from > LATEST_VERSION) log?.warn(`schema ${schema} is at version ${result.from}, newer than this code (${LATEST_VERSION})`);
  return result;
}

/** One try of migrate(): the whole upgrade in one transaction, its DDL bounded by `lockTimeoutMs` per lock. */
function migrateOnce(pool: pg.Pool, schema: string, schemaIdent: string, lockTimeoutMs: number): Promise<MigrationResult> {
  return inTransaction(pool, async (client) => {
    await client.query(sql.lockMigrations, [schema]);
    await client.query(sql.setMigrationLockTimeout, [`${lockTimeoutMs}ms`]);
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
  });
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
