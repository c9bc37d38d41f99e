// The monitor pass: every monitorIntervalSeconds one supervising instance of the cluster counts each queue's jobs
// and caches the counts on the queue's row (sql/monitor.ts), so that getQueues() and the health check cost a read
// of the queues table, however many jobs are stored. With persistQueueStats it also records a snapshot per queue:
// deltas and wait/run histograms. One pass at a time cluster-wide (an advisory lock), one per interval (a turn in
// the maintenance table, as maintenance takes its own).
import type pg from 'pg';
import { inTransaction } from './db.js';
import type { Statements } from './sql/index.js';

/** Longest the counting statement may run before PostgreSQL cancels it (the next pass tries again). */
export const MONITOR_STATEMENT_TIMEOUT_MS = 60_000;

/** What one queue looked like to a pass. */
export interface MonitoredQueue {
  name: string;
  queuedCount: number;
  readyCount: number;
  warningQueueSize: number | null;
}

interface MonitoredRow {
  name: string;
  queued_count: number;
  ready_count: number;
  warning_queue_size: number | null;
}

/** What a pass did: whether it ran (its turn, or forced), and the queues it counted. */
export interface MonitorResult {
  ran: boolean;
  queues: MonitoredQueue[];
}

/** What the monitor needs of the engine. */
export interface MonitorContext {
  readonly statements: Statements;
  readonly schema: string;
  readonly intervalSeconds: number;
  readonly persistQueueStats: boolean;
  readonly queueStatRetentionDays: number;
}

export class QueueMonitor {
  constructor(private readonly ctx: MonitorContext) {}

  /**
   * The scheduled pass (or, with `force`, one now whatever the last one's time): counts every queue, and with
   * persistQueueStats records its snapshot and deletes snapshots past their retention.
   */
  run(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MonitorResult> {
    const { statements, schema, intervalSeconds, persistQueueStats, queueStatRetentionDays } = this.ctx;
    return inTransaction(connect, async (client) => {
      // bounds the wait for the lock too
      await client.query(statements.setPassSettings, [MONITOR_STATEMENT_TIMEOUT_MS]);
      // A forced pass waits for one under way to end, then runs: its caller asked for counts of now.
      if (force) await client.query(statements.waitMonitorLock, [schema]);
      else {
        const [lock] = (await client.query<{ locked: boolean }>(statements.tryMonitorLock, [schema])).rows;
        const due = lock!.locked && (await client.query(statements.takeMaintenanceTurn, ['monitor', intervalSeconds * 0.9])).rowCount === 1;
        if (!due) return { ran: false, queues: [] };
      }
      const { rows } = await client.query<MonitoredRow>(statements.monitorQueues, [null, persistQueueStats, intervalSeconds]);
      if (persistQueueStats) await client.query(statements.deleteOldQueueStats, [queueStatRetentionDays]);
      return {
        ran: true,
        queues: rows.map((r) => ({
          name: r.name,
          queuedCount: r.queued_count,
          readyCount: r.ready_count,
          warningQueueSize: r.warning_queue_size,
        })),
      };
    });
  }

  /** Counts the named queues now and caches their counts (getQueue's `force`); records no deltas or snapshot. */
  async recount(connect: () => Promise<pg.PoolClient>, names: readonly string[]): Promise<void> {
    await inTransaction(connect, async (client) => {
      await client.query(this.ctx.statements.setPassSettings, [MONITOR_STATEMENT_TIMEOUT_MS]);
      await client.query(this.ctx.statements.monitorQueues, [names, null, this.ctx.intervalSeconds]);
    });
  }
}
