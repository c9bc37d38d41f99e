// The maintenance pass: jobs whose lease or heartbeat ran out go back to the queue (or fail), and the
// key_strict_fifo safety net unsticks keys whose every queued job was left marked as waiting. One pass per
// interval cluster-wide, never two at once (see tryMaintenanceLock and takeMaintenanceTurn in sql/maintenance.ts).
import type pg from 'pg';
import { inTransaction } from './db.js';
import type { Statements } from './sql/index.js';

/** Keys the key_strict_fifo safety net looks at per maintenance pass. */
const FIFO_REPAIR_KEYS = 2_000;

/** Jobs the reaper puts back per statement; it goes on until a statement reaps fewer. */
const REAP_BATCH = 1_000;

/** What one pass did: whether it ran (it was this instance's turn), how many jobs it reaped and keys it unstuck. */
export interface MaintenanceResult {
  ran: boolean;
  reaped: number;
  unstuck: number;
}

/** What a pass needs of the engine that runs it. */
export interface MaintenanceContext {
  readonly statements: Statements;
  readonly schema: string;
  readonly channel: string;
  readonly intervalSeconds: number;
  /** Reports what the pass changed (with no listener, the engine's logger). */
  warning(message: string): void;
}

/** One instance's maintenance passes; it keeps where the key_strict_fifo safety net's walk goes on. */
export class Maintenance {
  /** Where the key_strict_fifo safety net resumes its walk of keys (see repairFifoMarks in sql/maintenance.ts). */
  private fifoRepairCursor: [string, string] = ['', ''];

  constructor(private readonly ctx: MaintenanceContext) {}

  /**
   * One pass on a connection of its own from `connect`, in one bounded transaction. It runs only when none ran
   * in the last interval anywhere in the cluster, unless `force`.
   */
  async run(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MaintenanceResult> {
    const { statements, schema, channel, intervalSeconds } = this.ctx;
    const result = await inTransaction(connect, async (client) => {
      let reaped = 0;
      const [lock] = (await client.query<{ locked: boolean }>(statements.tryMaintenanceLock, [schema])).rows;
      const due =
        lock!.locked && (force || (await client.query(statements.takeMaintenanceTurn, ['reap', intervalSeconds * 0.9])).rowCount === 1);
      let unstuck = 0;
      if (due) {
        for (;;) {
          const { rows } = await client.query(statements.reapExpiredLeases, [REAP_BATCH, channel]);
          reaped += rows.length;
          if (rows.length < REAP_BATCH) break;
        }
        unstuck = await this.repairFifoMarks(client);
      }
      return { ran: due, reaped, unstuck };
    });
    if (result.reaped > 0) this.ctx.warning(`${result.reaped} job(s) whose lease or heartbeat ran out were put back to retry or failed`);
    if (result.unstuck > 0)
      this.ctx.warning(`${result.unstuck} key_strict_fifo key(s) had every queued job marked as waiting with nothing ahead; unmarked`);
    return result;
  }

  /** One pass of the key_strict_fifo safety net: at most FIFO_REPAIR_KEYS keys, then the next pass goes on. */
  private async repairFifoMarks(client: pg.PoolClient): Promise<number> {
    const [row] = (
      await client.query<{ unstuck: number; walked: number; last_queue: string | null; last_key: string | null }>(
        this.ctx.statements.repairFifoMarks,
        [...this.fifoRepairCursor, FIFO_REPAIR_KEYS],
      )
    ).rows;
    this.fifoRepairCursor =
      row && row.walked >= FIFO_REPAIR_KEYS && row.last_queue !== null && row.last_key !== null ? [row.last_queue, row.last_key] : ['', ''];
    return row?.unstuck ?? 0;
  }
}
