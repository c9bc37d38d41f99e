// One attempt at a job, from the moment it takes a slot until its outcome is written or given up, and the
// table of a worker's attempts, which counts the slots they hold. The attempt's `state` is the one record
// of where it is; every path of the worker moves it through the methods below, which refuse a move the
// machine does not have, so a bug shows up as a thrown error instead of a slot counted twice.
import type { JobTransaction } from './transaction.js';
import type { ClaimedRow } from '../intake/claim.js';
import { LazyAbort } from './claimed-job.js';
import type { LocalGroups } from '../intake/local-groups.js';

/**
 * Where an attempt is:
 *
 * ```
 *   running ──settle()──▶ settling ──finish()──▶ done
 *      │ └──────────────────finish()──────────────▲
 *      └──release()──▶ released ──finish()────────┘
 * ```
 *
 * - `running`: the handler has not returned; it holds a slot, its lease is swept and its heartbeat sent.
 * - `settling`: the handler returned; its outcome is being written. Its slot is free (the write goes out with
 *   others), the lease sweep and the heartbeats leave it alone, and shutdown waits for it, never hands it back.
 * - `released`: cut off by its lease or handed back at shutdown while the handler still ran. Its slot is free,
 *   it has left the worker's table, and whatever the handler returns later is ignored.
 * - `done`: the attempt's promise has settled. `running → done` directly is an engine failure mid-attempt
 *   (reported; the job stays under its lease until the reaper takes it back).
 */
export type AttemptState = 'running' | 'settling' | 'released' | 'done';

/** One attempt: a job, its claim count and its stamp (the same job may be claimed again while a stale attempt runs). */
export function attemptKey(r: { id: string; claim_count: number; stamp: string }): string {
  return `${r.id}:${r.claim_count}:${r.stamp}`;
}

const SETTLED: Promise<void> = Promise.resolve();

/** One attempt at a claimed job: its row, its lease, its signal and (transactional) its transaction. */
export class Attempt {
  /** attemptKey of the row. */
  readonly key: string;
  readonly abort = new LazyAbort();
  /** When the lease (expireInSeconds, from the claim) runs out, in ms since the epoch: see LeaseClock. */
  readonly leaseEnd: number;
  /** When the claim that took the job returned, in ms since the epoch (this process's clock). */
  readonly claimedAt: number;
  /** A transactional handler's transaction, once begun: given up when the attempt is cut off or handed back. */
  tx: JobTransaction | null = null;
  /** Settles when the attempt is done (set once, by whoever runs it). */
  finished: Promise<void> = SETTLED;
  #state: AttemptState = 'running';

  constructor(
    readonly row: ClaimedRow,
    claimedAt: number,
  ) {
    this.key = attemptKey(row);
    this.claimedAt = claimedAt;
    // The lease began at the claim, not when the job left the local queue.
    this.leaseEnd = claimedAt + row.expire_seconds * 1000;
  }

  get state(): AttemptState {
    return this.#state;
  }

  /** Cut off or handed back: whatever its handler returns now is ignored. */
  get released(): boolean {
    return this.#state === 'released';
  }

  /** The handler returned: its outcome is written next. */
  settle(): void {
    if (this.#state !== 'running') this.refuse('settling');
    this.#state = 'settling';
  }

  /** Cut off by its lease, or handed back at shutdown, while the handler still runs. */
  release(): void {
    if (this.#state !== 'running') this.refuse('released');
    this.#state = 'released';
  }

  /** The attempt's promise settled. */
  finish(): void {
    if (this.#state === 'done') this.refuse('done');
    this.#state = 'done';
  }

  private refuse(to: AttemptState): never {
    throw new Error(`attempt ${this.key} cannot go from ${this.#state} to ${to}`);
  }
}

/**
 * The attempts a worker runs, by key, and how many of them hold a slot (`running`). Counting here, as the
 * states move, keeps the count exact without a scan: the loop asks for it before every claim.
 */
export class Attempts {
  private readonly byKey = new Map<string, Attempt>();
  #busy = 0;

  /** `groups`: counts the slots per group too (localGroupConcurrency), as they are taken and freed here. */
  constructor(private readonly groups: LocalGroups | null = null) {}

  /** Attempts whose handler holds a slot (state `running`). */
  get busy(): number {
    return this.#busy;
  }

  /** Attempts in the table: running, or settling. */
  get size(): number {
    return this.byKey.size;
  }

  values(): IterableIterator<Attempt> {
    return this.byKey.values();
  }

  /** The attempt is this table's own (not a stale one under the same key, not released or done). */
  holds(attempt: Attempt): boolean {
    return this.byKey.get(attempt.key) === attempt;
  }

  /** A claimed job takes a slot. */
  begin(row: ClaimedRow, claimedAt: number): Attempt {
    const attempt = new Attempt(row, claimedAt);
    this.byKey.set(attempt.key, attempt);
    this.#busy++;
    this.groups?.start(row);
    return attempt;
  }

  /** The handler returned: its slot frees while its outcome is written. */
  settle(attempt: Attempt): void {
    attempt.settle();
    this.#busy--;
    this.groups?.end(attempt.row);
  }

  /** The attempt is cut off or handed back: it frees its slot and leaves the table. */
  release(attempt: Attempt): void {
    attempt.release();
    this.#busy--;
    this.groups?.end(attempt.row);
    if (this.holds(attempt)) this.byKey.delete(attempt.key);
  }

  /** The attempt's promise settled: it leaves the table, and its slot if it still held one. */
  finish(attempt: Attempt): void {
    if (attempt.state === 'running') {
      this.#busy--;
      this.groups?.end(attempt.row);
    }
    attempt.finish();
    if (this.holds(attempt)) this.byKey.delete(attempt.key);
  }

  /** Settles when every attempt now in the table is done. */
  allFinished(): Promise<unknown> {
    return Promise.allSettled([...this.byKey.values()].map((a) => a.finished));
  }
}
