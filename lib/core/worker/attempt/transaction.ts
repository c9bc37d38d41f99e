import type { PoolClient } from 'pg';
import { QueueError } from '../../errors.js';
import { beginTransaction, boundTransaction, commitTransaction, rollbackTransaction } from '../../sql/transaction.js';

/**
 * The transaction of one transactional handler's attempt, on a connection of its own. It is ended
 * exactly once, by whichever comes first: the commit (with the job's completion inside it), a rollback, or
 * `abandon`. Every path that leaves the attempt calls `rollback()` (a no-op once ended), so neither a failed
 * COMMIT, a connection that died mid-handler, nor a lease that ran out while the handler ran can release the
 * connection twice or keep it.
 *
 * A connection that could not end its transaction (ROLLBACK or COMMIT failed) is released with the error,
 * so the pool discards it; PostgreSQL rolls back the transaction of a session that ends.
 */
export class JobTransaction {
  private ended = false;

  private constructor(
    /** The handler's `job.db`; its `release` throws: the connection goes back when the attempt ends. */
    readonly client: PoolClient,
    /** The checkout's own release, kept apart: `client.release` is pg-pool's property, set anew at each hand-over. */
    private readonly release: (err?: Error | boolean) => void,
  ) {}

  /** Checks a connection out and begins; on failure the connection is released and the error thrown. */
  static async begin(connect: () => Promise<PoolClient>): Promise<JobTransaction> {
    const client = await connect();
    // pg-pool's release is a closure of this checkout (it never reads `this`), kept to release it exactly once.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const release = client.release;
    try {
      await client.query(beginTransaction);
    } catch (err) {
      release(err as Error);
      throw err;
    }
    client.release = () => {
      throw new QueueError(
        'job.db belongs to the job: the queue commits or rolls back its transaction and releases it when the handler returns',
        'JOB_DB_RELEASE',
      );
    };
    return new JobTransaction(client, release);
  }

  /**
   * Runs `complete` (the fenced completion, which returns how many jobs it changed) in the transaction and
   * commits when it changed one. From here on only the engine sends statements, so the transaction is bounded
   * first (see boundTransaction): a process that stalls before its COMMIT loses the job instead of holding it.
   * Returns false when it changed none (the attempt no longer holds the job): the transaction is then rolled
   * back, the handler's writes with it. Throws when the completion or the COMMIT fails: the transaction is
   * rolled back (by this, or by PostgreSQL when the connection died). A COMMIT that failed because its
   * connection died may have committed before it did; the attempt's fenced failure, written next, then finds
   * the job completed and changes nothing.
   */
  async commitWith(complete: (client: PoolClient) => Promise<number>): Promise<boolean> {
    if (this.ended) throw new QueueError('the job transaction has already ended', 'JOB_TRANSACTION_ENDED');
    let changed: number;
    try {
      await this.client.query(boundTransaction);
      changed = await complete(this.client);
    } catch (err) {
      await this.rollback();
      throw err;
    }
    if (changed === 0) {
      await this.rollback();
      return false;
    }
    this.ended = true;
    try {
      await this.client.query(commitTransaction);
    } catch (err) {
      this.release(err as Error);
      throw err;
    }
    this.release();
    return true;
  }

  /** Rolls back and releases the connection; does nothing once the transaction has ended. Never throws. */
  async rollback(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      await this.client.query(rollbackTransaction);
    } catch (err) {
      this.release(err as Error);
      return;
    }
    this.release();
  }

  /**
   * Gives the connection up now, while the handler may still run (its attempt was handed back at shutdown, or
   * outlived its lease): the pool discards it and closes it, PostgreSQL rolls the transaction back, and the
   * handler's next statement fails. Its server session is ended (`endSession`, on another connection), so a
   * statement in flight stops and its locks go. A handler that never returns then holds no connection, and
   * close() does not wait for it. Does nothing once the transaction has ended.
   */
  abandon(reason: Error, endSession: (processId: number) => Promise<unknown>): void {
    if (this.ended) return;
    this.ended = true;
    const processId = (this.client as PoolClient & { processID?: number }).processID;
    this.release(reason);
    // The session goes too: a statement in flight would otherwise run on, holding its locks. Best effort: a
    // connection that is already gone has nothing left to end.
    if (typeof processId === 'number') endSession(processId).catch(() => undefined);
  }
}
