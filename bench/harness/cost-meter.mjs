// What one phase of a bench/cost.mjs cell costs, read inside the workload's child around the phase: the WAL it wrote
// (pg_current_wal_lsn() before and after), the server's CPU time and the share of the run's own backends, this
// process's CPU time (process.cpuUsage()) and the wall time; with pg_stat_statements the run database's statements,
// and with pg_walinspect the WAL by record type.
//
// The server's CPU time is read from /proc: the postmaster and every process it started (backends, walwriter,
// checkpointer, autovacuum…). bench/cost.mjs finds the postmaster once (findPostmaster) and hands its pid to the
// cells, so the server must run on this machine for the CPU figures.
//
// The meter has a connection of its own to the run's database. Its statements carry MARK and are left out of the
// statement figures; it reads before the phase starts and after it ends, so its own work stays outside the phase.
// MARK goes after the first keyword: pg_stat_statements keeps a statement's text from its first token, so a comment
// in front would be dropped, one inside is kept.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { now, until } from './util.mjs';

const MARK = '/* bench cost meter */';

/**
 * Opens the meter for a cell. `postmasterPid`: the server's postmaster when it runs here (else no CPU figures);
 * `statements` / `walinspect`: the server offers pg_stat_statements (preloaded) / pg_walinspect, and the meter
 * creates the extension in the run's database (its own, dropped after the cell).
 */
export async function openMeter({ url, postmasterPid, statements, walinspect }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const q = (text, values) =>
    client.query(
      text.replace(/^\w+/, (word) => `${word} ${MARK}`),
      values,
    );
  const notes = [];
  const extension = async (name, wanted) => {
    if (!wanted) return false;
    try {
      await q(`CREATE EXTENSION IF NOT EXISTS ${name}`);
      return true;
    } catch (err) {
      notes.push(`${name}: ${err.message}`);
      return false;
    }
  };
  const withStatements = await extension('pg_stat_statements', statements);
  const withWalinspect = await extension('pg_walinspect', walinspect);

  async function read() {
    const { rows } = await q(
      `SELECT pg_current_wal_lsn()::text AS lsn,
              array(SELECT pid FROM pg_stat_activity WHERE datname = current_database())::int[] AS pids`,
    );
    return { lsn: rows[0].lsn, pids: rows[0].pids, cpu: postmasterPid ? serverCpu(postmasterPid) : null };
  }

  async function phaseStatements() {
    const { rows } = await q(
      `SELECT query, calls::float8, total_exec_time::float8 AS total_ms, rows::float8, wal_bytes::float8, wal_fpi::float8
       FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel
         AND strpos(query, $1) = 0
       ORDER BY total_exec_time DESC`,
      [MARK],
    );
    return rows;
  }

  /** The server's and the run's backends' CPU between two readings, in µs. */
  function cpuBetween(start, end) {
    if (!start.cpu || !end.cpu) return { serverCpuUs: null, backendsCpuUs: null, backendsGone: 0 };
    let backends = 0;
    let gone = 0;
    for (const pid of new Set([...start.pids, ...end.pids])) {
      const after = end.cpu.byPid.get(pid);
      // a backend that ended during the phase: its time is in the server's total, not in the backends' share
      if (after === undefined) gone++;
      else backends += after - (start.cpu.byPid.get(pid) ?? 0);
    }
    return { serverCpuUs: (end.cpu.totalNs - start.cpu.totalNs) / 1000, backendsCpuUs: backends / 1000, backendsGone: gone };
  }

  return {
    /** Extensions asked for that could not be created, and why. */
    notes,
    statements: withStatements,
    walinspect: withWalinspect,

    /**
     * A CHECKPOINT before the first phase: a page's first change after a checkpoint writes the whole page to the WAL,
     * so without it a timed checkpoint landing in some cell's phase would make that cell's WAL figure several times
     * the others'. Returns null, or why it could not be done.
     */
    async checkpoint() {
      try {
        await q('CHECKPOINT');
        return null;
      } catch (err) {
        return err.message;
      }
    },

    /** Runs `body` as a phase and returns what it cost. */
    async measure(body) {
      if (withStatements)
        await q(`SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`);
      const start = await read();
      const cpu0 = process.cpuUsage();
      const t0 = now();
      await body();
      const ms = now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const end = await read();
      const { rows } = await q('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS bytes', [end.lsn, start.lsn]);
      return {
        ms,
        workerCpuUs: cpu.user + cpu.system,
        walBytes: rows[0].bytes,
        walFrom: start.lsn,
        walTo: end.lsn,
        ...cpuBetween(start, end),
        statements: withStatements ? await phaseStatements() : null,
      };
    },

    /**
     * The WAL between two positions by record type (pg_walinspect's pg_get_wal_stats), once the server has flushed it
     * (PostgreSQL 15 refuses a range past the flushed position). Read after the cell's phases, so it costs none of them.
     */
    async walRecords(from, to) {
      if (!withWalinspect) return null;
      await until(async () => (await q('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok', [to])).rows[0].ok, {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: 'the WAL to be flushed',
      });
      const { rows } = await q(
        `SELECT "resource_manager/record_type" AS type, count::float8, record_size::float8, fpi_size::float8
         FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0`,
        [from, to],
      );
      return rows;
    },

    close: () => client.end(),
  };
}

