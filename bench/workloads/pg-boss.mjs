// pg-boss 12. `--variant fast` (default): LISTEN/NOTIFY, batch 200, burst while batches come back full;
// `--variant polling`: its defaults (2 s polling, one job per fetch). Settings: PGBOSS in bench/settings.mjs.
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { runChild } from '../harness/driver.mjs';
import { PGBOSS } from '../settings.mjs';

await runChild({
  name: 'pg-boss',
  async open(ctx) {
    const variant = ctx.args.variant ?? 'fast';
    const settings = PGBOSS[variant];
    if (!settings) throw new Error(`unknown pg-boss variant "${variant}"`);
    const boss = new PgBoss({ connectionString: ctx.url, ...settings.boss });
    boss.on('error', (err) => console.error(`[pg-boss] error: ${err.message}`));
    boss.on('warning', (w) => console.error(`[pg-boss] warning: ${w.message ?? JSON.stringify(w)}`));
    await boss.start();
    const probe = new pg.Pool({ connectionString: ctx.url, max: 1 });
    return {
      setup: () => boss.createQueue(ctx.queue, settings.queue),
      insert: (datas) =>
        boss.insert(
          ctx.queue,
          datas.map((data) => ({ data })),
        ),
      send: (data) => boss.send(ctx.queue, data),
      async work(onJob, options = {}) {
        const id = await boss.work(ctx.queue, { ...settings.work, ...options }, async (jobs) => {
          for (const job of jobs) onJob(job.data);
        });
        return { stop: () => boss.offWork(ctx.queue, { id, wait: true }) };
      },
      async pending() {
        const { rows } = await probe.query(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'`, [
          ctx.queue,
        ]);
        return rows[0].n;
      },
      async completed() {
        const { rows } = await probe.query(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'`, [
          ctx.queue,
        ]);
        return { n: rows[0].n, how: "in state 'completed'" };
      },
      async close() {
        await boss.stop({ graceful: true, close: true, timeout: 10_000 });
        await probe.end();
      },
    };
  },
});
