// The worker loop: claims jobs for one queue and runs their handlers, composed of the worker path's parts:
// claims go to the local queue, which starts them as attempts on free slots; the lease clock watches their
// leases; the completer writes how they end. The loop itself keeps only what concerns the loop: when to
// claim, when to sleep, how to stop.
import type { ParsedWorkOptions } from '../config/options.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import type { Statements } from '../sql/index.js';
import type { BatchHandler, JobHandler } from '../types.js';
import { Attempts, type Attempt } from './attempt/attempt.js';
import { AttemptRunner, type AttemptRunnerScope } from './attempt/attempt-runner.js';
import {
  claimJobs,
  holdsJobsBack,
  newHolderId,
  PROFILE_RECHECK_MS,
  type ClaimContext,
  type ClaimedRow,
  type ClaimProfile,
} from './intake/claim.js';
import { Completer, type CompleterScope } from './completer.js';
import { delay, drain, type DrainParts } from './drain.js';
import { DueClock } from './due-clock.js';
import { describeFailure } from './attempt/failure.js';
import { LeaseClock, type LeaseClockScope } from './lease-clock.js';
import { LocalGroups } from './intake/local-groups.js';
import { LocalQueue, type Dispatcher } from './intake/local-queue.js';
import { SlowClaims } from './intake/slow-claims.js';
import type { LoopContext } from './loop-context.js';
import { BatchQueue } from './intake/batch-queue.js';
import { BatchRunner } from './attempt/batch-runner.js';

/**
 * What the parts of one worker share: the engine's services, the queue and the worker's id, and where the
 * queue's jobs are now. `profile` and `statements` start as the context's; only `WorkerLoop.recheck` replaces them.
 */
interface WorkerScope extends ClaimContext, LeaseClockScope, CompleterScope, AttemptRunnerScope {
  profile: ClaimProfile;
  statements: Statements;
}

/**
 * One claim loop for one queue. It claims at most its free slots, or, claiming ahead, as the local queue's room
 * allows (intake/local-queue.ts: each waiting job handed back at half its lease); it sleeps when the queue is
 * drained until a NOTIFY, a freed slot, the moment the queue's next waiting job becomes due (DueClock), or the
 * polling interval wakes it.
 */
export class WorkerLoop {
  private stopping = false;
  private readonly scope: WorkerScope;
  private readonly attempts: Attempts;
  /** The running jobs per group, under localGroupConcurrency (null: the option is unset). */
  private readonly groups: LocalGroups | null;
  private readonly local: Dispatcher;
  /** A batch handler's calls (WorkOptions.batch); null for a handler of one job. */
  private readonly batches: BatchRunner | null = null;
  private readonly clock: LeaseClock;
  private readonly completer: Completer;
  private readonly runner: AttemptRunner;
  private readonly due: DueClock;
  /** When this worker last read its queue's profile again (recheck). */
  private recheckedAt = Date.now();
  private loop: Promise<void> | null = null;
  /** A NOTIFY arrived since the last claim began: claim again before sleeping. */
  private notified = false;
  private waitingForWork = false;
  private wakeUp: (() => void) | null = null;
  /** Sets the sleeping loop's timer again (a NOTIFY announced a job due before it rings). */
  private rearm: (() => void) | null = null;
  private readonly slowClaims: SlowClaims;
  private readonly drainParts: DrainParts;

