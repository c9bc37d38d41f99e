import type pg from 'pg';
import { MIGRATIONS } from '../../schema/migrations/index.js';
import type { QueueLogger } from './types.js';
import * as sql from './sql/migrate.js';
import { inTransaction } from './db.js';

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
