// The local queue: jobs a worker claimed ahead of its free slots, waiting here for one. Claiming ahead (a
// batchSize above concurrency) means a fast handler never waits for a round trip between batches; the cost
// is a lease that runs while a job waits, so each waiting job has a deadline and the queue backs off when
// jobs reach it.
import type { ParsedWorkOptions } from '../../config/options.js';
import type { ClaimedRow } from './claim.js';

/**
 * The local queue's modes (after Graphile Worker's LocalQueue):
 *
 * ```
 *   ahead ──a waiting job reached its deadline──▶ paused
 *     ▲                                             │
 *     └──────────── a handler returned ◀────────────┘
 *   ahead, paused ──stop()──▶ stopped
 * ```
 *
 * - `ahead`: where the queue allows it (no concurrency or rate limit, no group limits: a job waiting here
 *   would hold a limited slot idle), the loop claims up to batchSize jobs, more than its free slots; once its
 *   handlers ran dry while a full claim was out (claimReturned), up to two claims of batchSize, so the next
 *   claim is in flight while a whole batch still waits.
 * - `paused`: a job waited here past its deadline, so handlers are slower than the batch can wait for:
 *   the job was handed back (no attempt counted) and the loop claims no more than its free slots until a
 *   handler returns, and then one claim ahead again, not two.
 * - `stopped`: shutdown took every waiting job back; nothing starts from here and nothing may come in.
 */
export type LocalQueueMode = 'ahead' | 'paused' | 'stopped';

/**
 * Where a worker's claimed jobs go before their handler starts, as the loop sees it: the local queue (one handler
 * call per job) or the batch queue (one call per claim, BatchQueue).
 */
export interface Dispatcher {
  /** Jobs claimed and not started. */
  readonly length: number;
  /** Jobs the loop may claim now (see LocalQueue.room). */
  room(limited: boolean, busy: number, attempts: number): number;
  /** A claim's jobs, whose lease runs from `claimedAt`. */
  push(rows: readonly ClaimedRow[], claimedAt: number): void;
  /** Starts what may start. */
  dispatch(): void;
  /** A handler returned. */
  resume(): void;
  /** A claim goes out (see LocalQueue.claimSent). */
  claimSent(): void;
  /** The claim came back with `got` of the `limit` jobs it asked for, before they join (see LocalQueue.claimReturned). */
  claimReturned(got: number, limit: number): void;
  /** Shutdown: takes out what has not started, to be handed back. */
  stop(): ClaimedRow[];
}

/** What the local queue asks of the worker that owns it. */
export interface LocalQueueOwner {
  /** Handlers holding a slot now. */
  readonly busy: number;
  /** Starts a waiting job on a free slot. */
  start(row: ClaimedRow, claimedAt: number): void;
  /** Hands back jobs that waited past their deadline (never empty). */
  expired(rows: ClaimedRow[]): void;
}

interface Waiting {
  row: ClaimedRow;
  claimedAt: number;
}

/** How long a claimed job may wait for a slot: half its lease (or heartbeat interval). */
function waitLimitMs(row: ClaimedRow): number {
  return (Math.min(row.expire_seconds, row.heartbeat_seconds ?? Infinity) * 1000) / 2;
}

/** A worker's claimed-ahead jobs, started in claim order as slots free, each held to its own deadline. */
export class LocalQueue implements Dispatcher {
  private readonly waiting: Waiting[] = [];
  #mode: LocalQueueMode = 'ahead';
  /** The soonest deadline of a waiting job (a lower bound: kept as jobs arrive, exact after a scan). */
  private deadline = Infinity;
  /** The timer that looks at the deadlines again, and when it fires. */
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  /** Set while dispatch() starts jobs: see there. */
  private starting = false;
  /** Claims of batchSize the loop may hold when claiming ahead: two once its handlers ran dry (claimReturned). */
  private claims: 1 | 2 = 1;
  /** Deadline hand-backs so far, and what waited (and how many hand-backs) when the claim in flight went out. */
  private handBacks = 0;
  private sent: { waiting: number; handBacks: number } | null = null;

  private readonly concurrency: number;
  private readonly batchSize: number;
  /** Group limits (in the database or the loop's): what may start is decided per group, so no job waits here for a slot. */
  private readonly grouped: boolean;

  constructor(
    options: Pick<ParsedWorkOptions, 'concurrency' | 'batchSize' | 'groupConcurrency'> &
      Partial<Pick<ParsedWorkOptions, 'localGroupConcurrency'>>,
    private readonly owner: LocalQueueOwner,
  ) {
    this.concurrency = options.concurrency;
    this.batchSize = options.batchSize;
    // local group limits: the claim knows only the running jobs' groups, so every claimed job must start at once
    this.grouped = options.groupConcurrency !== null || (options.localGroupConcurrency ?? null) !== null;
  }

  get mode(): LocalQueueMode {
    return this.#mode;
  }

  /** Jobs waiting for a slot. */
  get length(): number {
    return this.waiting.length;
  }

