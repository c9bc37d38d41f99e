// The lease clock: the time side of a worker's running attempts. One timer cuts off handlers that outlive
// their lease; one more keeps the leases of those with a heartbeat alive, for all of them in one statement.
// A timer per job would cost an allocation per job, so there is one of each per worker.
import type { Executor } from '../runtime/db.js';
import { heartbeatArgs, type Statements } from '../sql/index.js';
import { attemptKey, type Attempt, type Attempts } from './attempt/attempt.js';

/** What the lease clock needs from its worker. */
export interface LeaseClockScope {
  readonly exec: Executor;
  /** Read at each heartbeat: the worker replaces them when its queue was made again elsewhere. */
  readonly statements: Statements;
  readonly queue: string;
  readonly workerId: string;
  /** Reports a failure of the engine itself. */
  error(err: unknown, context: string): void;
}

/** Keeps the leases of one worker's running attempts: expires those past theirs, extends those with a heartbeat. */
export class LeaseClock {
  /** The lease timer of the running handlers (see track), and when it fires. */
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweepAt = Infinity;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private heartbeatAt = Infinity;
  private beating: Promise<void> | null = null;
  private stopped = false;

  /**
   * `expired`: a running attempt outlived its lease; called from the sweep for each one. `refreshSeconds`: the
   * loop's heartbeatRefreshSeconds (null: a third of the shortest heartbeat interval).
   */
  constructor(
    private readonly scope: LeaseClockScope,
    private readonly attempts: Attempts,
    private readonly expired: (attempt: Attempt) => void,
    private readonly refreshSeconds: number | null = null,
  ) {}

  /**
   * A new attempt runs. The sweep timer is set for the soonest lease; when it fires, every handler past its
   * lease is expired and it is set again for the soonest of the others. A handler that returns leaves it as
   * it is: the sweep skips it.
   */
  track(attempt: Attempt): void {
    if (attempt.leaseEnd < this.sweepAt) this.armSweep(attempt.leaseEnd);
    if (attempt.row.heartbeat_seconds !== null) this.scheduleHeartbeat();
  }

  /** `job.heartbeat()`: extends this attempt's lease now; tells the handler to stop if it is no longer held. */
  async heartbeat(attempt: Attempt): Promise<void> {
    const { exec, statements, queue, workerId } = this.scope;
    const rows = await exec.query(statements.heartbeatJobs, heartbeatArgs(queue, [attempt.row], workerId));
    if (rows.length === 0 && !attempt.abort.aborted)
      attempt.abort.abort(new Error(`job ${attempt.row.id} is no longer held by this worker`));
  }

  /** Stops both timers and waits for a heartbeat in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
    await this.beating;
  }

  private armSweep(at: number): void {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, at - Date.now()));
  }

  private sweep(): void {
    this.sweepTimer = null;
    this.sweepAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const attempt of this.attempts.values()) {
      if (attempt.state !== 'running') continue;
      if (attempt.leaseEnd <= now) this.expired(attempt);
      else next = Math.min(next, attempt.leaseEnd);
    }
    if (next < Infinity && !this.stopped) this.armSweep(next);
  }

  /**
   * Keeps the heartbeats of all running jobs that have one, in one statement per tick. A tick comes every
   * third of the shortest heartbeat interval among them, so two ticks may fail before the reaper takes a
   * job; a job with a shorter interval than the armed tick brings the tick forward. With heartbeatRefreshSeconds
   * a tick comes that often instead, but never less often than every half of the shortest interval: a job's
   * heartbeatSeconds is its contract with the reaper, and a refresh slower than it would let the reaper take it.
   */
  private scheduleHeartbeat(): void {
    if (this.stopped || this.beating) return;
    let shortest = Infinity;
    for (const a of this.attempts.values()) if (a.row.heartbeat_seconds !== null) shortest = Math.min(shortest, a.row.heartbeat_seconds);
    if (shortest === Infinity) return;
    const waitMs = Math.max(200, this.refreshSeconds === null ? (shortest * 1000) / 3 : Math.min(this.refreshSeconds, shortest / 2) * 1000);
    if (this.heartbeatTimer && Date.now() + waitMs >= this.heartbeatAt) return;
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatAt = Date.now() + waitMs;
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatTimer = null;
      this.heartbeatAt = Infinity;
      this.beating = this.beat().finally(() => {
        this.beating = null;
        this.scheduleHeartbeat();
      });
    }, waitMs);
  }

  private async beat(): Promise<void> {
    const { exec, statements, queue, workerId } = this.scope;
    const beating = [...this.attempts.values()].filter((a) => a.row.heartbeat_seconds !== null && a.state === 'running');
    if (beating.length === 0) return;
    try {
      const held = await exec.query<{ id: string; claim_count: number; stamp: string }>(
        statements.heartbeatJobs,
        heartbeatArgs(
          queue,
          beating.map((a) => a.row),
          workerId,
        ),
      );
      const alive = new Set(held.map(attemptKey));
      for (const a of beating) {
        // Not held any more (reaped, cancelled, or claimed again after a claim the server forgot): tell the
        // handler to stop; its result will be refused.
        if (!alive.has(a.key) && this.attempts.holds(a) && a.state === 'running')
          a.abort.abort(new Error(`job ${a.row.id} is no longer held by this worker`));
      }
    } catch (err) {
      this.scope.error(err, `heartbeat of queue "${queue}"`);
    }
  }
}
