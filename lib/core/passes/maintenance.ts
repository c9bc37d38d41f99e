// The maintenance pass: jobs whose lease or heartbeat ran out go back to the queue (or fail), the
// key_strict_fifo safety net unsticks keys whose every queued job was left marked as waiting, and retention deletes
// finished jobs and fails those that waited too long (retention.ts), and the ready jobs of queues no worker works fail
// where the queue asks it (failUnworkedAfterSeconds: unworked.ts). One pass per interval cluster-wide (see
// tryMaintenanceLock and takeMaintenanceTurn in sql/maintenance.ts).
import type pg from 'pg';
import { inTransaction } from '../runtime/db.js';
import type { EngineEvents } from '../events.js';
import { ForcedTurn, waitForPassLock } from './forced-turn.js';
import { Retention } from './retention.js';
import { UnworkedQueues, type UnworkedRow } from './unworked.js';
import type { Statements } from '../sql/index.js';

/** Keys the key_strict_fifo safety net looks at per maintenance pass. */
const FIFO_REPAIR_KEYS = 2_000;

/** Longest one statement of the reaper or the safety net may run before PostgreSQL cancels it. */
const PASS_STATEMENT_TIMEOUT_MS = 30_000;

/** Jobs the reaper puts back per statement; it goes on until a statement reaps fewer. */
const REAP_BATCH = 1_000;

/**
 * What one pass did: whether it ran (it was this instance's turn), how many jobs it reaped and keys it unstuck,
 * how many finished jobs it deleted and which waiting jobs it expired.
 */
export interface MaintenanceResult {
  ran: boolean;
  reaped: number;
  unstuck: number;
  deleted: number;
  expired: { id: string; queue: string }[];
  /** Queues with failUnworkedAfterSeconds whose ready jobs the pass failed, and how many. */
  unworked: { queue: string; failed: number }[];
}

/** A job the reaper put back or failed: when it is retried (seconds), or its dead-letter queue. */
type ReapedRow = UnworkedRow;

/** Jobs a pass failed as an attempt, and the error they record. */
interface Settled {
  rows: readonly ReapedRow[];
  error: { name: string; message: string };
}

/** What a pass needs of the engine that runs it. */
export interface MaintenanceContext {
  readonly statements: Statements;
  readonly schema: string;
  readonly channel: string;
  readonly intervalSeconds: number;
  /** Reports what the pass changed (with no listener, the engine's logger). */
  warning(message: string): void;
  /** Reports a part of the pass that failed (the rest still runs). */
  error(err: unknown, context: string): void;
  /** The lifecycle events of the jobs the pass settled: reaped (failed, retrying) and expired. */
  readonly events: Pick<EngineEvents, 'listens' | 'job'>;
}

/** How long retention may go on in one pass: half the interval, and never more than a minute. */
const retentionBudgetMs = (intervalSeconds: number) => Math.min(60_000, intervalSeconds * 500);

/** One instance's maintenance passes; it keeps where the key_strict_fifo safety net's walk goes on. */
export class Maintenance {
  /** Where the key_strict_fifo safety net resumes its walk of keys (see repairFifoMarks in sql/maintenance.ts). */
  private fifoRepairCursor: [string, string] = ['', ''];
  private readonly retention: Retention;
  private readonly unworked: UnworkedQueues;
  /** Set by stop(): a pass under way starts no further retention batch. */
  private stopping = false;

  constructor(private readonly ctx: MaintenanceContext) {
    this.retention = new Retention({
      statements: ctx.statements,
      budgetMs: retentionBudgetMs(ctx.intervalSeconds),
      error: (err, c) => ctx.error(err, c),
    });
    this.unworked = new UnworkedQueues({ statements: ctx.statements, channel: ctx.channel, error: (err, c) => ctx.error(err, c) });
  }

  /** The engine is closing: a pass under way ends after its current batch. */
  stop(): void {
    this.stopping = true;
  }

  /** Forced passes, shared by the callers that ask at once. */
  private readonly forced = new ForcedTurn<MaintenanceResult>();

