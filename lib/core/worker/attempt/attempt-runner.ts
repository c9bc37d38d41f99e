// Running one attempt (River's job executor): calls the handler, plain or inside a transaction shared with
// the job's completion, and turns what it returned or threw into the outcome the completer writes. Also
// the one place that knows what a throw means once shutdown has asked handlers to stop.
import type { PoolClient } from 'pg';
import type { Executor } from '../../runtime/db.js';
import { JobTransaction } from './transaction.js';
import { completeArgs, type Statements } from '../../sql/index.js';
import { endSession } from '../../sql/transaction.js';
import type { Tracing } from '../../runtime/tracing.js';
import type { Job, JobHandler } from '../../types.js';
import { toJson } from '../../config/validate.js';
import type { Attempt } from './attempt.js';
import { toJob } from './claimed-job.js';
import type { Completer } from '../completer.js';
import { describeFailure, type FailureInfo } from './failure.js';
import { loopFrame } from '../loop-frame.js';
import type { LeaseClock } from '../lease-clock.js';

/** What running an attempt needs from its worker. */
export interface AttemptRunnerScope {
  readonly exec: Executor;
  /** Read at each commit: the worker replaces them when its queue was made again elsewhere. */
  readonly statements: Statements;
  readonly queue: string;
  readonly workerId: string;
  readonly channel: string;
  /** Whether a finished job of this queue may release another (see WorkerLoop.holdsBack): its completion then wakes. */
  holdsBack(): boolean;
  /** A connection of its own for a transactional handler. */
  readonly connect: () => Promise<PoolClient>;
  /** Reports a failure of the engine itself (never a handler's throw). */
  error(err: unknown, context: string): void;
  /** Spans around attempts (null: not tracing). */
  readonly tracing: Tracing | null;
}

/** Runs a worker's attempts: one handler call each, its outcome handed to the completer. */
export class AttemptRunner {
  /**
   * Shutdown aborted the handlers' signals: a throw from now on is the handler giving up, and its job is
   * handed back, not failed. Held for the worker, not per attempt: it counts for every attempt that settles
   * after it, a transactional failure written after its rollback as much as a plain throw.
   */
  private stopAsked = false;

  /**
   * Runs one attempt and writes its outcome. Never rejects: a failure of the engine itself is reported, and
   * the job, unsettled, stays under its lease until the reaper puts it back.
   */
  readonly run: (attempt: Attempt) => Promise<void>;

  /** `returned`: the handler of a running attempt returned (or threw); its outcome is written next. */
  constructor(
    private readonly scope: AttemptRunnerScope,
    private readonly handler: JobHandler,
    private readonly transactional: boolean,
    private readonly clock: LeaseClock,
    private readonly completer: Completer,
    private readonly returned: (attempt: Attempt) => void,
  ) {
    // named after the loop: a stop call its handler makes finds the loop on its (async) stack; see loop-frame.ts
    this.run = loopFrame(scope.workerId, async (attempt: Attempt): Promise<void> => {
      try {
        if (this.transactional) {
          await this.runInTransaction(attempt);
          return;
        }
        // The plain path inline, one async frame per job: it is the drain's hot path.
        let output: string | null = null;
        let failure: FailureInfo | null = null;
        try {
          const job = toJob(attempt.row, attempt.abort, () => this.clock.heartbeat(attempt));
          output = toJson('handler output', await this.call(attempt.row, job));
        } catch (err) {
          failure = describeFailure(err, attempt.row.retry_count);
        }
        // Cut off (lease) or handed back (shutdown) while the handler ran: what it returned is ignored.
        if (attempt.released) return;
        this.returned(attempt);
        await this.settle(attempt, output, failure);
      } catch (err) {
        this.scope.error(
          err,
          `running job ${attempt.row.id} of queue "${this.scope.queue}"; it returns to the queue when its lease runs out`,
        );
      }
    });
  }

  /** The handler's call for one job: inside an attempt span when tracing (a plain call otherwise, no async frame). */
  private call(row: Attempt['row'], job: Job): unknown {
    const tracing = this.scope.tracing;
    return tracing ? tracing.attempt(row, () => this.handler(job)) : this.handler(job);
  }

  /** Aborts the signals of `attempts` for shutdown; from now on a throw hands its job back. */
  askToStop(attempts: Iterable<Attempt>): void {
    this.stopAsked = true;
    for (const a of attempts) a.abort.abort(new Error('the worker is shutting down'));
  }

  /**
   * The attempt was released while its handler runs: its signal is aborted (`abortReason`, when given) and
   * a transaction it holds is given up now, so a handler that never returns holds no connection.
   */
  cutOff(attempt: Attempt, abortReason: Error | null, txReason: Error): void {
    if (abortReason) attempt.abort.abort(abortReason);
    attempt.tx?.abandon(txReason, this.endSession);
  }

  /** Writes an attempt's outcome (see Completer), or, for a throw once shutdown asked handlers to stop, hands the job back. */
  settle(attempt: Attempt, output: string | null, failure: FailureInfo | null): Promise<void> {
    // The handler gave up because we are shutting down: that is not the job's failure.
    if (failure && this.stopAsked) return this.completer.handBack(attempt);
    return this.completer.settle(attempt, output, failure);
  }

  /**
   * A transactional handler's attempt: the handler and the job's completion share one transaction, which
   * commits only if both succeed (see JobTransaction). A failure is written after the rollback, on the pool:
   * the completion may hold the job's row lock until then.
   */
  private async runInTransaction(attempt: Attempt): Promise<void> {
    const { row } = attempt;
    let tx: JobTransaction;
    try {
      tx = await JobTransaction.begin(this.scope.connect);
    } catch (err) {
      if (attempt.released) return;
      this.returned(attempt);
      await this.settle(attempt, null, describeFailure(err, row.retry_count));
      return;
    }
    let failure: FailureInfo | null = null;
    try {
      // Cut off (lease) or handed back (shutdown) while it waited for a connection: it must not run now.
      if (attempt.released) return;
      attempt.tx = tx;
      let output: string | null = null;
      try {
        const job = toJob(row, attempt.abort, () => this.clock.heartbeat(attempt), tx.client);
        output = toJson('handler output', await this.call(row, job));
      } catch (err) {
        failure = describeFailure(err, row.retry_count);
      }
      if (attempt.released) return;
      this.returned(attempt);
      if (!failure) {
        try {
          const { queue, workerId, channel } = this.scope;
          const held = await tx.commitWith(
            async (client) =>
              (
                await client.query(
                  this.scope.statements.completeJobs,
                  completeArgs(
                    { queue, ids: [row.id], retryCounts: [null], workerId, claimCounts: [row.claim_count], stamps: [row.stamp] },
                    [output],
                    channel,
                    // the NOTIFY that wakes other processes' loops commits with the completion
                    this.scope.holdsBack() ? channel : null,
                  ),
                )
              ).rowCount ?? 0,
          );
          if (!held) this.completer.stale(row);
          else this.completer.announceCompleted(attempt);
          return;
        } catch (err) {
          failure = describeFailure(err, row.retry_count);
        }
      }
    } finally {
      await tx.rollback();
    }
    await this.settle(attempt, null, failure);
  }

  /** Ends the server session of an abandoned transactional handler (see JobTransaction.abandon). */
  private readonly endSession = (processId: number): Promise<unknown> => this.scope.exec.query(endSession, [processId]);
}
