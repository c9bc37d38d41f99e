// What the dashboard's event stream costs with many viewers: a Nest app with QueueDashboardModule, QUEUES queues
// with jobs waiting, VIEWERS open streams of /queues/events read for SECONDS seconds after a warm-up. It prints the
// bytes each viewer receives per second, the average event, and the app process's CPU per second (the viewers read
// in the same process and only count bytes). The database's cost is the sampler's, one sample a second whatever
// the number of viewers (bench/dashboard-sample.mjs).
//
//   node bench/dashboard-stream.mjs [--dist dist,/path/to/other/dist] [--rounds 2] [--viewers 50] [--queues 100] [--seconds 10]
//     [--warmup 125]
//
// Each build runs in a child process, the builds interleaved (harness/builds.mjs). A build's dist must resolve
// @nestjs/* from a node_modules above it (a checkout's own, or a link to this one's).
import { fileURLToPath } from 'node:url';
import { distsOf, dropChildSchema, runInterleaved } from './harness/builds.mjs';
import { parseArgs, pause, until } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;

if (process.env.PGQUEUE_DASHBOARD_STREAM_CHILD) {
  const { dist, viewers, queues, seconds, warmup } = JSON.parse(process.env.PGQUEUE_DASHBOARD_STREAM_CHILD);
  const { NestFactory } = await import('@nestjs/core');
  const { Module } = await import('@nestjs/common');
  const { QueueModule } = await import(`${dist}/lib/nest/queue.module.js`);
  const { QueueService } = await import(`${dist}/lib/nest/queue.service.js`);
  const { QueueDashboardModule } = await import(`${dist}/lib/nest/dashboard.js`);
  const schema = `dash_stream_${process.pid}`;
  const quiet = { log() {}, warn() {}, error: (m) => console.error(m) };
  const imports = [
    QueueModule.forRoot({ connectionString: url, schema, supervise: false, logger: quiet }),
    QueueDashboardModule.forRoot({ localOnly: true }),
  ];
  class App {}
  Module({ imports })(App);
  const app = await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const queue = app.get(QueueService);
  for (let i = 0; i < queues; i++) {
    const name = `stream.q${String(i).padStart(3, '0')}`;
    await queue.createQueue(name);
    await queue.insert(
      name,
      Array.from({ length: 1 + (i % 7) }, (_, k) => ({ data: { k } })),
    );
  }

  const controller = new AbortController();
  let bytes = 0;
  const events = new Array(viewers).fill(0);
  const readers = await Promise.all(
    Array.from({ length: viewers }, async (_, v) => {
      const res = await fetch(`${base}/queues/events`, { signal: controller.signal });
      const reader = res.body.getReader();
      // wrapped: an async function returning the read's promise would make Promise.all wait for the read's end
      const done = (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            bytes += value.byteLength;
            // one event per `data:` line
            for (let i = 0; i < value.length - 5; i++)
              if (value[i] === 0x64 && value[i + 4] === 0x3a && (i === 0 || value[i - 1] === 0x0a)) events[v]++;
          }
        } catch {
          // aborted at the end
        }
      })();
      return { done };
    }),
  );
  // warm-up: every viewer had its first (whole) event, and the two minutes of depth history filled, as on a page
  // watched for a while (a shorter --warmup measures a page just opened)
  await until(() => events.every((n) => n >= 1), { timeoutMs: 30_000, what: 'a first event for every viewer' });
  await pause(warmup * 1000);
  const bytes0 = bytes;
  const events0 = events.reduce((a, b) => a + b, 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pause(seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const received = bytes - bytes0;
  const count = events.reduce((a, b) => a + b, 0) - events0;
  controller.abort();
  await Promise.all(readers.map((r) => r.done));
  await app.close();
  await dropChildSchema(url, schema);
  console.log(
    JSON.stringify({
      bytesPerViewerSecond: received / viewers / elapsed,
      bytesPerEvent: received / Math.max(1, count),
      cpuMsPerSecond: (cpu.user + cpu.system) / 1000 / elapsed,
    }),
  );
} else {
  if (!url) throw new Error('dashboard-stream: set DATABASE_URL');
  const dists = distsOf(args.dist);
  const rounds = Number(args.rounds ?? 2);
  const payload = {
    viewers: Number(args.viewers ?? 50),
    queues: Number(args.queues ?? 100),
    seconds: Number(args.seconds ?? 10),
    warmup: Number(args.warmup ?? 125),
  };
  const results = runInterleaved({
    script: fileURLToPath(import.meta.url),
    envVar: 'PGQUEUE_DASHBOARD_STREAM_CHILD',
    dists,
    rounds,
    payload,
  });
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const range = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
  console.log(
    `\n${payload.viewers} viewers, ${payload.queues} queues, ${payload.seconds} s per run after ${payload.warmup} s, ${rounds} rounds (median, min–max)\n`,
  );
  console.log('| build | KB per viewer per second | KB per event | app CPU ms per second |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [dist, runs] of results) {
    const kb = runs.map((r) => r.bytesPerViewerSecond / 1024);
    const ev = runs.map((r) => r.bytesPerEvent / 1024);
    const cpu = runs.map((r) => r.cpuMsPerSecond);
    console.log(
      `| ${dist} | ${median(kb).toFixed(1)} (${range(kb)}) | ${median(ev).toFixed(1)} (${range(ev)}) | ${median(cpu).toFixed(1)} (${range(cpu)}) |`,
    );
  }
}
