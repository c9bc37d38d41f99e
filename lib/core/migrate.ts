import type pg from 'pg';
import { MIGRATIONS } from '../../schema/migrations/index.js';
import type { QueueLogger } from './types.js';
import * as sql from './sql/migrate.js';
import { inTransaction } from './db.js';
import { packageVersion } from './version.js';

/** What `migrate` did: the version found and the version left installed. */
export interface MigrationResult {
  from: number;
  to: number;
}

/** The newest schema version this code installs. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Installs or upgrades the queue's tables. Everything happens in one transaction that first takes an
 * advisory lock on the schema name, so instances booting together queue up: the first installs, the
 * others then find the version recorded and do nothing. A failure rolls back every step.
 */
export async function migrate(pool: pg.Pool, schema: string, schemaIdent: string, log?: QueueLogger): Promise<MigrationResult> {
  const result = await inTransaction(pool, async (client) => {
    await client.query(sql.lockMigrations, [schema]);
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
  if (result.to !== result.from) log?.log(`schema ${schema} migrated from version ${result.from} to ${result.to}`);
  if (result.from > LATEST_VERSION) log?.warn(`schema ${schema} is at version ${result.from}, newer than this code (${LATEST_VERSION})`);
  return result;
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
