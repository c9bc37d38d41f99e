// failUnworkedAfterSeconds: the part of the maintenance pass that fails the ready jobs of a queue no live worker loop
// of the cluster has worked for that long, each as an attempt (retried, then failed for good and dead-lettered), so
// that a job whose queue nothing handles ends visible instead of waiting unseen (sql/unworked.ts). Off unless a queue
// asks for it: an instance that only sends, and workers that start later, are normal.
import type pg from 'pg';
import { passStatement } from './retention.js';
import type { Statements } from '../sql/index.js';

/** Jobs one statement fails at most. */
export const UNWORKED_BATCH = 1_000;

/** Statements per queue and pass at most: a larger backlog is failed over the next passes. */
const UNWORKED_BATCHES = 10;

/** Longest one statement may run before PostgreSQL cancels it (the queue's part of the pass then stops). */
const UNWORKED_STATEMENT_TIMEOUT_MS = 10_000;

/** A job a pass failed: retried (in `retry_in` seconds) or failed for good (into `dead_letter`, if any). */
export interface UnworkedRow {
  id: string;
  queue: string;
  state: string;
  retry_in: number | null;
  dead_letter: string | null;
}

/** One unworked queue a pass acted on: how long it has had no worker, its setting, and the jobs it failed. */
export interface UnworkedQueue {
  queue: string;
  unworkedSeconds: number;
  afterSeconds: number;
  /** What the failed jobs record: UnworkedQueueError with this message. */
  message: string;
  rows: UnworkedRow[];
}

/** What the part needs of the engine. */
export interface UnworkedContext {
  readonly statements: Statements;
  readonly channel: string;
  /** Reports a part that failed (the other queues still run). */
  error(err: unknown, context: string): void;
}

export class UnworkedQueues {
  constructor(private readonly ctx: UnworkedContext) {}

  /** Marks the queues found with no live worker and fails the ready jobs of those unworked past their setting. */
  async run(connect: () => Promise<pg.PoolClient>, stopping: () => boolean): Promise<UnworkedQueue[]> {
    const { statements, channel } = this.ctx;
    let due: { name: string; after: number; unworked_seconds: number; pass_began: Date }[];
    try {
      due = await this.batch(connect, statements.watchUnworkedQueues, []);
    } catch (err) {
      this.ctx.error(err, 'failUnworkedAfterSeconds: finding the queues no worker works');
      return [];
    }
    const acted: UnworkedQueue[] = [];
    for (const q of due) {
      const message =
        `queue "${q.name}" has had no live worker for ${Math.round(q.unworked_seconds)} s (its failUnworkedAfterSeconds is ` +
        `${q.after}): no worker loop of any instance takes its jobs`;
      const done: UnworkedQueue = { queue: q.name, unworkedSeconds: q.unworked_seconds, afterSeconds: q.after, message, rows: [] };
      try {
        for (let i = 0; i < UNWORKED_BATCHES && !stopping(); i++) {
          const rows = await this.batch<UnworkedRow>(connect, statements.failUnworkedJobs, [
            q.name,
            UNWORKED_BATCH,
            channel,
            message,
            q.pass_began,
          ]);
          done.rows.push(...rows);
          if (rows.length < UNWORKED_BATCH) break;
        }
      } catch (err) {
        this.ctx.error(err, `failUnworkedAfterSeconds: failing the ready jobs of queue "${q.name}"`);
      }
      if (done.rows.length > 0) acted.push(done);
    }
    return acted;
  }

  private batch<R extends pg.QueryResultRow>(connect: () => Promise<pg.PoolClient>, text: string, values: unknown[]): Promise<R[]> {
    return passStatement<R>(connect, this.ctx.statements, UNWORKED_STATEMENT_TIMEOUT_MS, text, values);
  }
}
