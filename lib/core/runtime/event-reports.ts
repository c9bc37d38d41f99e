// How the engine's reports reach its users: errors and warnings to PgQueue's listeners (or to the logger without
// one), job events to their listeners, never throwing into the engine's own work; and the console, where they go
// when no logger was given and when the logger (or a listener) itself threw.
import type { EventEmitter } from 'node:events';
import { asWarning, type EngineEvents, type QueueEvents } from '../events.js';
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

/**
 * EngineEvents over the engine's emitter: errors and warnings go to their listeners, or to the logger without one.
 * Never throws: reports come from timers, from the LISTEN connection's handlers and from the middle of a claim,
 * where a listener's or a logger's throw would end the process or strand claimed jobs; what throws is logged, as
 * a last resort, to the console.
 */
export function emitterEvents(emitter: EventEmitter<QueueEvents>, log: QueueLogger): EngineEvents {
  const error = (err: unknown, context: string): void => {
    const e = err instanceof Error ? err : new Error(String(err));
    try {
      if (emitter.listenerCount('error') > 0) emitter.emit('error', Object.assign(e, { context }));
      else log.error(`${context}: ${e.message}`, e.stack);
    } catch (thrown) {
      lastResort(`an error (${context}: ${e.message}) could not be reported`, thrown);
    }
  };
  return {
    warning: (given) => {
      const warning = asWarning(given);
      try {
        if (emitter.listenerCount('warning') > 0) emitter.emit('warning', warning);
        else log.warn(warning.message);
      } catch (err) {
        lastResort(`a warning ("${warning.message}") could not be reported`, err);
      }
    },
    error,
    listens: (name) => emitter.listenerCount(name) > 0,
    job: (name, ...payload) => {
      // a listener that throws must not break the engine's work that emitted the event
      try {
        (emitter.emit as (n: string, ...a: unknown[]) => boolean)(name, ...payload);
      } catch (err) {
        error(err, `a "${name}" listener`);
      }
    },
  };
}
