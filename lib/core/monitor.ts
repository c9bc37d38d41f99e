// The monitor pass: every monitorIntervalSeconds one supervising instance of the cluster counts each queue's jobs
// and caches the counts on the queue's row (sql/monitor.ts), so that getQueues() and the health check cost a read
// of the queues table, however many jobs are stored. With persistQueueStats it also records a snapshot per queue:
// deltas and wait/run histograms. One pass at a time cluster-wide (an advisory lock), one per interval (a turn in
// the maintenance table, as maintenance takes its own).
import type pg from 'pg';
import { inTransaction } from './db.js';
import type { QueueWarning } from './events.js';
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
  /** Where a queue that reaches its warningQueueSize is reported. */
  warning(warning: QueueWarning): void;
}

export class QueueMonitor {
  /** The queues whose waiting jobs were at or over their warningQueueSize at the last pass (one warning per crossing). */
  private readonly over = new Set<string>();

  constructor(private readonly ctx: MonitorContext) {}

  /**
   * The scheduled pass (or, with `force`, one now whatever the last one's time): counts every queue, and with
   * persistQueueStats records its snapshot and deletes snapshots past their retention.
   */
  async run(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MonitorResult> {
    const result = await this.pass(connect, force);
    if (result.ran) this.watchSizes(result.queues);
    return result;
  }

  /**
   * A `queue-size` warning for each queue whose waiting jobs (created and retry) reached its warningQueueSize since
   * the last pass; it warns again only once the queue has been below the size at a pass.
   */
  private watchSizes(queues: readonly MonitoredQueue[]): void {
    for (const q of queues) {
      const over = q.warningQueueSize !== null && q.queuedCount >= q.warningQueueSize;
      if (over && !this.over.has(q.name)) {
        this.ctx.warning({
          type: 'queue-size',
          message: `queue "${q.name}" has ${q.queuedCount} waiting jobs, at or over its warningQueueSize of ${q.warningQueueSize}`,
          queue: q.name,
          queuedCount: q.queuedCount,
          warningQueueSize: q.warningQueueSize!,
        });
        this.over.add(q.name);
      } else if (!over) this.over.delete(q.name);
    }
  }

  private pass(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MonitorResult> {
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
