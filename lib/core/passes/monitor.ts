// The monitor pass: every monitorIntervalSeconds one supervising instance of the cluster counts each queue's jobs
// and caches the counts on the queue's row (sql/monitor.ts), so that getQueues() and the health check cost a read
// of the queues table, however many jobs are stored. With persistQueueStats it also records a snapshot per queue:
// deltas and wait/run histograms. One pass at a time cluster-wide (an advisory lock), one per interval (a turn in
// the maintenance table, as maintenance takes its own).
import type pg from 'pg';
import { inTransaction } from '../runtime/db.js';
import { passStatement } from './retention.js';
import { ForcedTurn, waitForPassLock } from './forced-turn.js';
import type { QueueWarning } from '../events.js';
import type { Statements } from '../sql/index.js';

/** Longest the counting statement may run before PostgreSQL cancels it (the next pass tries again). */
export const MONITOR_STATEMENT_TIMEOUT_MS = 60_000;

/** What one queue looked like to a pass. */
export interface MonitoredQueue {
  name: string;
  queuedCount: number;
  readyCount: number;
  warningQueueSize: number | null;
  /** Its waiting jobs at the count before (null: never counted before). */
  previousQueuedCount: number | null;
}

interface MonitoredRow {
  name: string;
  queued_count: number;
  ready_count: number;
  warning_queue_size: number | null;
  prev_queued: number | null;
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
  /** The warningQueueSize of queues that set none (the module option; null: none). */
  readonly warningQueueSize: number | null;
  /** Where a queue that reaches its warningQueueSize is reported. */
  warning(warning: QueueWarning): void;
  /** Reports a part of the pass that failed (keeping the stats' partitions: the counts are recorded anyway). */
  error(err: unknown, context: string): void;
}

export class QueueMonitor {
  constructor(private readonly ctx: MonitorContext) {}

