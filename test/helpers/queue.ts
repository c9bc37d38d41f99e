import type pg from 'pg';
import { PgQueue, runtimeOf } from '../../lib/core/pg-queue.js';
import type { QueueModuleOptions } from '../../lib/core/config/config.js';
import type { Statements } from '../../lib/core/sql/index.js';
import type { Executor } from '../../lib/core/runtime/db.js';
import { dropSchema, recordingLogger, testPool, testUrl, uniqueSchema } from './db.js';

/**
 * One test file's queue: its own schema, a PgQueue on it, and a pool for direct checks.
 * `cleanup()` closes every queue it made and drops the schema.
 */
export function queueFixture(prefix: string) {
  const schema = uniqueSchema(prefix);
  const pool: pg.Pool = testPool();
  const made: PgQueue[] = [];
  const logger = recordingLogger();
  const fixture = {
    schema,
    pool,
    logger,
    /**
     * A new engine on this file's schema; closed by cleanup. Pools are small: the files run in parallel
     * against one server, whose max_connections (100 on the machine's PostgreSQL) they share.
     */
    create(options: Partial<QueueModuleOptions> = {}): PgQueue {
      const q = new PgQueue({ connectionString: testUrl(), schema, logger, poolSize: 3, ...options });
      made.push(q);
      return q;
    },
    /**
     * Closes the engines made so far (for afterEach): each open engine holds its LISTEN connection and, refreshed
     * every 5 s by the cluster registry, at least one pooled connection, and the server's max_connections is shared.
     */
    async closeMade(): Promise<void> {
      await Promise.all(made.splice(0).map((q) => q.close()));
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.map((q) => q.close()));
      await dropSchema(pool, schema);
      await pool.end();
    },
    /**
     * The backends waiting for this schema's pass lock whose first key is `key` (1885824374 maintenance, 1885824376
     * monitor: lib/core/sql/maintenance.ts, monitor.ts). pg_locks shows hashtext's int4, the second key, unsigned.
     */
    async passLockWaiters(key: number): Promise<number[]> {
      const { rows } = await pool.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1
           AND objid::text::bigint = (hashtext($2)::bigint + 4294967296) % 4294967296`,
        [key, schema],
      );
      return rows.map((r) => r.pid);
    },
    /** Runs SQL against this file's schema (tests only; the engine's SQL lives in lib/core/sql). */
    async sql<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> {
      return (await pool.query<R>(text.replaceAll('$schema', `"${schema}"`), values)).rows;
    },
  };
  return fixture;
}

/**
 * The statements `q` runs for the jobs of queue `name` (tests only): those that read or change only that queue's
 * jobs name the table that holds them.
 */
export async function engineStatements(q: PgQueue, name: string): Promise<Statements> {
  const runtime = runtimeOf(q);
  return runtime.router.statementsForQueue(await runtime.db(), name);
}

/**
 * The executor `q` runs its own statements on (tests only), once `q` has started: on a queue with `poolSize: 1`,
 * a statement sent here shares the session of the engine's statements (its prepared statements, its transaction).
 */
export function engineExec(q: PgQueue): Executor {
  return runtimeOf(q).exec;
}
