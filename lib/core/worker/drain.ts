// Draining a worker's attempts when its loop stops: wait for the handlers up to a deadline, then abort their signals,
// give them a moment, and hand back the jobs of those still running. An attempt whose handler is awaiting a stop
// call (offWork, stopWorking, stopWorkers from inside the handler) is left out: waiting for it would be waiting for
// the stop itself. It goes on under its lease and completes once the stop has returned to it.
import type { Attempt, Attempts } from './attempt.js';
import type { AttemptRunner } from './attempt-runner.js';
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

/** A worker's drain: every attempt but those whose handler awaits a stop call (Attempt.stopCalls). */
export class Drain {
  /** Drains waiting now, told when an attempt's handler begins or ends a stop call. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly p: DrainParts) {}

  /** An attempt's handler began or ended a stop call: what a drain waits for changed. */
  exemptionsChanged(): void {
    for (const wake of this.waiting) wake();
  }

  /** The attempts a drain waits for. */
  private others(): Attempt[] {
    return [...this.p.attempts.values()].filter((a) => a.stopCalls === 0);
  }

  /** Waits until every attempt but the exempt ones is done (true), or `until` settles first (false). */
  private async othersFinished(until: Promise<void> | null): Promise<boolean> {
    for (;;) {
      const others = this.others();
      if (others.length === 0) return true;
      let wake!: () => void;
      const changed = new Promise<'changed'>((r) => (wake = () => r('changed')));
      this.waiting.add(wake);
      const all = Promise.allSettled(others.map((a) => a.finished)).then(() => 'done' as const);
      const outcome = await Promise.race(until ? [all, changed, until.then(() => 'timeout' as const)] : [all, changed]);
      this.waiting.delete(wake);
      if (outcome === 'timeout') return false;
    }
  }

  /**
   * Waits for the handlers until `deadline`, then aborts their signals, gives them a moment to return (a result is
   * kept; a throw hands the job back), and hands back the jobs of those still running, with no attempt counted.
   */
  async run(deadline: number): Promise<void> {
    const { runner, completer, attempts, queue } = this.p;
    const timeout = delay(Math.max(0, deadline - Date.now()));
    const drained = await this.othersFinished(timeout.promise);
    timeout.cancel();
    if (!drained) {
      runner.askToStop(this.others());
      const grace = delay(ABORT_GRACE_MS);
      await this.othersFinished(grace.promise);
      grace.cancel();
    }
    const unfinished = this.others().filter((a) => a.state === 'running');
    if (unfinished.length > 0) {
      for (const a of unfinished) {
        attempts.release(a);
        // A handler still running keeps no connection: close() would wait for it, and a handler that never returns
        // would hold one for good.
        runner.cutOff(a, null, new Error(`job ${a.row.id} was handed back: the worker is shutting down`));
      }
      try {
        const released = await completer.release(unfinished.map((a) => a.row));
        this.p.log.log(`handed ${released.length} unfinished job(s) of queue "${queue}" back to the queue`);
      } catch (err) {
        this.p.error(err, `handing unfinished jobs of queue "${queue}" back; they return when their lease runs out`);
      }
    }
    await this.othersFinished(null);
  }
}