  /**
   * Slots for new claims. `limited`: the queue has a concurrency or rate limit (its profile, which a recheck
   * may change). `busy`: handlers holding a slot; `attempts`: those and the attempts whose results are being
   * written. A handler holds its slot until it returns, not while its result is written (that result goes
   * out with others in one statement). Results waiting to be written take room too once there are more than a
   * batch (the slots, when not claiming ahead), so a slow database slows the claims down.
   */
  room(limited: boolean, busy: number, attempts: number): number {
    const ahead = !limited && !this.grouped && this.#mode === 'ahead';
    const batch = Math.max(this.concurrency, ahead ? this.batchSize : 0);
    const held = Math.max(this.concurrency, ahead ? this.claims * this.batchSize : 0);
    return Math.min(held - busy - this.waiting.length, held + batch - attempts - this.waiting.length);
  }

  /** Claimed jobs join the queue; their lease (and so their deadline) runs from `claimedAt`. */
  push(rows: readonly ClaimedRow[], claimedAt: number): void {
    if (this.#mode === 'stopped') throw new Error('the local queue is stopped: jobs claimed now must be handed back');
    for (const row of rows) {
      this.waiting.push({ row, claimedAt });
      this.deadline = Math.min(this.deadline, claimedAt + waitLimitMs(row));
    }
  }

  /** Starts waiting jobs while slots are free; hands back those that waited too long. */
  dispatch(): void {
    if (this.#mode === 'stopped') return;
    const now = Date.now();
    // Leases and heartbeat intervals differ per job: each waiting job is held to its own deadline. The
    // list is scanned only once the soonest deadline (a lower bound, kept as jobs arrive) has come.
    let stale: ClaimedRow[] | null = null;
    if (now >= this.deadline) {
      const kept: Waiting[] = [];
      let soonest = Infinity;
      for (const w of this.waiting) {
        const deadline = w.claimedAt + waitLimitMs(w.row);
        if (now >= deadline) (stale ??= []).push(w.row);
        else {
          kept.push(w);
          soonest = Math.min(soonest, deadline);
        }
      }
      this.waiting.splice(0, this.waiting.length, ...kept);
      this.deadline = soonest;
    }
    // Starting is never re-entered. A handler that throws synchronously returns inside start(), and its worker
    // calls dispatch() again from there: that nested call starts nothing, and this loop, which reads the owner's
    // count at each turn, fills the slot it freed. Nested, a batch of such handlers took stack frames per job
    // (a RangeError past about a thousand) and started one job more than `concurrency`.
    if (!this.starting) {
      this.starting = true;
      try {
        while (this.mode !== 'stopped' && this.waiting.length > 0 && this.owner.busy < this.concurrency) {
          const next = this.waiting.shift()!;
          this.owner.start(next.row, next.claimedAt);
        }
      } finally {
        this.starting = false;
      }
    }
    if (stale) {
      // A handler started above may have stopped the worker (offWork from inside it): stopped stays final.
      if (this.mode !== 'stopped') this.#mode = 'paused';
      this.claims = 1;
      this.handBacks++;
      this.owner.expired(stale);
    }
    this.rearm(now);
  }

  /** A claim goes out: what waits now, to tell when it returns whether the handlers ran dry meanwhile. */
  claimSent(): void {
    this.sent = { waiting: this.waiting.length, handBacks: this.handBacks };
  }

  /**
   * The claim came back with `got` of the `limit` jobs it asked for (before they join). Two claims are held from
   * now on when the handlers outran it: jobs waited when it went out, none was handed back meanwhile, none waits
   * now, a slot is idle, and it came back full (a backlog is there to hold). One again when a claim comes back
   * short (the queue is drained) or a waiting job reaches its deadline. Only where a batch is larger than the
   * slots (docs/design.md, "Two claims in hand").
   */
  claimReturned(got: number, limit: number): void {
    const sent = this.sent;
    this.sent = null;
    if (got < limit) this.claims = 1;
    else if (
      sent !== null &&
      sent.waiting > 0 &&
      sent.handBacks === this.handBacks &&
      this.waiting.length === 0 &&
      this.owner.busy < this.concurrency &&
      this.#mode === 'ahead' &&
      this.batchSize > this.concurrency
    )
      this.claims = 2;
  }

  /** A handler returned: slots free up again, so claiming ahead may go on. */
  resume(): void {
    if (this.#mode === 'paused') this.#mode = 'ahead';
  }

  /** Shutdown: takes every waiting job out (to be handed back); nothing starts from here again. */
  stop(): ClaimedRow[] {
    this.#mode = 'stopped';
    this.clearTimer();
    this.deadline = Infinity;
    return this.waiting.splice(0).map((w) => w.row);
  }

  /** Keeps one timer, for the soonest deadline, while jobs wait (unref'd: waiting jobs keep no process alive). */
  private rearm(now: number): void {
    if (this.waiting.length === 0) {
      this.deadline = Infinity;
      this.clearTimer();
    } else if (this.timerAt !== this.deadline) {
      if (this.timer) clearTimeout(this.timer);
      this.timerAt = this.deadline;
      this.timer = setTimeout(
        () => {
          this.timer = null;
          this.timerAt = Infinity;
          this.dispatch();
        },
        Math.max(0, this.deadline - now),
      );
      this.timer.unref();
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Forgotten with the timer: a later deadline at the same instant must arm a timer of its own.
    this.timerAt = Infinity;
  }
}
