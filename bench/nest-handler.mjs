// What a @QueueHandler method costs per job in a Nest app, beside the engine's own work: a backlog of JOBS jobs
// drained by one decorated method that does nothing, timed from the app's start of work to the last job. It prints
// the worker process's CPU per job and the jobs drained per second; bench/drain-cpu.mjs is the same without Nest.
//
//   node bench/nest-handler.mjs [--dist dist,/path/to/other/dist] [--rounds 4] [--jobs 20000]
//
// Each build runs in a child process, the builds interleaved (harness/builds.mjs). A build's dist must resolve
// @nestjs/* from a node_modules above it.
import { fileURLToPath } from 'node:url';
import { distsOf, dropChildSchema, runInterleaved } from './harness/builds.mjs';
import { parseArgs, until } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;

if (process.env.PGQUEUE_NEST_HANDLER_CHILD) {
  const { dist, jobs } = JSON.parse(process.env.PGQUEUE_NEST_HANDLER_CHILD);
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { Injectable, Module } = await import('@nestjs/common');
  const { QueueModule } = await import(`${dist}/lib/nest/queue.module.js`);
  const { QueueService } = await import(`${dist}/lib/nest/queue.service.js`);
  const { QueueHandler } = await import(`${dist}/lib/nest/decorators/queue-handler.decorator.js`);
  const schema = `nest_handler_${process.pid}`;
  const quiet = { log() {}, warn() {}, error: (m) => console.error(m) };

  let done = 0;
  class Handler {
    handle() {
      done++;
    }
  }
  Injectable()(Handler);
  const method = Object.getOwnPropertyDescriptor(Handler.prototype, 'handle');
  QueueHandler('nest.bench', { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 0.5 })(Handler.prototype, 'handle', method);
  Object.defineProperty(Handler.prototype, 'handle', method);
  class App {}
  Module({
    imports: [QueueModule.forRoot({ connectionString: url, schema, supervise: false, startWorkers: false, logger: quiet })],
    providers: [Handler],
  })(App);
  const app = await NestFactory.createApplicationContext(App, { logger: false });
  const queue = app.get(QueueService);
  for (let i = 0; i < jobs; i += 5000)
    await queue.insert(
      'nest.bench',
      Array.from({ length: Math.min(5000, jobs - i) }, (_, k) => ({ data: { k } })),
    );
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await queue.startWorking();
  await until(() => done >= jobs, { timeoutMs: 300_000, intervalMs: 5, what: 'every job handled' });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await app.close();
  await dropChildSchema(url, schema);
  console.log(JSON.stringify({ jobsPerSecond: jobs / seconds, cpuMicrosPerJob: (cpu.user + cpu.system) / jobs }));
} else {
  if (!url) throw new Error('nest-handler: set DATABASE_URL');
  const dists = distsOf(args.dist);
  const rounds = Number(args.rounds ?? 4);
  const jobs = Number(args.jobs ?? 20_000);
  const results = runInterleaved({
    script: fileURLToPath(import.meta.url),
    envVar: 'PGQUEUE_NEST_HANDLER_CHILD',
    dists,
    rounds,
    payload: { jobs },
  });
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const range = (xs, d) => `${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)}`;
  console.log(
    `\n${jobs} jobs drained by one @QueueHandler method (concurrency 50, batch 200); ${rounds} interleaved rounds; medians (min–max)\n`,
  );
  console.log('| build | worker CPU µs per job | drained jobs/s |');
  console.log('| --- | ---: | ---: |');
  for (const [dist, runs] of results) {
    const cpu = runs.map((r) => r.cpuMicrosPerJob);
    const rate = runs.map((r) => r.jobsPerSecond);
    console.log(
      `| ${dist} | ${median(cpu).toFixed(2)} (${range(cpu, 2)}) | ${Math.round(median(rate)).toLocaleString('en-US')} (${range(rate, 0)}) |`,
    );
  }
}
