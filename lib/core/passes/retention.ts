// Retention: the part of the maintenance pass that keeps the jobs table bounded. Finished jobs past their deletion
// time are deleted, jobs that waited unstarted past their retention fail (see sql/retention.ts). Each batch is a
// transaction of its own with a bounded statement time, so a pass never holds rows, nor the vacuum horizon, for
// longer than one batch; a pass that finds more than it may do in its time leaves the rest to the next one. The
// two parts fail apart: an error in one is reported and the other still runs.
import type pg from 'pg';
import { inTransaction } from '../runtime/db.js';
import type { Statements } from '../sql/index.js';

/** Finished jobs one delete removes at most: a few milliseconds each (bench/soak.mjs prints a pass's cost). */
export const RETENTION_BATCH = 1_000;

/** Jobs one expiry statement walks (reads, and fails those past their retention). */
export const EXPIRY_WALK = 5_000;

/** Longest a batch may run before PostgreSQL cancels it (its part of the pass then stops until the next pass). */
export const RETENTION_STATEMENT_TIMEOUT_MS = 10_000;

/** What a retention pass did. */
export interface RetentionResult {
  /** Finished jobs deleted. */
  deleted: number;
  /** Jobs that waited past their retention, now failed. */
  expired: { id: string; queue: string }[];
  /** True when the deletes stopped with finished jobs left past their time (its time ran out, or the engine is closing). */
  more: boolean;
}

/** What retention needs of the engine. */
export interface RetentionContext {
  readonly statements: Statements;
  /** How long a pass may go on starting batches, in milliseconds. */
  readonly budgetMs: number;
  error(err: unknown, context: string): void;
}

interface WalkRow {
  expired: { id: string; queue: string }[];
  walked: number;
  last_queue: string | null;
  last_id: string | null;
}

/** One instance's retention work; the maintenance pass decides when it runs. It keeps where the expiry walk is. */
export class Retention {
  private cursor: [string, string] = ['', '0'];

  constructor(private readonly ctx: RetentionContext) {}

  /**
   * Deletes finished jobs while batches are full, then walks the table for expired jobs, from where the last pass
   * left the walk to the end of the table (the next pass starts over), until the budget is spent or `stopping()`.
   */
  async run(connect: () => Promise<pg.PoolClient>, stopping: () => boolean): Promise<RetentionResult> {
    const started = Date.now();
    const deadline = started + this.ctx.budgetMs;
    const more = () => Date.now() < deadline && !stopping();
    // the deletes get half the time at most, so that a backlog of them (the first passes on a large table) never
    // keeps the expiry from walking
    const moreDeletes = () => Date.now() < started + this.ctx.budgetMs / 2 && !stopping();
    const result: RetentionResult = { deleted: 0, expired: [], more: false };
    try {
      for (;;) {
        const [row] = await this.batch<{ deleted: number }>(connect, this.ctx.statements.deleteFinishedJobs, [RETENTION_BATCH]);
        result.deleted += row?.deleted ?? 0;
        if ((row?.deleted ?? 0) < RETENTION_BATCH) break;
        if (!moreDeletes()) {
          result.more = true;
          break;
        }
      }
    } catch (err) {
      this.ctx.error(err, 'retention: deleting finished jobs');
    }
    // The walk goes on from where the last pass left it; it ends at the end of the table (the next one starts over).
    while (more()) {
      const [queue, id] = this.cursor;
      try {
        const [row] = await this.batch<WalkRow>(connect, this.ctx.statements.expireWaitingJobs, [EXPIRY_WALK, queue, id]);
        result.expired.push(...(row?.expired ?? []));
        const done = !row || row.walked < EXPIRY_WALK || row.last_queue === null || row.last_id === null;
        this.cursor = done ? ['', '0'] : [row.last_queue!, row.last_id!];
        if (done) return result;
      } catch (err) {
        this.ctx.error(err, `retention: expiring waiting jobs after job ${id} of queue "${queue}"`);
        // Past the slice that failed, so that a row it cannot change holds back no other; the next walk tries it again.
        const end = await this.batch<{ last_queue: string; last_id: string }>(connect, this.ctx.statements.walkEnd, [
          EXPIRY_WALK,
          queue,
          id,
        ]).catch(() => null);
        // the slice's end unknown (the database away): the cursor stays, and the next pass tries the slice again
        if (end !== null) this.cursor = end[0] ? [end[0].last_queue, end[0].last_id] : ['', '0'];
        return result;
      }
    }
    // the walk goes on at the next pass: that is its normal pace on a large table, not a backlog
    return result;
  }

  private batch<R extends pg.QueryResultRow>(connect: () => Promise<pg.PoolClient>, text: string, values: unknown[]): Promise<R[]> {
    return passStatement<R>(connect, this.ctx.statements, RETENTION_STATEMENT_TIMEOUT_MS, text, values);
  }
}

/**
 * One statement of a pass (retention's batches, the unworked queues' part, the monitor's pruning) in a transaction of
 * its own, cancelled past `timeoutMs` and without JIT (setPassSettings): its rows.
 */
export function passStatement<R extends pg.QueryResultRow>(
  connect: () => Promise<pg.PoolClient>,
  statements: Statements,
  timeoutMs: number,
  text: string,
  values: unknown[],
): Promise<R[]> {
  return inTransaction(connect, async (client) => {
    await client.query(statements.setPassSettings, [timeoutMs]);
    return (await client.query<R>(text, values)).rows;
  });
}
