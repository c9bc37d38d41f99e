// The batch queue: a batch handler's loop runs each claim as one handler call. A claim waits here only until a
// call is free, which it is whenever the loop claims (the loop asks room() first), so no job of a batch waits
// for a slot with its lease running, and nothing is claimed ahead.
import type { ParsedWorkOptions } from '../../config/options.js';
import type { ClaimedRow } from './claim.js';
import type { Dispatcher } from './local-queue.js';

/** What the batch queue asks of the worker that owns it. */
export interface BatchQueueOwner {
  /** Runs `rows` as one handler call; `free` is called once, when the call no longer holds its place. */
  startBatch(rows: ClaimedRow[], claimedAt: number, free: () => void): void;
}

/** A batch handler's claims, each started as one call, at most `concurrency` calls at once. */
export class BatchQueue implements Dispatcher {
  private readonly waiting: { rows: ClaimedRow[]; claimedAt: number }[] = [];
  /** Handler calls holding their place. */
  private running = 0;
  private stopped = false;
  private readonly concurrency: number;
  private readonly batchSize: number;

  constructor(
    options: Pick<ParsedWorkOptions, 'concurrency' | 'batchSize'>,
    private readonly owner: BatchQueueOwner,
  ) {
    this.concurrency = options.concurrency;
    this.batchSize = options.batchSize;
  }

  get length(): number {
    let n = 0;
    for (const w of this.waiting) n += w.rows.length;
    return n;
  }

  /**
   * A batch's worth when a call is free and no claim waits, else nothing: never part of one, so that results still
   * being written do not cut batches short. Those are bounded as for single jobs: no more than the jobs of
   * `concurrency` batches besides those running.
   */
  room(_limited: boolean, _busy: number, attempts: number): number {
    if (this.stopped || this.waiting.length > 0 || this.running >= this.concurrency) return 0;
    return 2 * this.concurrency * this.batchSize - attempts >= this.batchSize ? this.batchSize : 0;
  }

  /** A batch handler's loop claims a batch only for a free call: nothing waits ahead, so nothing deepens. */
  claimSent(): void {}

  claimReturned(): void {}

  push(rows: readonly ClaimedRow[], claimedAt: number): void {
    if (this.stopped) throw new Error('the batch queue is stopped: jobs claimed now must be handed back');
    if (rows.length > 0) this.waiting.push({ rows: [...rows], claimedAt });
  }

  dispatch(): void {
    while (!this.stopped && this.waiting.length > 0 && this.running < this.concurrency) {
      const next = this.waiting.shift()!;
      this.running++;
      let freed = false;
      this.owner.startBatch(next.rows, next.claimedAt, () => {
        if (freed) return;
        freed = true;
        this.running--;
      });
    }
  }

  /** A call's end frees its place through the callback startBatch got; nothing else resumes. */
  resume(): void {}

  stop(): ClaimedRow[] {
    this.stopped = true;
    return this.waiting.splice(0).flatMap((w) => w.rows);
  }
}