  constructor(
    private readonly ctx: LoopContext,
    readonly queue: string,
    private readonly options: ParsedWorkOptions,
    handler: JobHandler | BatchHandler,
    /** The `worker_id` of the jobs it claims: never two loops' (a loop started again gets a new one). */
    readonly id: string = newHolderId(),
  ) {
    this.scope = {
      exec: ctx.exec,
      schema: ctx.schema,
      channel: ctx.channel,
      log: ctx.log,
      logFailures: ctx.logFailures,
      profile: ctx.profile,
      statements: ctx.statements,
      queue,
      workerId: this.id,
      connect: () => ctx.connect(),
      staleResult: () => ctx.staleResult(),
      holdsBack: () => this.holdsBack(),
      error: (err, context) => ctx.error(err, context),
      events: ctx.events,
      tracing: ctx.tracing,
    };
    // a group at its local limit had jobs passed over: the loop looks again once it has room
    this.groups = options.localGroupConcurrency ? new LocalGroups(options.localGroupConcurrency, () => this.notify()) : null;
    const attempts = (this.attempts = new Attempts(this.groups));
    this.due = new DueClock(this.scope);
    this.completer = new Completer(this.scope);
    this.clock = new LeaseClock(this.scope, attempts, (attempt) => this.expire(attempt), options.heartbeatRefreshSeconds);
    this.slowClaims = new SlowClaims(queue, ctx.slowClaimMs, ctx.events);
    this.runner = new AttemptRunner(this.scope, handler as JobHandler, options.transactional, this.clock, this.completer, (attempt) =>
      this.returned(attempt),
    );
    this.drainParts = {
      attempts,
      runner: this.runner,
      completer: this.completer,
      queue,
      log: ctx.log,
      error: (err, context) => ctx.error(err, context),
    };
    if (options.batch) {
      const batches = new BatchRunner(this.scope, handler as BatchHandler, options.perJobResults, this.clock, this.runner, (a) =>
        this.returned(a),
      );
      this.batches = batches;
      this.local = new BatchQueue(options, {
        startBatch: (rows, claimedAt, free) => {
          const batch = rows.map((row) => this.begin(row, claimedAt));
          const ends = batches.run(batch, () => {
            free();
            this.wakeForSlot();
          });
          batch.forEach((attempt, i) => this.follow(attempt, ends[i]!));
        },
      });
      return;
    }
    this.local = new LocalQueue(options, {
      get busy() {
        return attempts.busy;
      },
      start: (row, claimedAt) => this.execute(row, claimedAt),
      expired: (rows) => {
        void this.completer
          .release(rows)
          .catch((err) => this.scope.error(err, `handing back ${rows.length} job(s) of queue "${queue}" that waited too long for a slot`));
        this.wakeForSlot();
      },
    });
  }

  /** Starts the loop; it runs until `stop`. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Jobs were inserted into this worker's queue, or some of its jobs may be claimable now. */
  notify(): void {
    this.notified = true;
    if (this.waitingForWork) this.wakeUp?.();
  }

  /** A NOTIFY for this worker's queue: a job may run now (`dueInMs` 0), or becomes due in `dueInMs`. */
  heard(dueInMs: number): void {
    if (dueInMs <= 0) this.notify();
    else if (this.due.announce(dueInMs) && this.waitingForWork) this.rearm?.();
  }

  /** The LISTEN connection came back: what it would have said meanwhile is lost, so the loop looks again. */
  reconnected(): void {
    this.due.expire();
    this.notify();
  }

  /** How many jobs the loop runs at once. */
  get concurrency(): number {
    return this.options.concurrency;
  }

  get activeCount(): number {
    return this.attempts.size;
  }