let ticks = null;
/** /proc/<pid>/stat counts CPU time in clock ticks (USER_HZ, 100 on Linux): 10 ms each. */
function ticksPerSecond() {
  if (ticks === null) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** The fields of /proc/<pid>/stat that matter here (proc(5)); throws when the process is gone. */
function stat(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // comm may hold spaces and parentheses: the fields start after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i) => Number(f[i]);
  return {
    comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')),
    ppid: n(1),
    ownTicks: n(11) + n(12), // utime + stime
    childTicks: n(13) + n(14), // cutime + cstime: children that exited and were waited for
    startTicks: n(19), // since boot
  };
}

/**
 * A live process's own CPU time in ns. /proc/<pid>/schedstat's first field is the same time in ns; utime + stime
 * from /proc/<pid>/stat (whole ticks, 10 ms) is the fallback. A backend's share of a one-second phase is a few
 * ticks, so the ticks' rounding would be most of it.
 */
function ownNs(pid, s) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return (s.ownTicks * 1e9) / ticksPerSecond();
  }
}

function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no CONFIG_PROC_CHILDREN: every process's parent, from its stat
    const out = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (stat(name).ppid === pid) out.push(Number(name));
      } catch {
        // gone
      }
    }
    return out;
  }
}

/**
 * The server's CPU time in ns: the postmaster's own, its exited children's (cutime + cstime, counted when they are
 * waited for), and each live child's (byPid). A child that exits between two readings moves from its own line to the
 * postmaster's cutime, so the difference of two totals stays the time spent between them.
 */
function serverCpu(postmaster) {
  const s = stat(postmaster);
  let totalNs = ownNs(postmaster, s) + (s.childTicks * 1e9) / ticksPerSecond();
  const byPid = new Map();
  for (const pid of childrenOf(postmaster)) {
    try {
      const ns = ownNs(pid, stat(pid));
      byPid.set(pid, ns);
      totalNs += ns;
    } catch {
      // exited after the listing; its time reaches the postmaster's cutime once it is waited for
    }
  }
  return { totalNs, byPid };
}

/** When a process started, in seconds since the epoch. */
function startedAt(pid) {
  const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))[1]);
  return btime + stat(pid).startTicks / ticksPerSecond();
}

/**
 * The postmaster's pid when the server that `query` talks to runs on this machine: the pid in postmaster.pid in its
 * data directory (readable by its owner or root), else a process named postgres (or postmaster) whose parent is not
 * one; either way it must have started within 3 s of pg_postmaster_start_time(). Returns { pid, how } or
 * { pid: null, reason }.
 */
export async function findPostmaster(query) {
  if (!existsSync('/proc/stat')) return { pid: null, reason: 'no /proc on this machine (not Linux)' };
  // pg_settings shows data_directory only to superusers and pg_read_all_settings; null otherwise
  const { rows } = await query(
    `SELECT extract(epoch FROM pg_postmaster_start_time())::float8 AS started,
            (SELECT setting FROM pg_settings WHERE name = 'data_directory') AS dir`,
  );
  const { started, dir } = rows[0];
  const near = (pid) => {
    try {
      return Math.abs(startedAt(pid) - started) < 3;
    } catch {
      return false;
    }
  };
  if (dir) {
    try {
      const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (near(pid)) return { pid, how: `${join(dir, 'postmaster.pid')}` };
    } catch {
      // not readable by this user, or not on this machine
    }
  }
  const isServer = (s) => s.comm === 'postgres' || s.comm === 'postmaster';
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const s = stat(name);
      if (!isServer(s) || !near(Number(name))) continue;
      let parentIsServer = false;
      try {
        parentIsServer = isServer(stat(s.ppid));
      } catch {
        // no parent to read
      }
      if (!parentIsServer) found.push(Number(name));
    } catch {
      // gone
    }
  }
  if (found.length === 1) return { pid: found[0], how: 'the postgres process on this machine that started with the server' };
  return {
    pid: null,
    reason: found.length
      ? `${found.length} postgres processes here started with the server: which one is it cannot be told`
      : 'no process on this machine started when the server did (pg_postmaster_start_time()): it runs elsewhere',
  };
}
