// How many of the engine's connections the operators' screens and scripts may hold: the dashboard's job view and the
// admin API run through one gate per engine, so that a flood of page loads or a script's thousand parallel calls
// waits its turn instead of taking the connections the workers claim and settle on.
import { OperatorBusyError } from '../errors.js';

/** At most `max` calls run at once; the next ones wait their turn, each at most `timeoutMs`, at most `maxWaiting` of them. */
export class ReadGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly max: number,
    readonly timeoutMs: number,
    readonly maxWaiting: number,
  ) {}

  /** Runs `fn` once a turn is free; OperatorBusyError when none frees within the timeout, or too many wait. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.enter();
    try {
      return await fn();
    } finally {
      this.leave();
    }
  }

  private enter(): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new OperatorBusyError(0, this.running));
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const go = () => {
        clearTimeout(timer);
        this.running++;
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new OperatorBusyError(Date.now() - started, this.running));
      }, this.timeoutMs);
      timer.unref();
      this.waiting.push(go);
    });
  }

  private leave(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

/** How long an operator's call waits for its turn before it is answered 503. */
export const OPERATOR_WAIT_MS = 5_000;

const gates = new WeakMap<object, ReadGate>();

/**
 * The operators' gate of one engine (`owner`: its runtime): a quarter of its pool, rounded up (`poolMax`: 10 by
 * default, so 3 at once), each waiting at most OPERATOR_WAIT_MS, at most 100 per turn waiting.
 */
export function operatorGate(owner: object, poolMax: number): ReadGate {
  let gate = gates.get(owner);
  if (!gate) {
    const max = Math.max(1, Math.ceil(poolMax / 4));
    gate = new ReadGate(max, OPERATOR_WAIT_MS, max * 100);
    gates.set(owner, gate);
  }
  return gate;
}
