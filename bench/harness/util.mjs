// Small helpers shared by the orchestrator and the workload processes.

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
