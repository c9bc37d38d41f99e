// Retention: the part of the maintenance pass that keeps the jobs table bounded. Finished jobs past their deletion
// time are deleted, jobs that waited unstarted past their retention fail (see sql/retention.ts). Each batch is a
// transaction of its own with a bounded statement time, so a pass never holds rows, nor the vacuum horizon, for
// longer than one batch; a pass that finds more than it may do in its time leaves the rest to the next one.
import type pg from 'pg';
import { inTransaction } from './db.js';
import type { Statements } from './sql/index.js';

/** Rows per batch: a batch of 1,000 deletes costs a few milliseconds (bench/soak.mjs prints a pass's cost). */
export const RETENTION_BATCH = 1_000;

/** Longest a batch may run before PostgreSQL cancels it (and the pass stops until the next one). */
export const RETENTION_STATEMENT_TIMEOUT_MS = 10_000;

/** What a retention pass did. */
export interface RetentionResult {
  /** Finished jobs deleted. */
  deleted: number;
  /** Jobs that waited past their retention, now failed. */
  expired: { id: string; queue: string }[];
  /** True when the pass stopped with rows left (its time ran out, or the engine is closing). */
  more: boolean;
}

/** One instance's retention work; the maintenance pass decides when it runs. */
export class Retention {
  constructor(
    private readonly statements: Statements,
    /** How long a pass may go on starting batches, in milliseconds. */
    private readonly budgetMs: number,
  ) {}

  /** Runs batches until none is full, the budget is spent, or `stopping()` says the engine is closing. */
  async run(connect: () => Promise<pg.PoolClient>, stopping: () => boolean): Promise<RetentionResult> {
    const deadline = Date.now() + this.budgetMs;
    const result: RetentionResult = { deleted: 0, expired: [], more: false };
    const more = () => Date.now() < deadline && !stopping();
    // Expiry first: a job it fails may be deleted in this same pass when its queue keeps failures for no time.
    for (;;) {
      const rows = await this.batch<{ id: string; queue: string }>(connect, this.statements.expireWaitingJobs);
      result.expired.push(...rows);
      if (rows.length < RETENTION_BATCH) break;
      if (!more()) return { ...result, more: true };
    }
    for (;;) {
      const [row] = await this.batch<{ deleted: number }>(connect, this.statements.deleteFinishedJobs);
      const deleted = row?.deleted ?? 0;
      result.deleted += deleted;
      if (deleted < RETENTION_BATCH) break;
      if (!more()) return { ...result, more: true };
    }
    return result;
  }

  private batch<R extends pg.QueryResultRow>(connect: () => Promise<pg.PoolClient>, text: string): Promise<R[]> {
    return inTransaction(connect, async (client) => {
      await client.query(this.statements.setPassSettings, [RETENTION_STATEMENT_TIMEOUT_MS]);
      return (await client.query<R>(text, [RETENTION_BATCH])).rows;
    });
  }
}
