import type pg from 'pg';
import { checkout, pgExecutor, type Executor } from './db.js';
import { QueueError } from './errors.js';

/** The error of every call made to a queue once `close()` has begun. */
export function closedError(): QueueError {
  return new QueueError('the queue has been closed', 'QUEUE_CLOSED');
}

/** A statement or checkout in flight; `reject` is null once a checkout holds its connection. */
interface Pending {
  reject: ((err: Error) => void) | null;
}

/**
 * The engine's way to its pool: every statement and checkout goes through here, so `close()` can wait for
 * what is in flight before it ends the pool. pg-pool's `end()` drops requests still waiting for a
 * connection without settling them, so a call made just before close() would otherwise never settle.
 * After `shut()` nothing new starts (QUEUE_CLOSED); what had started runs to its end, and whatever is
 * still waiting when shut's deadline passes is rejected with QUEUE_CLOSED.
 */
export class PoolGate {
  readonly exec: Executor;
  private readonly pending = new Set<Pending>();
  private closed = false;
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly pool: pg.Pool,
    planOnce?: ReadonlySet<string>,
  ) {
    const inner = pgExecutor(pool, planOnce);
    this.exec = { query: (text, values) => this.track(() => inner.query(text, values)) };
  }

  /**
   * A connection of its own (see `checkout`), in flight from the request until it is released. While it waits
   * for a connection it can be rejected by `shut`; once held, only its release settles it.
   */
  readonly connect = (): Promise<pg.PoolClient> => {
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      const entry: Pending = { reject };
      this.pending.add(entry);
      checkout(this.pool).then(
        (client) => {
          if (!this.pending.has(entry)) {
            // Given up on by shut(): nobody will use it.
            client.release();
            return;
          }
          entry.reject = null;
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
  private track<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { reject };
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
   * Refuses every new statement and checkout, and waits up to `timeoutMs` for those in flight to settle;
   * any still waiting then are rejected with QUEUE_CLOSED (a connection held past it is its holder's to
   * release). Returns how many were rejected.
   */
  async shut(timeoutMs: number): Promise<number> {
    this.closed = true;
    if (this.pending.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.onIdle = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
      this.onIdle = null;
    }
    const abandoned = [...this.pending].filter((p) => p.reject !== null);
    this.pending.clear();
    for (const p of abandoned) {
      p.reject!(new QueueError('the queue closed before this call finished (shutdownTimeoutMs); a statement it had already sent may still have run', 'QUEUE_CLOSED'));
    }
    return abandoned.length;
  }
}
