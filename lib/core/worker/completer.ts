// The completer: every write that ends a worker's attempt (complete, fail, hand back), fenced to the
// attempt, batched across attempts, retried when the database is briefly away. It knows an executor and the
// statements, nothing of the loop, so its rules are unit-tested with a fake executor (test/unit/completer.spec.ts).
import type { Executor } from '../runtime/db.js';
import { isDataException } from '../runtime/pg-errors.js';
import { completeArgs, completeLeafArgs, failArgs, releaseArgs, type Statements } from '../sql/index.js';
import type { HeldAttempt } from '../sql/lease.js';
import type { ClaimedRow } from './intake/claim.js';
import type { EngineEvents, JobTiming } from '../events.js';
import type { QueueLogger } from '../types.js';
import { attemptKey } from './attempt/attempt.js';
import type { FailureInfo } from './attempt/failure.js';
import { storableText } from './attempt/storable.js';

/** What the completer needs from its worker. */
export interface CompleterScope {
  readonly exec: Executor;
  /** Read at each write: the worker replaces them when its queue was made again elsewhere. */
  readonly statements: Statements;
  readonly queue: string;
  readonly workerId: string;
  readonly channel: string;
  readonly log: QueueLogger;
  /** Log each failed attempt (a warning) and each failure for good (an error) once it is written. */
  readonly logFailures: boolean;
  /** Counts a result refused by the fence (the worker no longer held the job). */
  staleResult(): void;
  /**
   * Whether a finished job of this queue may release another (see WorkerLoop.holdsBack): read at each write, whose
   * statement then wakes the queue's workers in other processes (WAKE_HOLDING in sql/fragments.ts; this process
   * wakes its own loop without a round trip).
   */
  holdsBack(): boolean;
  /** Reports a write given up (never thrown: the job stays under its lease until the reaper takes it back). */
  error(err: unknown, context: string): void;
  /** Where the completer reports results refused by the fence, and the jobs it settled (when anyone listens). */
  readonly events: Pick<EngineEvents, 'warning' | 'listens' | 'job'>;
}

/**
 * An attempt as the completer writes it: its key (attemptKey), the row fields its statements use and its events'
 * timings read, and when its claim returned (Attempt.claimedAt).
 */
export interface Finished {
  readonly key: string;
  readonly row: HeldAttempt & Pick<ClaimedRow, 'parent' | 'remove' | 'created_on' | 'started_on' | 'start_after'>;
  readonly claimedAt: number;
}

/** How long an attempt waited (database clock) and ran (this process's clock, up to `now`), for its events. */
export function timingOf(entry: Finished, now: number): JobTiming {
  const { created_on, started_on, start_after } = entry.row;
  return {
    waitSeconds: Math.max(0, started_on - Math.max(created_on, start_after)) / 1000,
    runSeconds: Math.max(0, now - entry.claimedAt) / 1000,
  };
}

/** Tries to write a result (about 3 s in all) before leaving the job to its lease. */
const SETTLE_ATTEMPTS = 5;

/** Most attempts one settle statement writes. */
const SETTLE_BATCH_MAX = 500;

interface Outcome {
  entry: Finished;
  output: string | null;
  failure: FailureInfo | null;
}

/**
 * Group commit for results: outcomes of handlers that return in the same turn of the event loop go out
 * together (the write starts on setImmediate), and outcomes that arrive while a write is in flight wait for
 * it and go together in the next statement. An idle worker adds no round trip, and a busy one writes many
 * results per statement. `write` never throws.
 */
class OutcomeBatcher {
  private pending: (Outcome & { resolve: () => void })[] = [];
  private writing = false;

  constructor(private readonly write: (batch: Outcome[]) => Promise<void>) {}

  add(entry: Finished, output: string | null, failure: FailureInfo | null): Promise<void> {
    return new Promise((resolve) => {
      this.pending.push({ entry, output, failure, resolve });
      if (!this.writing) {
        // Marked once the flush is scheduled: were scheduling to throw, a later add() would try again.
        setImmediate(() => void this.flush());
        this.writing = true;
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, SETTLE_BATCH_MAX);
      await this.write(batch);
      for (const o of batch) o.resolve();
    }
    this.writing = false;
  }
}

/** A row a settle statement wrote; a failure's also says what became of the job (failJobs). */
interface Written {
  id: string;
  claim_count: number;
  stamp: string;
  state?: string;
  retry_in?: number | null;
  dead_letter?: string | null;
}

/** Characters of an error's message that a log line keeps. */
const LOGGED_MESSAGE_MAX = 300;

/**
 * An error's message as one line of a log: control characters (CR, LF, ESC and the others), and the Unicode line
 * and paragraph separators, become spaces, so a message cannot start a line of its own or steer a terminal.
 */
function oneLine(message: string): string {
  const cut = message.length > LOGGED_MESSAGE_MAX ? `${message.slice(0, LOGGED_MESSAGE_MAX)}…` : message;
  // eslint-disable-next-line no-control-regex -- the control characters are what is matched
  return storableText(cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' '));
}

