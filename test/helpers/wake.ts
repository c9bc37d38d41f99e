// Watching wake-ups from outside the engine: the NOTIFYs sent on a schema's channel, and the loops asleep.
import { testPool, until } from './db.js';
import type { queueFixture } from './queue.js';

type Fixture = ReturnType<typeof queueFixture>;

/** The payloads of the NOTIFYs on `channel`, heard on a connection of the test's own, until `stop()`. */
export async function listen(channel: string): Promise<{ heard: string[]; stop: () => Promise<void> }> {
  const pool = testPool(1);
  const client = await pool.connect();
  const heard: string[] = [];
  client.on('notification', (n) => heard.push(n.payload ?? ''));
  await client.query(`LISTEN "${channel}"`);
  return {
    heard,
    stop: async () => {
      client.release();
      await pool.end();
    },
  };
}

/**
 * The sessions on the fixture's schema, now idle, whose last statement was a loop's read of its queue's next due
 * time (nextDue in lib/core/sql/due.ts; pg_stat_activity keeps a statement's first 1,024 bytes, which name it).
 * A loop reads it after a claim that came back short, just before it sleeps.
 */
export async function asleepSessions(f: Fixture): Promise<Set<number>> {
  const rows = await f.sql<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE state = 'idle' AND query LIKE '%WITH RECURSIVE bound AS%' AND query LIKE $1`,
    [`%"${f.schema}"%`],
  );
  return new Set(rows.map((r) => r.pid));
}

/**
 * Waits until a session that was not among `before` (asleepSessions) has read its due time: a loop started since
 * has claimed once, read what is due, and sleeps.
 */
export async function untilAsleep(f: Fixture, before: Set<number>, what: string): Promise<void> {
  await until(async () => [...(await asleepSessions(f))].some((pid) => !before.has(pid)), what);
}
