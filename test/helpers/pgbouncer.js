// A PgBouncer in transaction mode in front of a PostgreSQL server, for the tests of the engine behind a pooler and
// for bench/pooler.mjs. Debian's `pgbouncer` runs it (.ci/run installs it); on a machine without one,
// pgBouncerUnavailable() says why and those tests are skipped, saying so. PgBouncer refuses to run as root: as root it
// runs as the `postgres` user (which Debian's PostgreSQL and the embedded server's setup both create). Plain JS, so
// that the bench loads it too (types: pgbouncer.d.ts).
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './embedded-postgres.js';

/** The pgbouncer executable, or null when this machine has none. */
export function pgBouncerBinary() {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'])
    if (existsSync(candidate)) return candidate;
  try {
    return execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** The uid and gid of the `postgres` user, or null when there is none. */
function postgresUser() {
  try {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/** Why no PgBouncer can run here (no executable; root, which it refuses, with no `postgres` user to run as), or null. */
export function pgBouncerUnavailable() {
  if (!pgBouncerBinary()) return 'no pgbouncer on this machine (apt-get install pgbouncer)';
  if (process.getuid?.() === 0 && !postgresUser()) return 'pgbouncer refuses to run as root, and there is no postgres user to run it as';
  return null;
}

/**
 * Starts a PgBouncer in front of `targetUrl`'s server (transaction mode unless `options.poolMode` says otherwise);
 * resolves once a query passes through it. A port taken between choosing it and binding it is chosen again.
 */
export async function startPgBouncer(targetUrl, options = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(targetUrl, options);
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/i.test(err.message)) throw err;
    }
  }
}

async function startOnce(targetUrl, options) {
  const unavailable = pgBouncerUnavailable();
  if (unavailable) throw new Error(unavailable);
  const target = new URL(targetUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgqueue-pgbouncer-'));
  const quoted = (text) => `"${text.replaceAll('"', '""')}"`;
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'users.txt'), `${quoted(user)} ${quoted(password)}\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      'max_client_conn = 1000',
      `default_pool_size = ${options.poolSize ?? 20}`,
      `ignore_startup_parameters = ${['extra_float_digits', ...(options.ignoreStartupParameters ?? [])].join(',')}`,
      `logfile = ${logFile}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const as = process.getuid?.() === 0 ? postgresUser() : null;
  if (as) for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), as.uid, as.gid);
  // -q: it logs to its file only. A pipe read by this process would fill while the process is busy (a bench's
  // spawnSync), and PgBouncer would stop on its next log line.
  const child = spawn(pgBouncerBinary(), ['-q', join(dir, 'pgbouncer.ini')], { stdio: 'ignore', ...(as ?? {}) });
  let exited = false;
  child.on('exit', () => (exited = true));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const through = new URL(targetUrl);
  through.hostname = '127.0.0.1';
  through.port = String(port);
  const stop = async () => {
    if (!exited) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // ready once a query passes: it listens, and it reaches the server
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited) {
      const text = log();
      await stop();
      throw new Error(`pgbouncer exited at start: ${text}`);
    }
    const client = new pg.Client({ connectionString: through.toString(), connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) {
        const text = log();
        await stop();
        throw new Error(`pgbouncer did not answer within 15 s (${err.message}): ${text}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url: through.toString(), log, stop };
}