/** Writes the ends of one worker's attempts. No method but `release` throws: what cannot be written is reported. */
export class Completer {
  private readonly completions = new OutcomeBatcher((batch) => this.writeOutcomes(batch, false));
  private readonly failures = new OutcomeBatcher((batch) => this.writeOutcomes(batch, true));

  constructor(private readonly scope: CompleterScope) {}

  /**
   * Writes an attempt's outcome, `output` when `failure` is null, batched with the worker's other outcomes;
   * settles once it is written, refused by the fence (counted), or given up (reported).
   */
  settle(entry: Finished, output: string | null, failure: FailureInfo | null): Promise<void> {
    return (failure ? this.failures : this.completions).add(entry, output, failure);
  }

  /** Hands one attempt back (no attempt counted), retried; one the fence refuses is counted stale. */
  handBack(entry: Finished): Promise<void> {
    return this.retrying(`handing back job ${entry.row.id} of queue "${this.scope.queue}"`, async () => {
      if ((await this.release([entry.row])).length === 0) this.stale(entry.row);
    });
  }

  /** Hands back jobs claimed ahead that never started, retried. */
  handBackUnstarted(rows: readonly HeldAttempt[]): Promise<void> {
    return this.retrying(`handing back jobs of queue "${this.scope.queue}" that had not started`, async () => {
      await this.release(rows);
    });
  }

  /** Hands attempts back to the queue (no attempt counted) and wakes the queue's workers: one try. */
  release(rows: readonly HeldAttempt[]): Promise<unknown[]> {
    if (rows.length === 0) return Promise.resolve([]);
    const { exec, statements, queue, workerId, channel } = this.scope;
    return exec.query(statements.releaseJobs, releaseArgs(queue, rows, workerId, channel));
  }

  /** An attempt's result was refused by the fence: this worker no longer held the job. */
  stale(row: HeldAttempt): void {
    this.scope.staleResult();
    this.scope.events.warning({
      type: 'stale-result',
      message: `job ${row.id} of queue "${this.scope.queue}" (claim ${row.claim_count}) was no longer held by this worker; its result was discarded`,
      queue: this.scope.queue,
      id: row.id,
    });
  }

  /**
   * Writes a batch of outcomes in one fenced statement. An attempt the statement did not change was no
   * longer held by this worker: its result is discarded and counted.
   */
  private async writeOutcomes(batch: Outcome[], failed: boolean): Promise<void> {
    // Completions take one of three statements by kind of job, failures one of two (see settle.ts); a batch of
    // mixed kinds, rare, is written one kind at a time.
    const kind = (o: Outcome) => (o.entry.row.parent ? 'parent' : failed ? 'leaf' : o.entry.row.remove ? 'remove' : 'keep');
    if (batch.some((o) => kind(o) !== kind(batch[0]!))) {
      for (const k of ['parent', 'remove', 'keep', 'leaf']) {
        const part = batch.filter((o) => kind(o) === k);
        if (part.length > 0) await this.writeOutcomes(part, failed);
      }
      return;
    }
    const { exec, statements, channel, queue, workerId } = this.scope;
    // Read once per batch: the statement wakes other processes' loops when the queue holds jobs back.
    const wake = this.scope.holdsBack() ? channel : null;
    /** Writes `part` with the full statement (`full`, with a flow's work) or the leaf one of its kind. */
    const settle = (part: Outcome[], full: boolean) => {
      // Array literals built here: ids and claim counts are digits, so nothing needs escaping (pg would escape
      // each element). A column that is null for every job goes as one null, which unnest pads.
      // The fence of each attempt: this worker, its claim count and its stamp, with any retry count.
      const target = {
        queue,
        ids: `{${part.map((o) => o.entry.row.id).join(',')}}`,
        retryCounts: null,
        workerId,
        claimCounts: `{${part.map((o) => o.entry.row.claim_count).join(',')}}`,
        stamps: `{${part.map((o) => o.entry.row.stamp).join(',')}}`,
      };
      if (failed) {
        const failures = {
          errors: part.map((o) => JSON.stringify(o.failure!.error)),
          permanent: part.map((o) => o.failure!.permanent),
          retryAfterSeconds: part.map((o) => o.failure!.retryAfterSeconds),
        };
        return exec.query<Written>(full ? statements.failJobs : statements.failLeafJobs, failArgs(target, failures, channel, wake));
      }
      const outputs = part.some((o) => o.output !== null) ? part.map((o) => o.output) : null;
      return full
        ? exec.query<Written>(statements.completeJobs, completeArgs(target, outputs, channel, wake))
        : exec.query<Written>(
            kind(part[0]!) === 'remove' ? statements.removeLeafJobs : statements.completeLeafJobs,
            completeLeafArgs(target, outputs, wake),
          );
    };
    // What is written, across the retries of `write` below: a retry writes only the rest.
    const written = new Map<string, Written>();
    const keep = (row: Written) => written.set(attemptKey(row), row);
    const write = async () => {
      const full = kind(batch[0]!) === 'parent';
      const pending = batch.filter((o) => !written.has(o.entry.key));
      if (pending.length > 0) for (const row of await settle(pending, full)) keep(row);
      // The claim's word that a job is no flow parent is a hint: a leaf statement leaves a job that turns out to
      // be one (NO_CHILDREN in fragments.ts), and what it left goes through the full statement before it counts
      // as refused by the fence.
      const left = full ? [] : pending.filter((o) => !written.has(o.entry.key));
      if (left.length > 0) for (const row of await settle(left, true)) keep(row);
      for (const o of batch) if (!written.has(o.entry.key)) this.stale(o.entry.row);
    };
    try {
      await write();
    } catch (err) {
      // One result the database refuses (SQLSTATE class 22, data exception) must not hold back the others:
      // they are written one by one. Anything else (a lost connection) is retried as a batch.
      if (batch.length > 1 && isDataException(err)) {
        // (each written one by one reports itself)
        for (const o of batch) if (!written.has(o.entry.key)) await this.writeOutcomes([o], failed);
      } else {
        await this.retrying(`settling ${batch.length} job(s) of queue "${queue}"`, write, err);
      }
    }
    // A logger that throws must not leave the batch unsettled (nothing would write the outcomes after it).
    try {
      if (failed && this.scope.logFailures) this.report(batch, written);
      this.announce(batch, written, failed);
    } catch (err) {
      this.scope.error(err, `reporting the outcomes of queue "${queue}"`);
    }
  }

