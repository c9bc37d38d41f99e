import type pg from 'pg';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';

/**
 * The forced passes of one instance, shared: a caller asked for a pass that starts after its call (its work is of
 * now), and however many ask at once, one pass runs and at most one waits behind it, which every caller that comes
 * meanwhile shares. So a burst of forced calls holds one of the pool's connections at a time, not one each: the
 * pass queued behind takes its connection when it starts.
 */
export class ForcedTurn<T> {
  private running: Promise<T> | null = null;
  private next: Promise<T> | null = null;

  /** A pass of `pass` that starts after this call: the one about to start, or one queued behind the one running. */
  take(pass: () => Promise<T>): Promise<T> {
    if (!this.running) {
      this.running = pass().finally(() => (this.running = null));
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return this.take(pass);
      });
    return this.next;
  }
}

/**
 * How long a forced pass waits for another pass (of any instance, this one's scheduled pass included) to let go of
 * the lock. A maintenance pass holds it while it reaps and a monitor pass while it counts, which takes milliseconds
 * to seconds; the wait holds one of the pool's connections, and close() waits for it.
 */
export const FORCED_LOCK_WAIT_MS = 10_000;

/**
 * Takes a pass's lock with `take` in `client`'s transaction, waiting at most FORCED_LOCK_WAIT_MS (a lock_timeout of
 * this transaction, or the session's when shorter): false when another pass held it that long. The transaction is
 * then aborted: the caller returns, and its COMMIT rolls back. Once taken, the session's lock_timeout applies again.
 */
export async function waitForPassLock(
  client: pg.PoolClient,
  statements: { setLockWait: string; endLockWait: string },
  take: string,
  schema: string,
): Promise<boolean> {
  const [{ was }] = (await client.query<{ was: string }>(statements.setLockWait, [FORCED_LOCK_WAIT_MS])).rows as [{ was: string }];
  try {
    await client.query(take, [schema]);
    await client.query(statements.endLockWait, [was]);
    return true;
  } catch (err) {
    if (sqlState(err) === SQLSTATE.lockNotAvailable) return false;
    throw err;
  }
}
