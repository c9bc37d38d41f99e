// Where the engine's reports go when no logger was given, and when the logger (or a listener) itself threw.
import type { QueueLogger } from '../types.js';

/** Where a report goes when its listener or the logger threw. */
export function lastResort(what: string, err: unknown): void {
  try {
    console.error(`[pgqueue] ${what}: ${err instanceof Error ? err.message : String(err)}`);
  } catch {
    // nothing is left to tell
  }
}

/** The logger of an engine made with none (outside Nest). */
export const consoleLogger: QueueLogger = {
  log: (m) => console.log(`[pgqueue] ${m}`),
  warn: (m) => console.warn(`[pgqueue] ${m}`),
  error: (m, stack) => console.error(`[pgqueue] ${m}${stack ? `\n${stack}` : ''}`),
};
