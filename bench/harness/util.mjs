// Small helpers shared by the orchestrator and the workload processes.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** A wall-clock time in ms with sub-ms resolution, comparable between processes on one machine. */
export const now = () => performance.timeOrigin + performance.now();

/** `--name value` and `--flag` arguments; `--name=value` too. */
export function parseArgs(argv = process.argv.slice(2)) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}"`);
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out[a.slice(2)] = argv[++i];
    else out[a.slice(2)] = true;
  }
  return out;
}

/** Resolves after `ms` (pacing a producer; waiting logic uses `until` or `Waiter`). */
export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Polls `condition` (sync or async) every `intervalMs` until it is true; throws once `timeoutMs` has
 * passed, naming `what`.
 */
export async function until(condition, { timeoutMs = 30_000, intervalMs = 5, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(intervalMs);
  }
}

/**
 * Waits for a condition on in-process state without polling: whoever changes the state calls `poke()`,
 * and each waiter re-checks its condition then. A deadline rejects the wait.
 */
export class Waiter {
  #waiters = new Set();

  wait(condition, timeoutMs, what) {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const entry = {
        check: () => {
          if (!condition()) return;
          clearTimeout(entry.timer);
          this.#waiters.delete(entry);
          resolve();
        },
        timer: setTimeout(() => {
          this.#waiters.delete(entry);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs),
      };
      this.#waiters.add(entry);
    });
  }

  poke() {
    for (const w of this.#waiters) w.check();
  }
}

/** The q-quantile (0..1) of numbers, by nearest rank on a sorted copy. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** The median (mean of the middle two for an even count). */
export function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A number for a table: thousands separated above 100, one or two decimals below. */
export function fmt(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * The machine's CPU counters (/proc/stat, Linux; null elsewhere), for machineBusy: every process counts, the
 * database's, the worker's, this bench's own and the kernel's.
 */
export function machineTicks() {
  let line;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  } catch {
    return null;
  }
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are the time no process ran
  return { idle: ticks[3] + ticks[4], total: ticks.reduce((a, b) => a + b, 0) };
}

/** How many of the machine's cores were busy on average between two machineTicks() (null when either is). */
export function machineBusy(before, after) {
  if (!before || !after || after.total === before.total) return null;
  const spent = after.total - before.total;
  return ((spent - (after.idle - before.idle)) / spent) * cpus().length;
}