  private async run(): Promise<void> {
    let errorDelayMs = 0;
    while (!this.stopping) {
      const free = this.local.room(this.scope.profile.limited, this.attempts.busy, this.attempts.size);
      // With jobs waiting locally there is no hurry: claim again once a good part of a batch fits.
      if (free <= 0 || (this.local.length > 0 && free < Math.ceil(this.options.batchSize / 2))) {
        await this.sleep(null, false);
        continue;
      }
      const limit = Math.min(free, this.options.batchSize);
      this.notified = false;
      this.local.claimSent();
      let rows: ClaimedRow[];
      let claimMs: number;
      try {
        const claimStarted = performance.now();
        rows = await claimJobs(this.scope, this.queue, this.scope.profile, limit, this.id, {
          groups: this.options.groupConcurrency,
          localGroups: this.groups?.claimArgs() ?? null,
          asyncCommit: true,
        });
        claimMs = performance.now() - claimStarted;
        errorDelayMs = 0;
        // a short claim of a limited queue may have met (or filled) a rate window, which the due clock reads the end of
        if (rows.length < limit && this.scope.profile.limited) this.due.expire();
        // an empty claim may come from a table the queue's jobs left (deleted and made again): looked at every 5 s
        if (rows.length === 0 && Date.now() - this.recheckedAt >= PROFILE_RECHECK_MS) await this.recheck();
      } catch (err) {
        // undefined_table: the queue's partition is gone
        if (sqlState(err) === SQLSTATE.undefinedTable) await this.recheck().catch(() => undefined);
        this.scope.error(err, `claiming jobs of queue "${this.queue}"`);
        errorDelayMs = Math.min(Math.max(errorDelayMs * 2, 200), 10_000);
        await this.sleep(errorDelayMs, false);
        continue;
      }
      if (this.stopping) {
        // A claim that returns during shutdown starts nothing (and stop() may have given up waiting for it).
        await this.completer
          .release(rows)
          .catch((err) => this.scope.error(err, `handing back jobs of queue "${this.queue}" claimed after stop`));
        return;
      }
      this.local.claimReturned(rows.length, limit);
      this.local.push(rows, Date.now());
      // reported once the claimed jobs are in hand: a report that went wrong must not drop them
      this.slowClaims.timed(claimMs);
      this.local.dispatch();
      if (rows.length < limit) {
        // A failed read costs only precision: the loop sleeps for the polling interval, and reads again after it.
        await this.due.refresh().catch((err) => this.scope.error(err, `reading when the next job of queue "${this.queue}" is due`));
        await this.sleep(this.options.pollingIntervalSeconds * 1000, true);
      }
    }
  }

  /** Takes the queue's profile and statements anew when `ctx.recheck` finds them other than this worker's. */
  private async recheck(): Promise<void> {
    this.recheckedAt = Date.now();
    const fresh = await this.ctx.recheck(this.scope.profile);
    if (fresh) {
      this.scope.profile = fresh.profile;
      this.scope.statements = fresh.statements;
      this.scope.log.warn(
        `queue "${this.queue}" was made again since this worker started (its jobs are now in ${fresh.profile.jobsTable}); claiming from there`,
      );
    }
  }

  /**
   * Waits for a wake-up (a freed slot, stop, and with `forWork` a NOTIFY or the queue's next due time) or `ms`.
   * A sleep for work that ends on its timer leaves the due clock out of date: it stood for a job that is due
   * now, or it is time to poll.
   */
  private sleep(ms: number | null, forWork: boolean): Promise<void> {
    if (this.stopping || (forWork && this.notified)) return Promise.resolve();
    return new Promise((resolve) => {
      const until = ms === null ? null : Date.now() + ms;
      let timer: NodeJS.Timeout | null = null;
      const done = (rang: boolean): void => {
        if (timer) clearTimeout(timer);
        this.wakeUp = null;
        this.rearm = null;
        this.waitingForWork = false;
        if (rang && forWork) this.due.expire();
        resolve();
      };
      const arm = (): void => {
        if (timer) clearTimeout(timer);
        if (until === null) return;
        const left = Math.max(0, until - Date.now());
        timer = setTimeout(() => done(true), forWork ? this.due.sleepFor(left) : left);
      };
      arm();
      this.waitingForWork = forWork;
      this.wakeUp = () => done(false);
      this.rearm = forWork ? arm : null;
    });
  }

  /**
   * Whether a finished job may release another of this queue: its policy holds jobs back behind a key or a slot,
   * or a concurrency limit or group limits do. A plain queue's jobs wait for nothing but a slot of this loop.
   */
  private holdsBack(): boolean {
    return holdsJobsBack(this.scope.profile) || this.options.groupConcurrency !== null;
  }

