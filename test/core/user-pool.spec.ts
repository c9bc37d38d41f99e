// A pool handed in (`pool`, or a Drizzle database's) gets an 'error' listener for as long as the engine uses it: when
// the server ends one of its idle connections (a restart, pg_terminate_backend), pg.Pool emits 'error', and with no
// listener Node throws it and the process ends — this test's own process, which would fail the run. close() takes
// the listener off, leaving the pool as it was found.
import { randomBytes } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { QueueWarning } from '../../lib/core/events.js';
import { PgQueue } from '../../lib/core/pg-queue.js';
import { testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('userpool');
beforeAll(async () => {
  const q = f.create({ supervise: false });
  await q.createQueue('up.q');
  await f.closeMade();
});
afterAll(() => f.cleanup());

const handedIn: [string, (pool: pg.Pool) => { pool: pg.Pool } | { db: object }][] = [
  ['a pg.Pool', (pool) => ({ pool })],
  ["a Drizzle database's pool", (pool) => ({ db: drizzle(pool) })],
];

describe('a pool handed in', () => {
  it.each(handedIn)(
    '%s: the server ending its idle connections neither ends the process nor stops the engine; close() leaves no listener',
    async (_what, given) => {
      const app = `pgq_userpool_${randomBytes(4).toString('hex')}`;
      const pool = new pg.Pool({ connectionString: testUrl(), max: 2, application_name: app });
      expect(pool.listenerCount('error')).toBe(0);
      const warnings: string[] = [];
      const q = new PgQueue({ ...given(pool), schema: f.schema, supervise: false, workers: false, logger: f.logger });
      q.on('warning', (w: QueueWarning) => void warnings.push(w.message));
      try {
        await q.send('up.q', { n: 1 });
        // both connections open and idle, so that the server's end reaches idle clients only
        await Promise.all([pool.query('SELECT pg_sleep(0.05)'), pool.query('SELECT pg_sleep(0.05)')]);
        await until(() => pool.idleCount === 2, 'both connections idle');
        expect(pool.listenerCount('error')).toBe(1);
        const ended = await f.sql<{ ended: boolean }>(
          'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1',
          [app],
        );
        expect(ended.map((r) => r.ended)).toEqual([true, true]);
        await until(() => warnings.filter((w) => w.startsWith('idle connection error:')).length === 2, 'each reported as a warning');
        // the engine goes on, on new connections of the same pool
        await q.send('up.q', { n: 2 });
        const rows = await f.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = 'up.q'`);
        expect(rows[0]!.n).toBe(2);
      } finally {
        await q.close();
      }
      expect(pool.listenerCount('error')).toBe(0);
      // the pool is left to its owner, working
      expect((await pool.query<{ ok: number }>('SELECT 1 AS ok')).rows[0]!.ok).toBe(1);
      await pool.end();
      await f.sql(`DELETE FROM $schema.jobs WHERE queue = 'up.q'`);
    },
  );

  it('a start that fails leaves no listener on the pool', async () => {
    const pool = new pg.Pool({ connectionString: testUrl(), max: 1 });
    // migrate: false on a schema that does not exist: the start is refused (SCHEMA_OUTDATED or a missing table)
    const q = new PgQueue({ pool, schema: `${f.schema}_none`, migrate: false, supervise: false, logger: f.logger });
    await expect(q.start()).rejects.toThrow();
    expect(pool.listenerCount('error')).toBe(0);
    await q.close();
    await pool.end();
  });
});
