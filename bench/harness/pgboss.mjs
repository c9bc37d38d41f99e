// pg-boss 12 in a bench child of bench/wake-chain.mjs and bench/deferred.mjs, the peer beside pgqueue where it has
// the feature: the main bench's settings (PGBOSS.fast in bench/settings.mjs: LISTEN/NOTIFY, batch 200), with its
// backstop poll while NOTIFY is up (notifyPollingIntervalSeconds, 30 s by default) set to pgqueue's polling
// interval, 2 s, so that both wait for the same poll when nothing wakes them.
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { PGBOSS } from '../settings.mjs';

export const PGBOSS_WORK = { ...PGBOSS.fast.work, notifyPollingIntervalSeconds: 2 };

/** A pg-boss on a schema of its own; `end()` stops it and drops the schema. */
export async function pgBossEngine(url, prefix) {
  const schema = `${prefix}_boss_${process.pid}`;
  const boss = new PgBoss({ connectionString: url, schema, ...PGBOSS.fast.boss });
  boss.on('error', (err) => console.error(`[pg-boss] error: ${err.message}`));
  await boss.start();
  const end = async () => {
    await boss.stop({ graceful: true, close: true, timeout: 10_000 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  };
  return { boss, schema, queueOptions: PGBOSS.fast.queue, end };
}
