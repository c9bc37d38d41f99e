// BullMQ on Redis (`--backend redis`, default: the bench's own Redis database index, flushed by the
// orchestrator around each run) or on its PostgreSQL backend (`--backend postgres`: the run's fresh
// database). Settings: BULLMQ in bench/settings.mjs.
import { createPostgresBackend, Queue, Worker } from 'bullmq';
import { runChild } from '../harness/driver.mjs';
import { BULLMQ } from '../settings.mjs';

const NAME = 'bench';

await runChild({
  name: 'bullmq',
  async open(ctx) {
    const backend = ctx.args.backend ?? 'redis';
    if (backend !== 'redis' && backend !== 'postgres') throw new Error(`unknown BullMQ backend "${backend}"`);
    const connection =
      backend === 'redis'
        ? { host: BULLMQ.redisHost, port: BULLMQ.redisPort, db: BULLMQ.redisDb }
        : { connectionString: ctx.url, ...BULLMQ.postgresPool, migrate: true };
    const factory = backend === 'postgres' ? createPostgresBackend : undefined;
    const queue = new Queue(ctx.queue, { connection }, factory);
    queue.on('error', (err) => console.error(`[bullmq queue] ${err.message}`));
    await queue.waitUntilReady();
    return {
      setup: async () => {},
      insert: (datas) => queue.addBulk(datas.map((data) => ({ name: NAME, data }))),
      send: (data) => queue.add(NAME, data),
      async work(onJob, options = {}) {
        const worker = new Worker(
          ctx.queue,
          async (job) => {
            onJob(job.data);
          },
          { connection, ...BULLMQ.worker, ...options },
          factory,
        );
        worker.on('error', (err) => console.error(`[bullmq worker] ${err.message}`));
        await worker.waitUntilReady();
        return { stop: () => worker.close() };
      },
      async pending() {
        const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children');
        return Object.values(counts).reduce((a, b) => a + b, 0);
      },
      async completed() {
        return { n: (await queue.getJobCounts('completed')).completed, how: 'counted completed by the queue' };
      },
      close: () => queue.close(),
    };
  },
});
