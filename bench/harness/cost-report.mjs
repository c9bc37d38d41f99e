// The report of bench/cost.mjs: per job and per phase, the median (min–max) over the repetitions; each system
// divided by the baseline (COST.baseline in bench/settings.mjs, Graphile Worker); the WAL by record type
// (pg_walinspect); the top statements of each phase (pg_stat_statements). The cells' results come from the `cost`
// workload of bench/harness/driver.mjs.
import { repetitionsText } from './meta.mjs';
import { COST } from '../settings.mjs';
import { fmt, median } from './util.mjs';

const PHASES = [
  { key: 'insert', title: 'bulk insert' },
  { key: 'drain', title: 'drain' },
  { key: 'life', title: 'insert + drain' },
];

const COLUMNS = [
  { key: 'wal', title: 'WAL bytes' },
  { key: 'fpi', title: 'of which full-page images', walinspect: true },
  { key: 'server', title: 'PostgreSQL CPU µs' },
  { key: 'backends', title: "of which the run's backends" },
  { key: 'worker', title: 'worker CPU µs' },
  { key: 'wall', title: 'wall µs' },
  { key: 'busy', title: 'cores busy', notPerJob: true },
];

const row = (cells) => `| ${cells.join(' | ')} |`;
const count = (n) => Math.round(n).toLocaleString('en-US');
const plus = (a, b) => (a === null || b === null ? null : a + b);

/** A cell's phase, or both phases added (`life`: a job's whole life, from its insert to its completion). */
function phaseOf(r, key) {
  if (key !== 'life') return r.phases[key];
  const { insert: a, drain: b } = r.phases;
  return {
    ms: a.ms + b.ms,
    workerCpuUs: a.workerCpuUs + b.workerCpuUs,
    walBytes: a.walBytes + b.walBytes,
    serverCpuUs: plus(a.serverCpuUs, b.serverCpuUs),
    backendsCpuUs: plus(a.backendsCpuUs, b.backendsCpuUs),
    wal: a.wal && b.wal ? [...a.wal, ...b.wal] : null,
  };
}

/** A cell's figures per job for one phase (`busy`: cores kept busy, PostgreSQL's and the worker's CPU ÷ wall). */
function perJob(r, key) {
  const p = phaseOf(r, key);
  const per = (v) => (v === null || v === undefined ? null : v / r.jobs);
  return {
    wal: per(p.walBytes),
    fpi: per(p.wal ? p.wal.reduce((a, x) => a + x.fpi_size, 0) : null),
    server: per(p.serverCpuUs),
    backends: per(p.backendsCpuUs),
    worker: per(p.workerCpuUs),
    wall: per(p.ms * 1000),
    busy: p.serverCpuUs === null ? null : (p.serverCpuUs + p.workerCpuUs) / (p.ms * 1000),
  };
}

const okRuns = (results, id) => (results.get(id) ?? []).filter((r) => r.ok);

function values(results, id, phase, metric) {
  return okRuns(results, id)
    .map((r) => perJob(r, phase)[metric])
    .filter((v) => v !== null);
}

function med(results, id, phase, metric) {
  const v = values(results, id, phase, metric);
  return v.length ? median(v) : null;
}

function cell(results, id, phase, metric) {
  const v = values(results, id, phase, metric);
  if (v.length === 0) return '—';
  let text = fmt(median(v));
  if (v.length > 1) text += ` (${fmt(Math.min(...v))}–${fmt(Math.max(...v))})`;
  return text;
}

