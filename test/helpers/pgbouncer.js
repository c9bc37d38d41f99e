// A PgBouncer in transaction mode in front of a PostgreSQL server, for the tests of the engine behind a pooler and
// for bench/pooler.mjs. Debian's `pgbouncer` runs it (.ci/run installs it); on a machine without one,
// pgBouncerBinary() is null and those tests are skipped, saying why. PgBouncer refuses to run as root: as root it
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

/** The uid and gid PgBouncer runs as when this process is root: the `postgres` user's. */
function unprivileged() {
  if (process.getuid?.() !== 0) return null;
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Starts a PgBouncer in transaction mode in front of `targetUrl`'s server; resolves once a query passes through it. */
export async function startPgBouncer(targetUrl, options = {}) {
  const binary = pgBouncerBinary();
  if (!binary) throw new Error('no pgbouncer on this machine (apt-get install pgbouncer)');
  const target = new URL(targetUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgqueue-pgbouncer-'));
  const quoted = (text) => `"${text.replaceAll('"', '""')}"`;
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
      'pool_mode = transaction',
      'max_client_conn = 1000',
      `default_pool_size = ${options.poolSize ?? 20}`,
      `ignore_startup_parameters = ${['extra_float_digits', ...(options.ignoreStartupParameters ?? [])].join(',')}`,
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const as = unprivileged();
  if (as) for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), as.uid, as.gid);
  const child = spawn(binary, [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'], ...(as ?? {}) });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  const log = () => {
    const file = join(dir, 'pgbouncer.log');
    return `${stderr}${existsSync(file) ? readFileSync(file, 'utf8') : ''}`;
  };
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