  /** A completion written outside the completer (a transactional handler's, with its transaction): its event. */
  announceCompleted(entry: Finished): void {
    const { events, queue } = this.scope;
    if (events.listens('completed')) events.job('completed', { queue, id: entry.row.id, ...timingOf(entry, Date.now()) });
  }

  /** Emits the lifecycle events of the outcomes of `batch` that were written, for the events anyone listens to. */
  private announce(batch: readonly Outcome[], written: ReadonlyMap<string, Written>, failed: boolean): void {
    const { events, queue } = this.scope;
    if (!failed) {
      if (!events.listens('completed')) return;
      const now = Date.now();
      for (const o of batch)
        if (written.has(o.entry.key)) events.job('completed', { queue, id: o.entry.row.id, ...timingOf(o.entry, now) });
      return;
    }
    const [onFailed, onRetrying] = [events.listens('failed'), events.listens('retrying')];
    if (!onFailed && !onRetrying) return;
    const now = Date.now();
    for (const o of batch) {
      const row = written.get(o.entry.key);
      if (!row || !o.failure) continue;
      const willRetry = row.state === 'retry';
      const retryInSeconds = willRetry ? (row.retry_in ?? null) : null;
      const error = o.failure.error;
      if (onFailed)
        events.job('failed', {
          queue,
          id: row.id,
          ...timingOf(o.entry, now),
          error,
          willRetry,
          retryInSeconds,
          deadLetter: willRetry ? null : (row.dead_letter ?? null),
        });
      if (willRetry && onRetrying) events.job('retrying', { queue, id: row.id, error, retryInSeconds });
    }
  }

  /**
   * Logs each failure of `batch` that was written: a warning for an attempt that will be retried (when), an error
   * for a job that failed for good (and its dead-letter queue). A failure the fence refused is not the worker's.
   */
  private report(batch: readonly Outcome[], written: ReadonlyMap<string, Written>): void {
    for (const o of batch) {
      const row = written.get(o.entry.key);
      if (!row || !o.failure) continue;
      const { message, retryCount } = o.failure.error;
      const what = `job ${row.id} of queue "${this.scope.queue}" failed (attempt ${(retryCount ?? 0) + 1}): ${oneLine(message)}`;
      if (row.state === 'retry') this.scope.log.warn(`${what}; it will be retried in ${row.retry_in ?? 0} s`);
      else
        this.scope.log.error(
          `${what}; it failed for good${row.dead_letter ? ` (the queue's dead-letter queue: "${row.dead_letter}")` : ''}`,
        );
    }
  }

  /**
   * Runs a fenced write, retrying it a few times when the database is briefly unreachable instead of
   * leaving the jobs active until their lease runs out and running them again. Never throws.
   */
  private async retrying(what: string, write: () => Promise<void>, firstError?: unknown): Promise<void> {
    let failure = firstError;
    let tries = firstError === undefined ? 0 : 1;
    for (;;) {
      if (failure !== undefined) {
        if (isDataException(failure)) {
          // It would fail the same way every time. The jobs stay active until their lease runs out.
          this.scope.error(failure, `${what} (refused by the database)`);
          return;
        }
        if (tries >= SETTLE_ATTEMPTS) {
          // The jobs stay active under their lease; when it runs out they go back to the queue.
          this.scope.error(failure, `${what} (gave up after ${tries} tries)`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
      }
      tries++;
      try {
        await write();
        return;
      } catch (err) {
        failure = err;
      }
    }
  }
}