/** The markdown of the whole report. */
export function buildCostReport({ systems, results, jobs, meta }) {
  const out = [];
  const measured = systems.filter((s) => okRuns(results, s.id).length > 0);
  const columns = COLUMNS.filter((c) => !c.walinspect || meta.walinspect === null);
  out.push('# Cost per job: pgqueue and its PostgreSQL peers');
  out.push('');
  out.push(`Command: \`${meta.command}\` (pgqueue at ${meta.code})`);
  out.push('');
  const repText = repetitionsText(meta.reps);
  out.push(
    `Run on ${meta.date}, ${meta.durationMinutes.toFixed(1)} minutes. ${repText}. ${jobs.toLocaleString('en-US')} no-op jobs per cell: a bulk insert, then one worker process draining them.`,
  );
  if (meta.note) out.push('', meta.note);
  out.push('');
  out.push('## Machine');
  out.push('');
  for (const line of meta.machine) out.push(`- ${line}`);
  out.push(`- PostgreSQL CPU: ${meta.cpuSource}`);
  out.push(`- pg_stat_statements: ${meta.statements ?? 'loaded; the top statements of each phase are below'}`);
  out.push(`- pg_walinspect: ${meta.walinspect ?? 'available; the WAL by record type is below'}`);

  out.push('');
  out.push('## Per job');
  out.push('');
  out.push(row(['system', 'phase', ...columns.map((c) => c.title)]));
  out.push(row(['---', '---', ...columns.map(() => '---:')]));
  for (const s of measured)
    PHASES.forEach((p, i) => out.push(row([i === 0 ? s.label : '', p.title, ...columns.map((c) => cell(results, s.id, p.key, c.key))])));
  out.push('');
  out.push(
    'Per job: the phase\'s total divided by the jobs. "—": not measured (see Machine). "insert + drain": both phases of the same cell added, a job\'s whole life.',
  );

  out.push('');
  out.push(...ratios(measured, results, columns));
  out.push('');
  out.push(...walByRecord(measured, results));
  out.push(...statements(measured, results, meta));

  out.push('## Checks');
  out.push('');
  out.push(
    'At the end of every cell the jobs are counted in the database (BullMQ: by its queue); a cell where one is missing fails and reports no cost.',
  );
  out.push('');
  for (const s of measured) {
    const runs = okRuns(results, s.id);
    const checkpoints = runs.filter((r) => r.checkpoint).map((r) => r.checkpoint);
    out.push(
      `- ${s.label}: ${runs[0].check} in each of ${runs.length} cell${runs.length > 1 ? 's' : ''}${checkpoints.length ? `; CHECKPOINT failed: ${checkpoints[0]}` : ''}`,
    );
  }
  const failures = [];
  for (const s of systems) for (const r of results.get(s.id) ?? []) if (!r.ok) failures.push(`- ${s.id}, repetition ${r.rep}: ${r.error}`);
  const notes = new Set(systems.flatMap((s) => okRuns(results, s.id).flatMap((r) => r.notes ?? [])));
  if (failures.length) out.push('', '## Failed runs', '', ...failures);
  if (notes.size) out.push('', '## Extensions the meter could not create', '', ...[...notes].map((n) => `- ${n}`));

  out.push('');
  out.push('## Settings');
  out.push('');
  for (const s of systems) out.push(`- **${s.label}**: ${s.settingsText}`);
  out.push('');
  out.push('## What is measured');
  out.push('');
  out.push(...NOTES(jobs));
  return out.join('\n') + '\n';
}

function ratios(measured, results, columns) {
  const base = measured.find((s) => s.id === COST.baseline);
  const out = [`## Each system ÷ ${base ? base.label : COST.baseline}`, ''];
  if (!base) return [...out, 'The baseline was not measured in this run.'];
  const cols = columns.filter((c) => !c.notPerJob && c.key !== 'fpi');
  out.push('Median ÷ median. Below 1: the system costs less per job than the baseline.');
  out.push('');
  out.push(row(['system', 'phase', ...cols.map((c) => c.title)]));
  out.push(row(['---', '---', ...cols.map(() => '---:')]));
  for (const s of measured) {
    if (s === base) continue;
    for (const p of PHASES) {
      const cells = cols.map((c) => {
        const a = med(results, s.id, p.key, c.key);
        const b = med(results, base.id, p.key, c.key);
        return a === null || b === null || b === 0 ? '—' : `${(a / b).toFixed(2)}×`;
      });
      out.push(row([`${s.id} ÷ ${base.id}`, p.title, ...cells]));
    }
  }
  return out;
}

