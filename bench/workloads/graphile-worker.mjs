// Graphile Worker with the fastest settings found for it (GRAPHILE in bench/settings.mjs). It deletes a
// job when it completes, so "pending" is the number of rows left in its jobs table.
import pg from 'pg';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import { runChild } from '../harness/driver.mjs';
import { GRAPHILE } from '../settings.mjs';

const TASK = 'bench';
// Errors and warnings to stderr; its info lines ("Worker connected…") nowhere.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`[graphile-worker] ${level}: ${message}`);
});

await runChild({
  name: 'graphile-worker',
  async open(ctx) {
    const utils = await makeWorkerUtils({ connectionString: ctx.url, logger });
    const probe = new pg.Pool({ connectionString: ctx.url, max: 1 });
    return {
      setup: () => utils.migrate(),
      insert: (datas) => utils.addJobs(datas.map((payload) => ({ identifier: TASK, payload }))),
      send: (data) => utils.addJob(TASK, data),
      async work(onJob, options = {}) {
        const runner = await run({
          noHandleSignals: true,
          logger,
          taskList: {
            [TASK]: async (payload) => {
              onJob(payload);
            },
          },
          preset: {
            worker: {
              connectionString: ctx.url,
              ...GRAPHILE.worker,
              ...(options.concurrency ? { concurrentJobs: options.concurrency } : {}),
            },
          },
        });
        return { stop: () => runner.stop() };
      },
      async pending() {
        const { rows } = await probe.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
        return rows[0].n;
      },
      // it deletes a job that completes; one that failed stays (to be retried or kept)
      async completed(inserted) {
        const { rows } = await probe.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
        return { n: inserted - rows[0].n, how: 'deleted on completion' };
      },
      async close() {
        await utils.release();
        await probe.end();
      },
    };
  },
});