  /**
   * One pass on a connection of its own from `connect`, in one bounded transaction. It runs only when none ran
   * in the last interval anywhere in the cluster, unless `force`: then it runs once the reaping of a pass under way
   * (any instance's) lets go of the lock, waited for at most FORCED_LOCK_WAIT_MS (else `ran: false`).
   */
  run(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MaintenanceResult> {
    return force ? this.forced.take(() => this.pass(connect, true)) : this.pass(connect, false);
  }

  private async pass(connect: () => Promise<pg.PoolClient>, force: boolean): Promise<MaintenanceResult> {
    const { statements, schema, channel, intervalSeconds } = this.ctx;
    const reapedRows: ReapedRow[] = [];
    const result = await inTransaction(connect, async (client) => {
      let reaped = 0;
      // bounds the wait for the lock too
      await client.query(statements.setPassSettings, [PASS_STATEMENT_TIMEOUT_MS]);
      const due = force
        ? await waitForPassLock(client, statements, statements.waitMaintenanceLock, schema)
        : (await client.query<{ locked: boolean }>(statements.tryMaintenanceLock, [schema])).rows[0]!.locked &&
          (await client.query(statements.takeMaintenanceTurn, ['reap', intervalSeconds * 0.9])).rowCount === 1;
      let unstuck = 0;
      if (due) {
        for (;;) {
          const { rows } = await client.query<ReapedRow>(statements.reapExpiredLeases, [REAP_BATCH, channel]);
          reaped += rows.length;
          reapedRows.push(...rows);
          if (rows.length < REAP_BATCH) break;
        }
        unstuck = await this.repairFifoMarks(client);
      }
      return { ran: due, reaped, unstuck };
    });
    // Retention runs after the reaper's transaction has committed, in batches of their own (retention.ts).
    const kept = result.ran ? await this.retention.run(connect, () => this.stopping) : { deleted: 0, expired: [], more: false };
    const unworked = result.ran ? await this.unworked.run(connect, () => this.stopping) : [];
    if (result.reaped > 0) this.ctx.warning(`${result.reaped} job(s) whose lease or heartbeat ran out were put back to retry or failed`);
    if (result.unstuck > 0)
      this.ctx.warning(`${result.unstuck} key_strict_fifo key(s) had every queued job marked as waiting with nothing ahead; unmarked`);
    if (kept.expired.length > 0)
      this.ctx.warning(`${kept.expired.length} job(s) waited unstarted past their retention and failed (RetentionExpiredError)`);
    if (kept.more) this.ctx.warning(`retention deleted ${kept.deleted} job(s) and stopped with more left; the next pass goes on`);
    for (const u of unworked) {
      const retrying = u.rows.filter((r) => r.state === 'retry').length;
      this.ctx.warning(
        `${u.message}; ${u.rows.length} ready job(s) failed as an attempt (${retrying} to retry, ${u.rows.length - retrying} failed for good)`,
      );
    }
    const lease = { name: 'LeaseExpiredError', message: 'its lease or heartbeat ran out' };
    this.announce(
      [
        { rows: reapedRows, error: lease },
        ...unworked.map((u) => ({ rows: u.rows, error: { name: 'UnworkedQueueError', message: u.message } })),
      ],
      kept.expired,
    );
    return {
      ...result,
      deleted: kept.deleted,
      expired: kept.expired,
      unworked: unworked.map((u) => ({ queue: u.queue, failed: u.rows.length })),
    };
  }

  /** The lifecycle events of what the pass settled, once it has committed: failed attempts and expired jobs. */
  private announce(settled: readonly Settled[], expired: readonly { id: string; queue: string }[]): void {
    const { events } = this.ctx;
    if (events.listens('expired')) for (const e of expired) events.job('expired', { queue: e.queue, id: e.id });
    const [onFailed, onRetrying] = [events.listens('failed'), events.listens('retrying')];
    if (!onFailed && !onRetrying) return;
    for (const { rows, error } of settled)
      for (const r of rows) {
        const willRetry = r.state === 'retry';
        if (onFailed)
          events.job('failed', {
            queue: r.queue,
            id: r.id,
            waitSeconds: null,
            runSeconds: null,
            error,
            willRetry,
            retryInSeconds: r.retry_in,
            deadLetter: r.dead_letter,
          });
        if (willRetry && onRetrying) events.job('retrying', { queue: r.queue, id: r.id, error, retryInSeconds: r.retry_in });
      }
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
