// Draining a worker's attempts when its loop stops: wait for the handlers up to a deadline, then abort their signals,
// give them a moment, and hand back the jobs of those still running. Every handler is waited for, one that made the
// stop call included: such a call does not wait for this drain (worker/registry.ts), so the handler goes on.
import type { Attempts } from './attempt/attempt.js';
import type { AttemptRunner } from './attempt/attempt-runner.js';
import type { Completer } from './completer.js';

/** After shutdown aborts the signals, how long handlers get to return before their jobs are handed back. */
const ABORT_GRACE_MS = 250;

export function delay(ms: number): { promise: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return { promise, cancel: () => clearTimeout(timer) };
}

/** What a drain works with: the worker's attempts and the parts that end them. */
export interface DrainParts {
  readonly attempts: Attempts;
  readonly runner: AttemptRunner;
  readonly completer: Completer;
  readonly queue: string;
  readonly log: { log(message: string): void };
  error(err: unknown, context: string): void;
}

/**
 * Waits for the handlers until `deadline`, then aborts their signals, gives them a moment to return (a result is
 * kept; a throw hands the job back), and hands back the jobs of those still running, with no attempt counted.
 * Returns once every attempt is done.
 */
export async function drain(p: DrainParts, deadline: number): Promise<void> {
  const { runner, completer, attempts, queue } = p;
  if (attempts.size > 0) {
    const timeout = delay(Math.max(0, deadline - Date.now()));
    await Promise.race([attempts.allFinished(), timeout.promise]);
    timeout.cancel();
  }
  if (attempts.size > 0) {
    runner.askToStop(attempts.values());
    const grace = delay(ABORT_GRACE_MS);
    await Promise.race([attempts.allFinished(), grace.promise]);
    grace.cancel();
  }
  const unfinished = [...attempts.values()].filter((a) => a.state === 'running');
  if (unfinished.length > 0) {
    for (const a of unfinished) {
      attempts.release(a);
      // A handler still running keeps no connection: close() would wait for it, and a handler that never returns
      // would hold one for good.
      runner.cutOff(a, null, new Error(`job ${a.row.id} was handed back: the worker is shutting down`));
    }
    try {
      const released = await completer.release(unfinished.map((a) => a.row));
      p.log.log(`handed ${released.length} unfinished job(s) of queue "${queue}" back to the queue`);
    } catch (err) {
      p.error(err, `handing unfinished jobs of queue "${queue}" back; they return when their lease runs out`);
    }
  }
  await attempts.allFinished();
}
