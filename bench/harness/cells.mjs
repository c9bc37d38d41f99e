// One cell of a run (a system, a workload, a repetition) in a child process: bench/workloads/<file> against the
// database at `url`, killed with everything it started once `timeoutMs` has passed. The child prints one JSON line;
// a child that fails, prints nothing or times out becomes { ok: false, short, error }. Used by bench/run.mjs and
// bench/cost.mjs.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

let current = null; // the running child, for killRunningCell()

/** Runs one cell; never throws for the child's failures. */
export function runCell({ file, url, timeoutMs, args }) {
  const childArgs = [
    join(BENCH_DIR, 'workloads', file),
    '--db',
    url,
    '--deadline-ms',
    String(Math.round(Math.max(timeoutMs - 15_000, timeoutMs * 0.75))),
    ...args,
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

/** Kills the running cell's process group, if any (on SIGINT). */
export function killRunningCell() {
  if (!current) return;
  try {
    process.kill(-current.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/**
 * Ctrl-C or SIGTERM during a run: kills the running cell, drops its database (`runningDb()`), runs `cleanup` and
 * exits 130, once. Used by bench/run.mjs and bench/cost.mjs.
 */
export function stopOnSignal({ log, dbs, runningDb, cleanup }) {
  let stopping = false;
  const interrupted = async (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    killRunningCell();
    const db = runningDb();
    if (db) await dbs.drop(db).catch(() => undefined);
    await cleanup();
    process.exit(130);
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
}