/** Per phase: the record types that weigh most (bytes per job, records and full-page images), system by system. */
function walByRecord(measured, results) {
  const having = measured.filter((s) => okRuns(results, s.id).every((r) => r.phases.drain.wal));
  if (having.length === 0) return [];
  const out = ['## WAL by record type', ''];
  out.push(
    'Bytes per job of each record type (its records and full-page images), from `pg_get_wal_stats(from, to, true)` over each phase: the median over the repetitions. The types that weigh most in any system; the rest added up below them.',
  );
  for (const p of PHASES.filter((x) => x.key !== 'life')) {
    const per = new Map(); // type → system id → per-repetition bytes per job
    const totals = new Map();
    for (const s of having) {
      const runs = okRuns(results, s.id);
      totals.set(s.id, median(runs.map((r) => r.phases[p.key].wal.reduce((a, x) => a + x.record_size + x.fpi_size, 0) / r.jobs)));
      runs.forEach((r, i) => {
        for (const x of r.phases[p.key].wal) {
          if (!per.has(x.type)) per.set(x.type, new Map());
          const bySystem = per.get(x.type);
          if (!bySystem.has(s.id)) bySystem.set(s.id, new Array(runs.length).fill(0));
          bySystem.get(s.id)[i] = (x.record_size + x.fpi_size) / r.jobs;
        }
      });
    }
    const medOf = (type, id) => {
      const v = per.get(type).get(id);
      return v ? median(v) : 0;
    };
    const top = [...per.keys()]
      .map((type) => ({ type, max: Math.max(...having.map((s) => medOf(type, s.id))) }))
      .sort((a, b) => b.max - a.max)
      .slice(0, COST.topRecords);
    out.push('', `### ${p.title}`, '');
    out.push(row(['record type', ...having.map((s) => s.id)]));
    out.push(row(['---', ...having.map(() => '---:')]));
    for (const { type } of top) out.push(row([type, ...having.map((s) => (per.get(type).has(s.id) ? fmt(medOf(type, s.id)) : '—'))]));
    out.push(
      row([
        'other types',
        ...having.map((s) => fmt(Math.max(0, totals.get(s.id) - top.reduce((a, { type }) => a + medOf(type, s.id), 0)))),
      ]),
    );
    out.push(row(['**all records**', ...having.map((s) => `**${fmt(totals.get(s.id))}**`)]));
  }
  out.push('');
  return out;
}

