// Bulk deletes by queue: its waiting jobs, its finished jobs, or both. Each batch is a transaction of its own,
// bounded in rows (BULK_DELETE_BATCH) and in time, that skips the rows another transaction holds, as retention's
// deletes do (retention.ts): a call on a queue of millions never holds the table, nor waits for a worker. A row
// held at that moment (a claim taking it, an operator's transaction) is left for a later call.
import type pg from 'pg';
import { inTransaction } from '../runtime/db.js';
import type { Runtime } from '../runtime/runtime.js';
import { queueName } from '../config/validate.js';

/** Jobs one batch deletes at most: as retention's (RETENTION_BATCH), a few milliseconds each. */
export const BULK_DELETE_BATCH = 1_000;

/** Longest one batch may run before PostgreSQL cancels it (the call then throws; what earlier batches deleted stays deleted). */
export const BULK_DELETE_STATEMENT_TIMEOUT_MS = 10_000;

/** The bulk deletes; PgQueue's methods of the same names delegate here. */
export class BulkDelete {
  constructor(private readonly rt: Runtime) {}

  /** Deletes the waiting jobs (created, retry) of queue `name`; returns how many. */
  async deleteQueuedJobs(name: string): Promise<number> {
    await this.assertQueue(name);
    return this.queued(name);
  }

  /** Deletes the finished jobs (completed, cancelled, failed) of queue `name` that nothing still needs; returns how many. */
  async deleteStoredJobs(name: string): Promise<number> {
    await this.assertQueue(name);
    return this.loop((client, after) => this.storedBatch(client, name, after));
  }

  /** deleteQueuedJobs then deleteStoredJobs, of queue `name` or of every queue; active jobs stay. Returns how many. */
  async deleteAllJobs(name?: string): Promise<number> {
    if (name !== undefined) await this.assertQueue(name);
    const names =
      name !== undefined
        ? [name]
        : (await (await this.rt.db()).query<{ name: string }>(this.rt.statements.allQueueNames)).map((r) => r.name);
    let deleted = 0;
    for (const queue of names) {
      deleted += await this.queued(queue);
      deleted += await this.loop((client, after) => this.storedBatch(client, queue, after));
    }
    return deleted;
  }

  private async assertQueue(name: unknown): Promise<void> {
    queueName('name', name);
    await this.rt.router.assertExists(await this.rt.db(), name as string);
  }

  /** The waiting jobs of `name` up to its last id now: jobs sent during the call are not chased. */
  private async queued(name: string): Promise<number> {
    const [row] = await (await this.rt.db()).query<{ last_id: string }>(this.rt.statements.queueLastId, [name]);
    const last = row?.last_id ?? '0';
    return this.loop((client, after) => this.queuedBatch(client, name, after, last));
  }

  /**
   * Runs batches while they come back full: a short one found no more it could take. Each batch is given the
   * cursor the one before returned (both kinds walk the queue in id order).
   */
  private async loop(batch: (client: pg.PoolClient, after: string) => Promise<{ deleted: number; last: string }>): Promise<number> {
    let deleted = 0;
    let after = '0';
    for (;;) {
      const done = await inTransaction(this.rt.connect, async (client) => {
        await client.query(this.rt.statements.setPassSettings, [BULK_DELETE_STATEMENT_TIMEOUT_MS]);
        return batch(client, after);
      });
      deleted += done.deleted;
      if (done.deleted < BULK_DELETE_BATCH) return deleted;
      after = done.last;
    }
  }

  /** One batch of waiting jobs, and in its transaction what becomes of the flow children that waited for them. */
  private async queuedBatch(client: pg.PoolClient, name: string, after: string, upTo: string): Promise<{ deleted: number; last: string }> {
    const st = this.rt.statements;
    const [row] = (
      await client.query<{ ids: string[]; last_id: string | null }>(st.deleteQueuedBatch, [name, BULK_DELETE_BATCH, after, upTo])
    ).rows;
    const ids = row?.ids ?? [];
    if (ids.length > 0) await client.query(st.orphanDeletedParents, [name, ids]);
    return { deleted: ids.length, last: row?.last_id ?? after };
  }

  private async storedBatch(client: pg.PoolClient, name: string, after: string): Promise<{ deleted: number; last: string }> {
    const [row] = (
      await client.query<{ deleted: number; last_id: string | null }>(this.rt.statements.deleteStoredBatch, [
        name,
        BULK_DELETE_BATCH,
        after,
      ])
    ).rows;
    return { deleted: row?.deleted ?? 0, last: row?.last_id ?? after };
  }
}
