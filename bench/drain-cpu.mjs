// What a drain costs the worker's process, for comparing builds of the engine on the hot path: the Node CPU
// time per job (user + system, process.cpuUsage) and the jobs per second of one worker draining a backlog,
// each build in turn, interleaved, every run in a process and a schema of its own. The CPU per job does not
// move with the database's noise the way a short drain's throughput does.
//
//   node bench/drain-cpu.mjs [--dist dist,/path/to/other/dist] [--rounds 4] [--jobs 40000]
//
// --dist: the builds' dist folders (default: this checkout's dist). To compare with an earlier commit:
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
//   node bench/drain-cpu.mjs --dist /tmp/before/dist,dist
// PostgreSQL: DATABASE_URL (required). Prints a table: medians (min-max) per build.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;

if (process.env.PGQUEUE_DRAIN_CPU_CHILD) {
  // One run: a backlog of `jobs`, then one worker (concurrency 50, batch 200, as the main bench), timed from work().
  const { dist, jobs } = JSON.parse(process.env.PGQUEUE_DRAIN_CPU_CHILD);
  const { PgQueue } = await import(`${dist}/lib/core/index.js`);
  const schema = `drain_cpu_${process.pid}`;
  const q = new PgQueue({
    connectionString: url,
    schema,
    supervise: false,
    logger: { log() {}, warn() {}, error: (m) => console.error(m) },
  });
  await q.createQueue('d');
  for (let i = 0; i < jobs; i += 5000)
    await q.insert(
      'd',
      Array.from({ length: Math.min(5000, jobs - i) }, (_, k) => ({ data: { k } })),
    );
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await q.work('d', { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 0.5 }, async () => {
    if (++done === jobs) finish();
  });
  await all;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await q.offWork('d');
  await q.close();
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
  console.log(JSON.stringify({ jobsPerSecond: jobs / seconds, cpuMicrosPerJob: (cpu.user + cpu.system) / jobs }));
} else {
  if (!url) throw new Error('drain-cpu: set DATABASE_URL');
  const dists = String(args.dist ?? 'dist')
    .split(',')
    .map((d) => resolve(process.cwd(), d.trim()));
  const rounds = Number(args.rounds ?? 4);
  const jobs = Number(args.jobs ?? 40_000);
  const results = new Map(dists.map((d) => [d, []]));
  for (let round = 0; round < rounds; round++) {
    // Interleaved, and each round in the other order: a run's place in the round must not favour one build.
    for (const dist of round % 2 === 0 ? dists : [...dists].reverse()) {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, PGQUEUE_DRAIN_CPU_CHILD: JSON.stringify({ dist, jobs }) },
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(`drain-cpu: the run of ${dist} failed:\n${run.stderr}`);
      results.get(dist).push(JSON.parse(run.stdout.trim().split('\n').pop()));
      process.stderr.write(`round ${round + 1}/${rounds}: ${dist} done\n`);
    }
  }
  const summary = (values, digits) => {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const f = (v) => v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
    return `${f(median)} (${f(sorted[0])}–${f(sorted[sorted.length - 1])})`;
  };
  console.log(`drain of ${jobs} no-op jobs, one worker (concurrency 50, batch 200), ${rounds} interleaved rounds; medians (min–max)\n`);
  console.log('| build | worker CPU µs per job | jobs/s |');
  console.log('| --- | ---: | ---: |');
  for (const [dist, runs] of results) {
    console.log(
      `| ${dist} | ${summary(
        runs.map((r) => r.cpuMicrosPerJob),
        2,
      )} | ${summary(
        runs.map((r) => r.jobsPerSecond),
        0,
      )} |`,
    );
  }
}
