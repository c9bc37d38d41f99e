/**
 * Statements of the installer; the migrations themselves live in schema/migrations. The installer sends them with
 * bound values; migrationScript writes the same statements out with literals, as one script for a DBA to apply.
 */

/** The first key of the advisory lock that serialises installers of one schema (the second: the schema's hash). */
const MIGRATION_LOCK = 1885824373;

/** Serialises installers of one schema across every instance booting at once; released at commit. */
const lock = (schemaValue: string) => `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}, hashtext(${schemaValue}))`;

/**
 * The lock migrationScript takes, taken only if free ($1 schema name): migrate() asks again between short
 * pauses, so that a waiting instance can stop (close()) and no role's lock_timeout or statement_timeout cuts its
 * wait.
 */
export const tryLockMigrations = `SELECT pg_try_advisory_xact_lock(${MIGRATION_LOCK}, hashtext($1)) AS taken`;

/** The sessions that hold that lock ($1 schema name), in this database. */
export const migrationTurnHolders = `SELECT pid FROM pg_locks
WHERE locktype = 'advisory' AND granted AND classid = ${MIGRATION_LOCK} AND objid = hashtext($1)::oid AND objsubid = 2
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * Whether the session carries the mark the engine's connections open with (ENGINE_SESSION in runtime/db.ts: a custom
 * setting no server default sets), read on one of them at start: a pooler that drops startup parameters leaves it
 * unset, and the engine then knows its settings are not in place.
 */
export const engineSessionMarked = `SELECT current_setting('pgqueue.session', true) IS NOT DISTINCT FROM 'on' AS marked`;

/**
 * The session's lock_timeout and statement_timeout in milliseconds (0: none; every unit they show in reads as an
 * interval), and the server's version, which migrate() checks before it changes anything (server-version.ts).
 */
export const sessionSettings = `SELECT (extract(epoch FROM current_setting('lock_timeout')::interval) * 1000)::float8 AS lock_ms,
  (extract(epoch FROM current_setting('statement_timeout')::interval) * 1000)::float8 AS statement_ms,
  current_setting('server_version_num')::int AS server_version_num`;

/**
 * The migrations' DDL waits at most this long ($1, e.g. '5000ms') for each lock it needs: a lock request that
 * waits queues every later request of the same table behind it, so a migration stuck behind a long transaction
 * would stop every claim and send. Set once the advisory lock is held.
 */
export const setMigrationLockTimeout = `SELECT set_config('lock_timeout', $1, true)`;

/** A try of the migrations, undone alone when it waited too long for a lock; the advisory lock stays held. */
export const beginMigrationTry = 'SAVEPOINT pgqueue_migration';
export const undoMigrationTry = 'ROLLBACK TO SAVEPOINT pgqueue_migration';
export const endMigrationTry = 'RELEASE SAVEPOINT pgqueue_migration';

/**
 * A pause ($1 seconds) in a statement, not in the process: the session is busy, not idle in its transaction, so
 * the engine's idle bound (sql/transaction.ts) does not end it while it holds the advisory lock.
 */
export const pauseMigration = 'SELECT pg_sleep($1::float8)';

export const createSchema = (s: string) => `CREATE SCHEMA IF NOT EXISTS ${s}`;

export const createMigrationsTable = (s: string) => `
CREATE TABLE IF NOT EXISTS ${s}.migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_on timestamptz NOT NULL DEFAULT now()
)`;

export const selectInstalledVersion = (s: string) => `SELECT coalesce(max(version), 0)::int AS version FROM ${s}.migrations`;

const record = (s: string, version: string, name: string) => `INSERT INTO ${s}.migrations (version, name) VALUES (${version}, ${name})`;

/** $1 version, $2 name */
export const recordMigration = (s: string) => record(s, '$1', '$2');

/**
 * Whether the schema named $1 holds the installer's table (without it, nothing is installed there), and the server's
 * version, which installedVersion() checks (server-version.ts).
 */
export const migrationsTablePresent = `SELECT to_regclass(format('%I.migrations', $1::text)) IS NOT NULL AS present,
  current_setting('server_version_num')::int AS server_version_num`;

/**
 * A string as an SQL literal. Only for the script below, whose values are the schema name (validated when the
 * configuration is resolved) and the migrations' own names: constants of this code, never a caller's data.
 */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** One migration as the script applies it: its version, its name, and its statements for the schema. */
export interface ScriptStep {
  version: number;
  name: string;
  sql: string;
}

/**
 * The installer's work as one SQL script: in one transaction, the same lock, schema and migrations table as the
 * installer, a guard that the version installed is `from` (the script was written for that version: applied to
 * another, it raises and nothing changes), then each step and its row in `migrations`, which is how an engine
 * starting afterwards finds the version installed. `schema` is the validated name, `s` the same name quoted.
 */
export function migrationScript(schema: string, s: string, from: number, steps: readonly ScriptStep[], header: string): string {
  const guard = `DO $pgqueue_guard$
DECLARE installed integer := (${selectInstalledVersion(s)});
BEGIN
  IF installed <> ${from} THEN
    RAISE EXCEPTION 'schema % is at version %; this script upgrades it from version ${from}', ${literal(schema)}, installed;
  END IF;
END
$pgqueue_guard$`;
  const parts = [
    'BEGIN',
    lock(literal(schema)),
    createSchema(s),
    createMigrationsTable(s).trim(),
    guard,
    ...steps.flatMap((m) => [`-- migration ${m.version}: ${m.name}\n${m.sql.trim()}`, record(s, String(m.version), literal(m.name))]),
    'COMMIT',
  ];
  return `${header}\n${parts.map(terminated).join('\n\n')}\n`;
}

/** A statement ended by a semicolon: on a line of its own when the text ends in a comment, which would swallow it. */
function terminated(statement: string): string {
  if (statement.endsWith(';')) return statement;
  return /--[^\n]*$/.test(statement) ? `${statement}\n;` : `${statement};`;
}
