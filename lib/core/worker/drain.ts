// Draining a worker's attempts when its loop stops: wait for the handlers up to a deadline, then abort their signals,
// give them a moment, and hand back the jobs of those still running. An attempt whose handler is awaiting a stop
// call (offWork, stopWorking, stopWorkers from inside the handler, loop-frame.ts) is left out: waiting for it would be
// waiting for the stop itself. It goes on under its lease and completes once the stop has returned to it.
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
  /** Handler calls that have not returned (one per running attempt; one per batch with `batch`). */
  runningCalls(): number;
}

/**
 * A worker's drain. Which of its handlers await a stop call is not known, only how many such calls are in progress
 * (`stopCalls`, each made by a handler of this loop, found on the call's stack): each of them holds a handler call
 * that cannot return before the stop does. So the drain is done once every attempt left is running and no more
 * handler calls run than there are such stop calls: those are the callers'.
 */
export class Drain {
  /** Stop calls in progress made by this loop's handlers. */
  private stopCalls = 0;
  /** Drains waiting now, told when `stopCalls` changes. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly p: DrainParts) {}

  /** A handler of this loop began (+1) or ended (-1) a stop call. */
  handlerStopCall(delta: 1 | -1): void {
    this.stopCalls += delta;
    for (const wake of this.waiting) wake();
  }

  /** Attempts left, if the drain must still wait for some; null when it is done. */
  private left(): Attempt[] | null {
    const left = [...this.p.attempts.values()];
    if (left.length === 0) return null;
    if (this.stopCalls > 0 && this.p.runningCalls() <= this.stopCalls && left.every((a) => a.state === 'running')) return null;
    return left;
  }

  /** Waits until the drain is done (true), or `until` settles first (false). */
  private async othersFinished(until: Promise<void> | null): Promise<boolean> {
    for (;;) {
      const left = this.left();
      if (left === null) return true;
      let wake!: () => void;
      const changed = new Promise<'changed'>((r) => (wake = () => r('changed')));
      this.waiting.add(wake);
      // with no stop call from a handler, every attempt is waited for (one promise); otherwise each end counts
      const ends = left.map((a) => a.finished);
      const some = (this.stopCalls === 0 ? Promise.allSettled(ends) : Promise.race(ends)).then(() => 'done' as const);
      const outcome = await Promise.race(until ? [some, changed, until.then(() => 'timeout' as const)] : [some, changed]);
      this.waiting.delete(wake);
      if (outcome === 'timeout') return false;
    }
  }

  /** The attempts whose handlers still run, past the deadline: a caller's among them cannot be told apart. */
  private running(): Attempt[] {
    return [...this.p.attempts.values()].filter((a) => a.state === 'running');
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
      runner.askToStop(this.running());
      const grace = delay(ABORT_GRACE_MS);
      await this.othersFinished(grace.promise);
      grace.cancel();
    }
    const unfinished = this.left() === null ? [] : this.running();
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
