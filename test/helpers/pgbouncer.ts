// A PgBouncer in transaction mode in front of the test database, for the files that test the engine behind a
// pooler. Debian's `pgbouncer` runs it (.ci/run installs it); on a machine without one, pgBouncerBinary() is null
// and those files skip their tests, saying why. PgBouncer refuses to run as root: as root it runs as the
// `postgres` user (which Debian's PostgreSQL and the embedded server's setup both create).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The pgbouncer executable, or null when this machine has none. */
export function pgBouncerBinary(): string | null {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'])
    if (existsSync(candidate)) return candidate;
  try {
    return execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export interface PgBouncer {
  /** The test database's URL, through the bouncer. */
  readonly url: string;
  /** What the bouncer logged so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Startup parameters it lets through without passing them on (`options` makes it drop the engine's session settings). */
  ignoreStartupParameters?: string[];
  /** Server connections per database and user (default 20). */
  poolSize?: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The uid and gid PgBouncer runs as when this process is root: the `postgres` user's. */
function unprivileged(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Starts a PgBouncer in transaction mode in front of `targetUrl`'s server; resolves once a query passes through it. */
export async function startPgBouncer(targetUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const binary = pgBouncerBinary();
  if (!binary) throw new Error('no pgbouncer on this machine (apt-get install pgbouncer)');
  const target = new URL(targetUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgqueue-pgbouncer-'));
  const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`;
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
  const child: ChildProcess = spawn(binary, [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'], ...(as ?? {}) });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
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
        throw new Error(`pgbouncer did not answer within 15 s (${(err as Error).message}): ${text}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url: through.toString(), log, stop };
}
