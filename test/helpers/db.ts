import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL URL resolved by the global setup. */
export function testUrl(): string {
  const url = process.env.PGQUEUE_TEST_URL;
  if (!url) throw new Error('PGQUEUE_TEST_URL is not set: run the tests through jest (global setup resolves the database)');
  return url;
}

/** A schema name of this test file's own, so files run in parallel and leave nothing to each other. */
export function uniqueSchema(prefix: string): string {
  return `t_${prefix}_${randomBytes(4).toString('hex')}`.toLowerCase();
}

/** A small pool for the test's own checks; close it in afterAll. */
export function testPool(max = 4): pg.Pool {
  return new pg.Pool({ connectionString: testUrl(), max });
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Waits until `check` returns a truthy value (which it returns), or fails after the deadline. No bare sleeps. */
export async function until<T>(check: () => T | Promise<T>, message: string, timeoutMs = 15_000, intervalMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${message}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Counts a schema's jobs by state, for assertions. */
export async function stateCounts(pool: pg.Pool, schema: string, queue?: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ state: string; n: number }>(
    `SELECT state::text, count(*)::int AS n FROM "${schema}".jobs WHERE $1::text IS NULL OR queue = $1 GROUP BY state`,
    [queue ?? null],
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/** A promise with its resolve function outside, for handlers that wait on the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A logger that keeps what it was told, so tests stay quiet and can assert on warnings. */
export function recordingLogger() {
  const lines: { level: 'log' | 'warn' | 'error'; message: string }[] = [];
  return {
    lines,
    log: (message: string) => void lines.push({ level: 'log', message }),
    warn: (message: string) => void lines.push({ level: 'warn', message }),
    error: (message: string) => void lines.push({ level: 'error', message }),
  };
}