  /** A freed slot matters to a loop that is waiting because it was full, not to one whose queue was drained. */
  private wakeForSlot(): void {
    if (!this.waitingForWork) this.wakeUp?.();
  }

  /** A job from the local queue takes a slot and its handler starts. */
  private execute(row: ClaimedRow, claimedAt: number): void {
    const attempt = this.begin(row, claimedAt);
    this.follow(attempt, this.runner.run(attempt));
  }

  /** A claimed job takes a slot, its lease watched. */
  private begin(row: ClaimedRow, claimedAt: number): Attempt {
    const attempt = this.attempts.begin(row, claimedAt);
    this.clock.track(attempt);
    return attempt;
  }

  /** What follows an attempt once `ran` (its run, or its batch's) settles. */
  private follow(attempt: Attempt, ran: Promise<void>): void {
    // run() never rejects; what follows it must not either: nothing awaits `finished` but stop().
    attempt.finished = ran.then(() => {
      try {
        this.attempts.finish(attempt);
        this.local.dispatch();
        // Its outcome is written: on a queue that holds jobs back, it may have freed one (the next job of its key,
        // a singleton or concurrency slot, a group's turn), which this loop claims now, not at its next poll
        // (the NOTIFY its settle statement sent wakes the loops of other processes).
        // Both wake-ups: notify() reaches a loop that waits for work, wakeForSlot() one that waits for a slot.
        if (this.holdsBack()) this.notify();
        this.wakeForSlot();
      } catch (err) {
        this.scope.error(err, `the loop of queue "${this.queue}" after job ${attempt.row.id}`);
      }
    });
  }

  /** The handler returned: its slot is free while its result is written. */
  private returned(attempt: Attempt): void {
    this.attempts.settle(attempt);
    this.local.resume();
    this.local.dispatch();
    this.wakeForSlot();
  }

  /**
   * The handler outlived its lease: the attempt is over. Its signal is aborted, its slot freed (a handler
   * that never settles must not stall the loop), and the attempt fails now, fenced, with LeaseExpiredError
   * (retried while retries remain), without waiting for the reaper. A result it returns later is ignored.
   */
  private expire(attempt: Attempt): void {
    if (attempt.state !== 'running' || !this.attempts.holds(attempt)) return;
    const { row } = attempt;
    const message = `the handler did not finish within the lease of ${row.expire_seconds} seconds`;
    this.attempts.release(attempt);
    this.batches?.released(attempt);
    this.runner.cutOff(attempt, new Error(`job ${row.id}: ${message}`), new Error(`job ${row.id}: ${message}`));
    this.local.dispatch();
    this.wakeForSlot();
    const error = Object.assign(new Error(message), { name: 'LeaseExpiredError' });
    void this.runner.settle(attempt, null, describeFailure(error, row.retry_count));
  }

  /**
   * Stops claiming and waits up to `timeoutMs` for running handlers. Then it aborts their signals,
   * gives them a moment to return (a result is kept; a throw hands the job back), and hands back the
   * jobs of handlers that are still running, at once and with no attempt counted (drain.ts).
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    const deadline = Date.now() + timeoutMs;
    // Jobs claimed ahead never started: they go back at once, no attempt counted (before waiting for a
    // claim in flight, which a slow database may hold up). A claim that returns later hands its jobs back.
    const notStarted = this.local.stop();
    const handingBack = notStarted.length === 0 ? Promise.resolve() : this.completer.handBackUnstarted(notStarted);
    // A claim in flight normally answers at once; a database that does not answer must not hold shutdown.
    const claimWait = delay(timeoutMs);
    await Promise.race([this.loop, claimWait.promise]);
    claimWait.cancel();
    await handingBack;
    await drain(this.drainParts, deadline);
    await this.clock.stop();
  }
}
