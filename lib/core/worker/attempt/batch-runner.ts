// Running a batch handler's call: one call for the jobs of one claim, each job still an attempt of its own (its
// lease, heartbeat, fence and outcome are the single job's: see AttemptRunner), and the call's result read out
// into one outcome per job. The outcomes go to the completer together, so a batch settles in few statements.
import { QueueError } from '../../errors.js';
import type { Tracing } from '../../runtime/tracing.js';
import type { BatchHandler, BatchJob, QueueLogger } from '../../types.js';
import { toJson } from '../../config/validate.js';
import { readResults, type Outcome } from './batch-results.js';
import type { Attempt } from './attempt.js';
import type { AttemptRunner } from './attempt-runner.js';
import { ClaimedJob } from './claimed-job.js';
import { describeFailure } from './failure.js';
import type { LeaseClock } from '../lease-clock.js';
import { loopFrame } from '../loop-frame.js';

/** What a batch call needs from its worker. */
export interface BatchRunnerScope {
  readonly queue: string;
  readonly log: QueueLogger;
  /** Reports a failure of the engine itself (never a handler's throw). */
  error(err: unknown, context: string): void;
  /** A span around each call (null: not tracing). */
  readonly tracing: Tracing | null;
  /** The loop's id, which names the function its handler calls come from (loopFrame). */
  readonly workerId: string;
}

/** One call in progress: its attempts still running, and how to free its place (BatchQueue). */
interface Call {
  running: number;
  free: () => void;
}

/** A job of a batch: settles its own attempt through the call that holds it. */
class BatchMember<T> extends ClaimedJob<T> implements BatchJob<T> {
  constructor(
    attempt: Attempt,
    heartbeat: () => Promise<void>,
    private readonly settleOwn: (outcome: Outcome, refused: Error | null) => Promise<void>,
  ) {
    super(attempt.row, attempt.abort, heartbeat);
  }

  complete(output?: unknown): Promise<void> {
    let text: string | null;
    try {
      text = toJson('job.complete() output', output);
    } catch (err) {
      // as a single job's output that JSON cannot hold: the job fails with it (and the caller hears why)
      return this.settleOwn({ output: null, failure: describeFailure(err, this.retryCount) }, err as Error);
    }
    return this.settleOwn({ output: text, failure: null }, null);
  }

  fail(error?: unknown): Promise<void> {
    return this.settleOwn(
      { output: null, failure: describeFailure(error ?? new Error('failed by its batch handler'), this.retryCount) },
      null,
    );
  }
}

/** Runs a batch worker's calls. */
export class BatchRunner {
  /** The call each running attempt belongs to, for `released`. */
  private readonly calls = new WeakMap<Attempt, Call>();

  /** `returned`: an attempt's handler is done with it (its slot frees while its outcome is written). */
  constructor(
    private readonly scope: BatchRunnerScope,
    private readonly handler: BatchHandler,
    /** The handler resolves with pg-boss's array of per-job results (WorkOptions.perJobResults). */
    private readonly perJobResults: boolean,
    private readonly clock: LeaseClock,
    private readonly runner: AttemptRunner,
    private readonly returned: (attempt: Attempt) => void,
  ) {
    // named after the loop: a stop call its handler makes finds the loop on its (async) stack; see loop-frame.ts
    // (an async frame per handler call, not per job)
    this.call = loopFrame(scope.workerId, async (batch: readonly Attempt[], free: () => void, ended: (i: number) => void) => {
      await this.callOnce(batch, free, ended);
    });
  }

  private readonly call: (batch: readonly Attempt[], free: () => void, ended: (i: number) => void) => Promise<void>;

  /**
   * An attempt of a call was cut off (its lease ran out) while the handler runs. A call none of whose jobs is left
   * running (each cut off, or settled by job.complete()/fail()) gives up its place, as a single job's cut-off
   * handler gives up its slot: a handler that never returns does not stall the loop.
   */
  released(attempt: Attempt): void {
    this.leave(attempt);
  }