/** A statement's text on one line, short enough for a table cell. */
function shortSql(text) {
  const one = text.replace(/\s+/g, ' ').trim().replace(/`/g, "'").replace(/\|/g, '\\|');
  return one.length > 110 ? `${one.slice(0, 107)}…` : one;
}

/** Per phase and system: every statement's figures, the median over the repetitions (0 in one it did not run in). */
function statementFigures(runs, phase) {
  const byText = new Map();
  runs.forEach((r, i) => {
    for (const st of r.phases[phase].statements) {
      const key = shortSql(st.query);
      if (!byText.has(key))
        byText.set(
          key,
          runs.map(() => ({ calls: 0, total_ms: 0, rows: 0, wal_bytes: 0 })),
        );
      const slot = byText.get(key)[i];
      for (const f of ['calls', 'total_ms', 'rows', 'wal_bytes']) slot[f] += st[f];
    }
  });
  return [...byText].map(([text, perRun]) => {
    const m = (f) => median(perRun.map((x) => x[f]));
    return { text, calls: m('calls'), totalMs: m('total_ms'), rows: m('rows'), walBytes: m('wal_bytes') };
  });
}

function statements(measured, results, meta) {
  if (meta.statements !== null) return [];
  const having = measured.filter((s) => okRuns(results, s.id).every((r) => r.phases.drain.statements));
  if (having.length === 0) return [];
  const out = ['## Top statements per phase (pg_stat_statements)', ''];
  out.push(
    `Each phase's top-level statements in the cell's database, by total execution time (the median over the repetitions), ${COST.topStatements} per system: calls, mean execution µs, execution µs per job, rows, WAL bytes per job. Execution time is the wall-clock time in the executor, waits included (locks, the CPU given to other processes), and leaves out parsing, planning, the protocol and the commit; the line above each table puts the whole phase's execution time beside the server's CPU.`,
  );
  for (const p of PHASES.filter((x) => x.key !== 'life')) {
    out.push('', `### ${p.title}`);
    for (const s of having) {
      const runs = okRuns(results, s.id);
      const jobs = runs[0].jobs;
      const all = statementFigures(runs, p.key).sort((a, b) => b.totalMs - a.totalMs);
      const sum = (f) => all.reduce((a, x) => a + x[f], 0);
      const cpu = med(results, s.id, p.key, 'server');
      const wal = med(results, s.id, p.key, 'wal');
      out.push('');
      out.push(
        `**${s.id}**: ${all.length} statements, ${count(sum('calls'))} calls (${fmt(jobs / sum('calls'))} jobs per call), ${fmt((sum('totalMs') * 1000) / jobs)} µs of execution per job${cpu ? ` (the server's CPU: ${fmt(cpu)} µs)` : ''}, ${fmt(sum('walBytes') / jobs)} WAL bytes per job${wal ? ` (the phase's WAL: ${fmt(wal)})` : ''}.`,
      );
      out.push('');
      out.push(row(['statement', 'calls', 'mean µs', 'µs per job', 'rows', 'WAL bytes per job']));
      out.push(row(['---', '---:', '---:', '---:', '---:', '---:']));
      for (const st of all.slice(0, COST.topStatements))
        out.push(
          row([
            `\`${st.text}\``,
            count(st.calls),
            fmt(st.calls ? (st.totalMs * 1000) / st.calls : 0),
            fmt((st.totalMs * 1000) / jobs),
            count(st.rows),
            fmt(st.walBytes / jobs),
          ]),
        );
    }
  }
  out.push('');
  return out;
}

const NOTES = (jobs) => [
  `- **bulk insert**: ${jobs.toLocaleString('en-US')} jobs through the system's own bulk API in chunks (as the insert of \`npm run bench\`), one call at a time.`,
  "- **drain**: from starting one worker (its connections included) until the database says every job is completed: the claims, the no-op handlers, the settles, and the bench's own count of unfinished jobs every 5 ms once every handler has run (the `SELECT count(*)` among the statements). The raw-SQL loop connects before the phase.",
  "- **WAL bytes**: `pg_wal_lsn_diff` of `pg_current_wal_lsn()` after and before the phase: all the server wrote, its background processes' records included (and other databases' when the server is shared). Each cell runs a `CHECKPOINT` before its insert, since the first change to a page after a checkpoint writes the whole page: a timed checkpoint inside one cell's phase would otherwise multiply that cell's WAL. The full-page images that remain are shown.",
  "- **PostgreSQL CPU**: the CPU time of the server's processes between the two readings (`/proc/<pid>/schedstat`, or utime + stime of `/proc/<pid>/stat`; exited backends through the postmaster's cutime + cstime), background processes included, and other databases' backends when the server is shared. **The run's backends**: those connected to the cell's database at either reading.",
  "- **worker CPU**: `process.cpuUsage()` of the cell's process (the worker or the inserting client, and the bench's count). **cores busy**: (PostgreSQL + worker CPU) ÷ wall time: 2 would be both cores of a 2-core machine.",
  '- **pg_stat_statements** adds a little CPU to every statement it counts, so a system that sends more statements pays more of it; the figures above include it when the server has it loaded.',
  '- Each cell runs in a process of its own against a database created for it and dropped after it (`bench/harness/driver.mjs`, workload `cost`; the meter is `bench/harness/cost-meter.mjs`).',
];
