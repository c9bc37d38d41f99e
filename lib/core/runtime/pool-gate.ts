import type pg from 'pg';
import { checkout, pgExecutor, type Executor, type StatementNames } from './db.js';
import { QueueError } from '../errors.js';

/** The error of every call made to a queue once `close()` has begun. */
export function closedError(): QueueError {
  return new QueueError('the queue has been closed', 'QUEUE_CLOSED');
}

/** A statement or checkout in flight; `reject` is null once a checkout holds its connection. */
interface Pending {
  reject: ((err: Error) => void) | null;
  /** A caller's call (counted by shut), or a statement the engine sends on its own (the cluster registry). */
  counted: boolean;
}

/**
 * The engine's way to its pool: every statement and checkout goes through here, so `close()` can wait for
 * what is in flight before it ends the pool. pg-pool's `end()` drops requests still waiting for a
 * connection without settling them, so a call made just before close() would otherwise never settle.
 */
export class PoolGate {
  readonly exec: Executor;
  /**
   * Statements the engine sends on its own, not for a caller (the cluster registry's heartbeat): shut() treats them
   * as it treats the others, but does not count them among the calls it reports as left.
   */
  readonly background: Executor;
  private readonly pending = new Set<Pending>();
  private closed = false;
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly pool: pg.Pool,
    planOnce?: StatementNames,
  ) {
    const inner = pgExecutor(pool, planOnce);
    this.exec = { query: (text, values) => this.track(() => inner.query(text, values), true) };
    this.background = { query: (text, values) => this.track(() => inner.query(text, values), false) };
  }

  /**
   * A connection of its own (see `checkout`), in flight from the request until it is released. While it waits
   * for a connection it can be rejected by `shut`; once held, only its release settles it.
   */
  readonly connect = (): Promise<pg.PoolClient> => {
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      const entry: Pending = { reject, counted: true };
      this.pending.add(entry);
      checkout(this.pool).then(
        (client) => {
          if (!this.pending.has(entry)) {
            // Given up on by shut(): nobody will use it.
            client.release();
            return;
          }
          entry.reject = null;
          // pg-pool's release is a closure of this checkout (it never reads `this`), wrapped to settle the entry.
          // eslint-disable-next-line @typescript-eslint/unbound-method
          const release = client.release;
          client.release = (err?: Error | boolean) => {
            release(err);
            this.settle(entry);
          };
          resolve(client);
        },
        (err: unknown) => {
          this.settle(entry);
          reject(err);
        },
      );
    });
  };

  /** Runs `run` as one call in flight; rejected at once when the gate is shut. */
  private track<T>(run: () => Promise<T>, counted: boolean): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { reject, counted };
      this.pending.add(entry);
      run().then(
        (value) => {
          this.settle(entry);
          resolve(value);
        },
        (err: unknown) => {
          this.settle(entry);
          reject(err);
        },
      );
    });
  }

  private settle(entry: Pending): void {
    if (this.pending.delete(entry) && this.pending.size === 0) this.onIdle?.();
  }

  /**
   * Waits up to `timeoutMs` for what is in flight (statements, and connections checked out) to settle, still
   * letting new ones in meanwhile: those of calls made before close() began, and the loops' last hand-backs.
   * Then refuses every new one (QUEUE_CLOSED). With `rejectLeft` (the queue ends this pool next, and what still waits for one of its
   * connections would never get one) the statements still in flight reject with QUEUE_CLOSED; otherwise (a
   * pool the caller owns) they run and settle when they do. A connection still held is its holder's to
   * release. Returns how many callers' statements were left.
   */
  async shut(timeoutMs: number, rejectLeft: boolean): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.pending.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          this.onIdle = resolve;
          timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        });
        clearTimeout(timer);
        this.onIdle = null;
      }
      if (Date.now() >= deadline) break;
      // Nothing in flight may mean a call between two statements: its next one is sent by a continuation that
      // runs before the next turn of the event loop. Closed only once a whole turn has passed with nothing.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.pending.size === 0) break;
    }
    this.closed = true;
    const left = this.waiting();
    if (rejectLeft) {
      for (const p of left) {
        this.pending.delete(p);
        p.reject!(
          new QueueError(
            'the queue closed before this call finished (shutdownTimeoutMs); a statement it had already sent may still have run',
            'QUEUE_CLOSED',
          ),
        );
      }
    }
    return left.filter((p) => p.counted).length;
  }

  /** What is in flight other than connections already held: statements, and checkouts waiting for a connection. */
  private waiting(): Pending[] {
    return [...this.pending].filter((p) => p.reject !== null);
  }
}