  /** An attempt of a call is settled or cut off: a call with none left running frees its place. */
  private leave(attempt: Attempt): void {
    const call = this.calls.get(attempt);
    if (!call) return;
    this.calls.delete(attempt);
    if (--call.running === 0) call.free();
  }

  /**
   * Calls the handler with the batch's jobs and writes each one's outcome. Returns, per attempt, a promise that
   * settles once its outcome is written (or given up), or once it was cut off and the handler has spoken of it, so
   * that a job settled early leaves the worker's table while the call still runs. None rejects: a failure of the
   * engine itself is reported, and a job left unsettled stays under its lease until the reaper puts it back.
   */
  run(batch: readonly Attempt[], free: () => void): Promise<void>[] {
    const ends = batch.map(() => {
      let end!: () => void;
      const promise = new Promise<void>((resolve) => (end = resolve));
      return { promise, end };
    });
    void this.call(batch, free, (i) => ends[i]!.end());
    return ends.map((e) => e.promise);
  }

  private async callOnce(batch: readonly Attempt[], free: () => void, ended: (i: number) => void): Promise<void> {
    const call: Call = { running: batch.length, free };
    const settled = new Set<Attempt>();
    const settle = (i: number, outcome: Outcome): Promise<void> => {
      const attempt = batch[i]!;
      settled.add(attempt);
      // cut off (lease) or handed back (shutdown): what the handler says of it now is ignored
      if (attempt.released) {
        ended(i);
        return Promise.resolve();
      }
      this.leave(attempt);
      this.returned(attempt);
      const written = this.runner.settle(attempt, outcome.output, outcome.failure);
      void written.then(() => ended(i));
      return written;
    };
    try {
      const jobs = batch.map((attempt, i) => {
        this.calls.set(attempt, call);
        return new BatchMember(
          attempt,
          () => this.clock.heartbeat(attempt),
          async (outcome, refused) => {
            if (settled.has(attempt)) throw new QueueError(`job ${attempt.row.id} of this batch was settled already`, 'BATCH_JOB_SETTLED');
            await settle(i, outcome);
            if (refused) throw refused;
          },
        );
      });
      let result: unknown;
      let threw = false;
      let thrown: unknown;
      try {
        const tracing = this.scope.tracing;
        result = await (tracing
          ? tracing.batch(
              this.scope.queue,
              batch.map((a) => a.row),
              () => this.handler(jobs),
            )
          : this.handler(jobs));
      } catch (err) {
        threw = true;
        thrown = err;
      }
      free();
      if (threw) {
        batch.forEach((attempt, i) => {
          if (!settled.has(attempt)) void settle(i, { output: null, failure: describeFailure(thrown, attempt.row.retry_count) });
        });
        return;
      }
      // read against the whole batch: a result for a job settled already by job.complete()/fail() is no stray
      const read = readResults(
        result,
        batch.map((a) => ({ id: a.row.id, retryCount: a.row.retry_count })),
        this.perJobResults,
      );
      this.sayStrays(read.strays, batch.length);
      batch.forEach((attempt, i) => {
        if (!settled.has(attempt)) void settle(i, read.outcomes.get(attempt.row.id)!);
      });
    } catch (err) {
      free();
      batch.forEach((attempt, i) => settled.has(attempt) || ended(i));
      this.scope.error(
        err,
        `running a batch of ${batch.length} job(s) of queue "${this.scope.queue}"; unsettled ones return when their lease runs out`,
      );
    }
  }

  /** Results that name no job of the call settle nothing: said in the log (a mistyped id would otherwise fail quietly). */
  private sayStrays(strays: readonly string[], size: number): void {
    if (strays.length === 0) return;
    this.scope.log.warn(
      `the batch handler of queue "${this.scope.queue}" returned ${strays.length} result(s) that name no job of its batch of ${size} ` +
        `(${strays.slice(0, 3).join(', ')}); results are keyed by job id, a string, and a job they leave out fails`,
    );
  }
}
