// How a command reaches the database. Every command but `migrate` uses the engine (PgQueue) as a client only: no
// worker loops, no maintenance, monitor or scheduler passes, no LISTEN, and no migration. Before it starts one, a
// connection of its own reads the schema's version, so that a schema not installed (or older than this code) is one
// clear line rather than the first statement's failure. Errors of the connection read as the engine's at its start.
import pg from 'pg';
import type { Command } from 'commander';
import { resolveConfig, type ResolvedConfig } from '../core/config/config.js';
import { installedVersion, LATEST_VERSION } from '../core/runtime/migrate.js';
import { PgQueue } from '../core/pg-queue.js';
import { startupError } from '../core/runtime/startup-error.js';
import { checkUrl, schemaArgument } from './arguments.js';
import { CommandError, UsageError } from './failure.js';
import { cliLogger, type CliIo } from './io.js';

/** A host that drops packets fails the command in this long, not after the system's TCP timeout (minutes). */
const CONNECT_TIMEOUT_MS = 10_000;

/** The options every command that reaches the database takes. */
export interface ConnectionOptions {
  url?: string;
  schema: string;
}

/** Adds --url and --schema to `command`. */
export function connectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'PostgreSQL URL (default: $DATABASE_URL)')
    .option('--schema <name>', "schema that holds the queue's tables", schemaArgument, 'pgqueue');
}

/** The URL to connect to: --url, else DATABASE_URL; a usage error when neither is given or it is no PostgreSQL URL. */
export function databaseUrl(options: ConnectionOptions, io: CliIo): string {
  if (options.url !== undefined) return checkUrl(options.url, '--url');
  const fromEnv = io.env.DATABASE_URL;
  if (!fromEnv) throw new UsageError('no database URL: pass --url <url> or set DATABASE_URL');
  return checkUrl(fromEnv, 'DATABASE_URL');
}

/** Runs `fn` on one connection of its own, closed after; a failure to connect reads as the engine's (startupError). */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // a connection the server drops between statements must not end the process; the next statement reports it
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } catch (err) {
    throw startupError(err, url);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs `fn` on a pool of one connection (what `migrate` takes), ended after. */
export async function withPool<T>(url: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  pool.on('error', () => undefined);
  try {
    return await fn(pool);
  } catch (err) {
    throw startupError(err, url);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** The engine's configuration for a command: a client of the queue that runs nothing of its own. */
export function clientConfig(options: ConnectionOptions, io: CliIo): ResolvedConfig {
  return resolveConfig({
    connectionString: databaseUrl(options, io),
    schema: options.schema,
    migrate: false,
    workers: false,
    supervise: false,
    useListenNotify: false,
    poolSize: 2,
    logger: cliLogger(io),
  });
}

/** Runs `fn` with an engine on an installed schema, and closes the engine after (its pool included). */
export async function withQueue<T>(options: ConnectionOptions, io: CliIo, fn: (queue: PgQueue) => Promise<T>): Promise<T> {
  const config = clientConfig(options, io);
  const url = config.connectionString!;
  const version = await withClient(url, (client) => installedVersion(client, config.schema, config.schemaIdent));
  checkVersion(version, config.schema);
  const queue = new PgQueue(config);
  try {
    return await fn(queue);
  } catch (err) {
    throw startupError(err, url);
  } finally {
    await queue.close();
  }
}

/** Refuses a schema this code cannot work on; a newer one is worked on, with a warning (as the engine does). */
function checkVersion(version: number, schema: string): void {
  if (version === 0) {
    throw new CommandError(
      `schema "${schema}" holds no pgqueue tables: install them with \`pgqueue migrate\` (or print their SQL with \`pgqueue migrate --print\`)`,
    );
  }
  if (version < LATEST_VERSION) {
    throw new CommandError(
      `schema "${schema}" is at version ${version}, and this pgqueue needs version ${LATEST_VERSION}: upgrade it with \`pgqueue migrate\``,
    );
  }
  // a newer schema: the engine warns of it as it starts, through the command's logger
}
