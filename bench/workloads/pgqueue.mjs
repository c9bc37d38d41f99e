// pgqueue through its engine (`PgQueue` from nestjs-pgqueue/core, built to dist/ by `npm run build`).
// Settings: PGQUEUE in bench/settings.mjs.
import pg from 'pg';
import { PgQueue } from 'nestjs-pgqueue/core';
import { runChild } from '../harness/driver.mjs';
import { now } from '../harness/util.mjs';
import { PGQUEUE } from '../settings.mjs';

const SCHEMA = 'pgqueue';
const logger = {
  log() {},
  warn: (m) => console.error(`[pgqueue] ${m}`),
  error: (m, stack) => console.error(`[pgqueue] ${m}${stack ? `\n${stack}` : ''}`),
};

await runChild({
  name: 'pgqueue',
  async open(ctx) {
    const q = new PgQueue({ connectionString: ctx.url, schema: SCHEMA, ...PGQUEUE.engine, logger });
    // Connected and installed here, as pg-boss's adapter starts its engine: a scale worker process says it is
    // ready after open(), and the clock starts when all are (it calls no setup() that would start the engine).
    await q.start();
    // The bench's own connection: counts and the flat workload's bulk statements.
    const probe = new pg.Pool({ connectionString: ctx.url, max: 1 });
    return {
      // --remove-on-complete: the queue deletes each job when it completes (as Graphile Worker always does)
      setup: () => q.createQueue(ctx.queue, ctx.args['remove-on-complete'] ? { removeOnComplete: true } : undefined),
      insert: (datas) =>
        q.insert(
          ctx.queue,
          datas.map((data) => ({ data })),
        ),
      send: (data) => q.send(ctx.queue, data),
      async work(onJob, options = {}) {
        const id = await q.work(ctx.queue, { ...PGQUEUE.work, ...options }, async (job) => {
          onJob(job.data);
        });
        return { stop: () => q.offWork(id) };
      },
      async pending() {
        const { rows } = await probe.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.jobs WHERE queue = $1 AND state <> 'completed'`, [
          ctx.queue,
        ]);
        return rows[0].n;
      },
      async completed(inserted) {
        const { rows } = await probe.query(
          `SELECT count(*) FILTER (WHERE state = 'completed')::int AS completed, count(*)::int AS stored FROM ${SCHEMA}.jobs WHERE queue = $1`,
          [ctx.queue],
        );
        return ctx.args['remove-on-complete']
          ? { n: inserted - rows[0].stored, how: 'deleted on completion' }
          : { n: rows[0].completed, how: "in state 'completed'" };
      },
      async close() {
        await q.close();
        await probe.end();
      },
      flat: (options) => flat(q, probe, ctx.queue, options),
    };
  },
});

/**
 * Claim latency (median of `claims` fetches of `batch` jobs) with only the ready jobs in the table, then
 * again with `rows` finished jobs of the same queue in it: the ratio is what a big history costs a claim.
 */
async function flat(q, probe, queue, { rows, claims, batch, median }) {
  const warmup = 5;
  const measure = async () => {
    await q.insert(
      queue,
      Array.from({ length: (claims + warmup) * batch }, (_, i) => ({ data: { i } })),
    );
    await probe.query(`VACUUM ANALYZE ${SCHEMA}.jobs`);
    const times = [];
    for (let i = 0; i < claims + warmup; i++) {
      const t0 = now();
      const jobs = await q.fetch(queue, { batchSize: batch });
      const ms = now() - t0;
      if (jobs.length !== batch) throw new Error(`fetch ${i} claimed ${jobs.length} jobs, expected ${batch}`);
      if (i >= warmup) times.push(ms);
    }
    await probe.query(`DELETE FROM ${SCHEMA}.jobs WHERE queue = $1 AND state = 'active'`, [queue]);
    return median(times);
  };
  const emptyMs = await measure();
  // Finished jobs as the engine leaves them; one statement, straight into the table.
  const t0 = now();
  await probe.query(
    `INSERT INTO ${SCHEMA}.jobs (queue, state, data, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds,
       keep_until, created_on, started_on, completed_on, worker_id, claim_count)
     SELECT $1, 'completed', jsonb_build_object('i', g), 2, 0, false, 900, 604800,
       now() + interval '7 days', now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour', 'bench', 1
     FROM generate_series(1, $2::int) g`,
    [queue, rows],
  );
  const fillMs = now() - t0;
  const fullMs = await measure();
  return { emptyMs, fullMs, ratio: fullMs / emptyMs, rows, claims, batch, fillSeconds: fillMs / 1000 };
}
