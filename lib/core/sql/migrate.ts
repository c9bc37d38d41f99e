/** Statements of the installer; the migrations themselves live in schema/migrations. */

/** Serialises installers of one schema across every instance booting at once; released at commit. */
export const lockMigrations = `SELECT pg_advisory_xact_lock(1885824373, hashtext($1))`;

export const createSchema = (s: string) => `CREATE SCHEMA IF NOT EXISTS ${s}`;

export const createMigrationsTable = (s: string) => `
CREATE TABLE IF NOT EXISTS ${s}.migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_on timestamptz NOT NULL DEFAULT now()
)`;

export const selectInstalledVersion = (s: string) => `SELECT coalesce(max(version), 0)::int AS version FROM ${s}.migrations`;

export const recordMigration = (s: string) => `INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`;