  /**
   * The scheduled pass (or, with `force`, one now whatever the last one's time): counts every queue, and with
   * persistQueueStats records its snapshot, takes in late commits and keeps the snapshots' partitions. Callers that
   * force a pass at once share one, and all it does after the count.
   */
  run(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MonitorResult> {
    return force ? this.forced.take(() => this.wholePass(connect, true)) : this.wholePass(connect, false);
  }

  /** A pass and what follows its count: the queue-size warnings, and with persistQueueStats the work after it. */
  private async wholePass(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MonitorResult> {
    const result = await this.pass(connect, force);
    if (result.ran) this.watchSizes(result.queues);
    if (result.ran && this.ctx.persistQueueStats) {
      await this.reconcileLateCommits(connect);
      await this.keepPartitions(connect, force);
    }
    return result;
  }

  /**
   * Adds to earlier snapshots the jobs whose transaction committed after their window was recorded
   * (sql/monitor.ts, reconcileLateStats), after the pass has committed and in a transaction of its own: a count cut
   * short by the statement timeout loses none of the pass's, and the next pass counts those windows again.
   */
  private async reconcileLateCommits(connect: () => Promise<pg.PoolClient>): Promise<void> {
    const { statements } = this.ctx;
    try {
      await passStatement(connect, statements, MONITOR_STATEMENT_TIMEOUT_MS, statements.reconcileLateStats, []);
    } catch (err) {
      this.ctx.error(err, 'adding late commits to earlier stats snapshots (the next monitor pass tries again)');
    }
  }

  /**
   * Makes the next days' partitions of queue_stats and drops those past queueStatRetentionDays, after the pass has
   * committed and in a transaction of its own: partition DDL locks queue_stats, so it waits at most 5 s for the lock
   * (readers of the stats are not queued behind it for long), and a failure loses no count; the next pass tries again.
   * A forced pass waits for another pass (any instance's) to let go of the lock: its caller asked for the partitions of
   * now.
   */
  private async keepPartitions(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<void> {
    const { statements, queueStatRetentionDays, schema } = this.ctx;
    try {
      // the rows of the default partition first, in a statement of their own: a failure of the DDL keeps no old row
      await passStatement(connect, statements, MONITOR_STATEMENT_TIMEOUT_MS, statements.deleteOldDefaultStats, [queueStatRetentionDays]);
      await inTransaction(connect, async (client) => {
        await client.query(statements.setPassSettings, [MONITOR_STATEMENT_TIMEOUT_MS]);
        // one instance at a time (a forced pass elsewhere may end now too): two making a partition at once deadlock
        const locked = force
          ? await waitForPassLock(client, statements, statements.waitMonitorLock, schema)
          : (await client.query<{ locked: boolean }>(statements.tryMonitorLock, [schema])).rows[0]!.locked;
        if (!locked && force) throw new Error("another monitor pass held the lock past a forced pass's wait");
        if (!locked) return;
        await client.query(statements.setDdlLockTimeout);
        await client.query(statements.keepStatsPartitions, [queueStatRetentionDays]);
      });
    } catch (err) {
      this.ctx.error(err, "keeping queue_stats' day partitions (the next monitor pass tries again)");
    }
  }

  /** Forced passes, shared by the callers that ask at once (getQueueStats, monitor()). */
  private readonly forced = new ForcedTurn<MonitorResult>();

  /**
   * A `queue-size` warning for each queue whose waiting jobs (created and retry) reached its warningQueueSize (its
   * own, else the module's) at this count and were below it at the count before (or were never counted): once per
   * crossing, whichever instance counted before, since the count before is read from the queue's row.
   */
  private watchSizes(queues: readonly MonitoredQueue[]): void {
    for (const q of queues) {
      const size = q.warningQueueSize ?? this.ctx.warningQueueSize;
      if (size === null || q.queuedCount < size) continue;
      if (q.previousQueuedCount !== null && q.previousQueuedCount >= size) continue;
      const whose = q.warningQueueSize === null ? 'the warningQueueSize of queues that set none' : 'its warningQueueSize';
      this.ctx.warning({
        type: 'queue-size',
        message: `queue "${q.name}" has ${q.queuedCount} waiting jobs, at or over ${whose} of ${size}`,
        queue: q.name,
        queuedCount: q.queuedCount,
        warningQueueSize: size,
      });
    }
  }

  private pass(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MonitorResult> {
    const { statements, schema, intervalSeconds, persistQueueStats } = this.ctx;
    return inTransaction(connect, async (client) => {
      // bounds the wait for the lock too
      await client.query(statements.setPassSettings, [MONITOR_STATEMENT_TIMEOUT_MS]);
      // A forced pass waits for one under way to end, then runs: its caller asked for counts of now.
      if (force) {
        if (!(await waitForPassLock(client, statements, statements.waitMonitorLock, schema))) return { ran: false, queues: [] };
      } else {
        const [lock] = (await client.query<{ locked: boolean }>(statements.tryMonitorLock, [schema])).rows;
        const due = lock!.locked && (await client.query(statements.takeMaintenanceTurn, ['monitor', intervalSeconds * 0.9])).rowCount === 1;
        if (!due) return { ran: false, queues: [] };
      }
      const { rows } = await client.query<MonitoredRow>(statements.monitorQueues, [null, persistQueueStats, intervalSeconds, null]);
      return {
        ran: true,
        queues: rows.map((r) => ({
          name: r.name,
          queuedCount: r.queued_count,
          readyCount: r.ready_count,
          warningQueueSize: r.warning_queue_size,
          previousQueuedCount: r.prev_queued,
        })),
      };
    });
  }

  /**
   * Counts the named queues now and caches their counts (getQueue's `force`); records no deltas or snapshot. With
   * `minAgeSeconds`, only those counted longer ago than that (by any instance: the row's counted_on).
   */
  async recount(connect: () => Promise<pg.PoolClient>, names: readonly string[], minAgeSeconds: number | null = null): Promise<void> {
    await inTransaction(connect, async (client) => {
      await client.query(this.ctx.statements.setPassSettings, [MONITOR_STATEMENT_TIMEOUT_MS]);
      await client.query(this.ctx.statements.monitorQueues, [names, null, this.ctx.intervalSeconds, minAgeSeconds]);
    });
  }
}
