// What the hot path costs, for comparing builds of the engine: a send's round trip (one job per statement), the
// jobs per second of a bulk insert, and the Node CPU time per job (user + system, process.cpuUsage) and the jobs
// per second of one worker draining the backlog,
// each build in turn, interleaved, every run in a process and a schema of its own. The CPU per job does not
// move with the database's noise the way a short drain's throughput does. "machine cores busy" and "machine CPU µs
// per job" count every process over the drain (/proc/stat: the database's, the worker's, the kernel's): what a job
// costs the whole machine, and how far a drain is from using all of it.
//
//   node bench/drain-cpu.mjs [--dist dist,/path/to/other/dist] [--rounds 4] [--jobs 40000] [--keys]
//
// --keys: every job carries a singletonKey (one of 100) and a dedupeKey of its own, so that the indexes on keys
// are written too (a standard queue: the keys hold nothing back).
// --dist: the builds' dist folders (default: this checkout's dist); `dist+metrics` runs a build with the prom-client
// metrics registered (lib/metrics/queue-metrics.ts: its listeners on every job's events), to price them against
// `dist` in the same interleaved run. To compare with an earlier commit:
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
//   node bench/drain-cpu.mjs --dist /tmp/before/dist,dist
// PostgreSQL: DATABASE_URL (required). Prints a table: medians (min-max) per build.
import { fileURLToPath } from 'node:url';
import { childEngine, distsOf, runInterleaved } from './harness/builds.mjs';
import { machineBusy, machineTicks, parseArgs } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;

if (process.env.PGQUEUE_DRAIN_CPU_CHILD) {
  // One run: a backlog of `jobs`, then one worker (concurrency 50, batch 200, as the main bench), timed from work().
  const { dist: build, jobs, keys } = JSON.parse(process.env.PGQUEUE_DRAIN_CPU_CHILD);
  const keyed = (i) => (keys ? { singletonKey: `k${i % 100}`, dedupeKey: `d${i}` } : {});
  // a folder may hold a '+' of its own: only the known suffix is a variant (+pgbouncer: childEngine's)
  const metrics = build.endsWith('+metrics');
  const dist = metrics ? build.slice(0, -'+metrics'.length) : build;
  const { q, end } = await childEngine(dist, url, 'drain_cpu');
  if (metrics) {
    const { QueueMetrics } = await import(`${dist}/lib/metrics/queue-metrics.js`);
    new QueueMetrics(q);
  }
  await q.createQueue('d');
  // one job per send, the way a request sends one: each send's round trip, timed
  const sendMs = [];
  for (let i = 0; i < 1000; i++) {
    const s0 = performance.now();
    await q.send('d', { i }, keyed(i));
    sendMs.push(performance.now() - s0);
  }
  sendMs.sort((a, b) => a - b);
  const i0 = performance.now();
  for (let i = 1000; i < jobs; i += 5000)
    await q.insert(
      'd',
      Array.from({ length: Math.min(5000, jobs - i) }, (_, k) => ({ data: { k }, ...keyed(i + k) })),
    );
  const insertsPerSecond = (jobs - 1000) / ((performance.now() - i0) / 1000);
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const cpu0 = process.cpuUsage();
  const machine0 = machineTicks();
  const t0 = performance.now();
  await q.work('d', { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 0.5 }, async () => {
    if (++done === jobs) finish();
  });
  await all;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const busy = machineBusy(machine0, machineTicks());
  await q.offWork('d');
  await end();
  console.log(
    JSON.stringify({
      jobsPerSecond: jobs / seconds,
      cpuMicrosPerJob: (cpu.user + cpu.system) / jobs,
      machineBusy: busy,
      machineMicrosPerJob: busy === null ? null : (busy * seconds * 1e6) / jobs,
      sendP50Ms: sendMs[500],
      insertsPerSecond,
    }),
  );
} else {
  if (!url) throw new Error('drain-cpu: set DATABASE_URL');
  const dists = distsOf(args.dist);
  const rounds = Number(args.rounds ?? 4);
  const jobs = Number(args.jobs ?? 40_000);
  const script = fileURLToPath(import.meta.url);
  const results = runInterleaved({
    script,
    envVar: 'PGQUEUE_DRAIN_CPU_CHILD',
    dists,
    rounds,
    payload: { jobs, keys: args.keys !== undefined },
  });
  const summary = (values, digits) => {
    if (values.some((v) => v === null)) return '—';
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const f = (v) => v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
    return `${f(median)} (${f(sorted[0])}–${f(sorted[sorted.length - 1])})`;
  };
  console.log(
    `1,000 sends one at a time, then the rest of ${jobs} jobs${args.keys !== undefined ? ' (with keys)' : ''} inserted 5,000 per statement, then a drain by one worker` +
      ` (concurrency 50, batch 200); ${rounds} interleaved rounds; medians (min–max)\n`,
  );
  const columns = [
    ['send p50 ms', 'sendP50Ms', 3],
    ['inserted jobs/s', 'insertsPerSecond', 0],
    ['worker CPU µs per job', 'cpuMicrosPerJob', 2],
    ['drained jobs/s', 'jobsPerSecond', 0],
    ['machine cores busy', 'machineBusy', 2],
    ['machine CPU µs per job', 'machineMicrosPerJob', 1],
  ];
  console.log(`| build | ${columns.map(([title]) => title).join(' | ')} |`);
  console.log(`| --- |${columns.map(() => ' ---: |').join('')}`);
  for (const [dist, runs] of results)
    console.log(
      `| ${dist} | ${columns
        .map(([, key, digits]) =>
          summary(
            runs.map((r) => r[key] ?? null),
            digits,
          ),
        )
        .join(' | ')} |`,
    );
}
