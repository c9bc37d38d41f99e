// The bookkeeping of an engine's loops, without a database or a timer: which loops run, which stop (each
// listed with its drain until the drain ends), and which are held stopped by queue (stopWorking) to start again
// (startWorking). The loop registry (registry.ts) decides when; this table only records, so its rules are
// tested against fake loops (test/unit/loop-table.spec.ts).

/** What the table needs of a loop. */
export interface TableLoop {
  readonly id: string;
  readonly queue: string;
  /** Claims no more and drains its attempts within `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
}

/** What the table needs of a loop's definition (one work() call): `id` is what work() returned. */
export interface TableDefinition {
  readonly id: string;
  readonly name: string;
}

/** Which loops a stop call picks. */
export type Picks<L> = (loop: L) => boolean;

/** An engine's loops: running, stopping, and held (by queue) to start again. */
export class LoopTable<L extends TableLoop, D extends TableDefinition> {
  /** Every loop until its drain ends, by its id, with the definition it runs. */
  private readonly loops = new Map<string, { loop: L; def: D }>();
  /** Loops stopping: each one's drain, until it is done. */
  private readonly stopping = new Map<L, Promise<void>>();
  /** Definitions held stopped (stopWorking, or made while their queue is held), until startWorking(). */
  private held: D[] = [];
  /** Every queue is held (startWorkers false, or stopWorking() with no name), but those in `released`. */
  private holdAll: boolean;
  private readonly released = new Set<string>();
  /** The queues held by name (stopWorking(name)). */
  private readonly heldQueues = new Set<string>();

  /**
   * `holdAll`: every queue starts held. `failed`: a loop's stop rejected (its drain still counts as done).
   * `changed`: a definition was kept held or started again, or a drain ended.
   */
  constructor(
    holdAll: boolean,
    private readonly failed: (err: unknown, loop: L) => void,
    private readonly changed: () => void,
  ) {
    this.holdAll = holdAll;
  }

  /** Whether loops of queue `name` are held stopped now. */
  isHeld(name: string): boolean {
    return this.heldQueues.has(name) || (this.holdAll && !this.released.has(name));
  }

  /** Holds queue `name` (every queue when undefined): its running loops' definitions are held, to start again. */
  hold(name: string | undefined): void {
    if (name === undefined) {
      this.holdAll = true;
      this.released.clear();
    } else {
      this.heldQueues.add(name);
      this.released.delete(name);
    }
    for (const { loop, def } of this.loops.values()) {
      if ((name === undefined || loop.queue === name) && !this.stopping.has(loop)) this.held.push(def);
    }
  }

  /** Releases queue `name` (every queue when undefined); returns the held definitions no longer held. */
  release(name: string | undefined): D[] {
    if (name === undefined) {
      this.holdAll = false;
      this.released.clear();
      this.heldQueues.clear();
    } else {
      this.heldQueues.delete(name);
      if (this.holdAll) this.released.add(name);
    }
    return this.held.filter((d) => !this.isHeld(d.name));
  }

  /** Keeps `def` held (work() on a held queue). */
  keep(def: D): void {
    this.held.push(def);
    this.changed();
  }

  /** Whether `def` is still held and its queue released: startWorking() may start it. */
  startable(def: D): boolean {
    return this.held.includes(def) && !this.isHeld(def.name);
  }

  /** `def` started again: no longer held (the queues shown as held change). */
  unhold(def: D): void {
    this.held = this.held.filter((d) => d !== def);
    this.changed();
  }

  /** Forgets the held definitions that `picks` picks (every one when undefined): they never start again. */
  forget(picks?: (def: D) => boolean): void {
    this.held = picks ? this.held.filter((d) => !picks(d)) : [];
  }

  /** The queues held with loops to start again, sorted. */
  heldQueueNames(): string[] {
    return [...new Set(this.held.map((d) => d.name))].sort();
  }

  /** Lists a loop that runs `def`; its owner reports the change once the loop has started. */
  add(loop: L, def: D): void {
    this.loops.set(loop.id, { loop, def });
  }

  /** The definition that loop `id` runs (listed until its drain ends). */
  definitionOf(id: string): D | undefined {
    return this.loops.get(id)?.def;
  }

  /** Every listed loop, stopping ones too. */
  *all(): IterableIterator<L> {
    for (const { loop } of this.loops.values()) yield loop;
  }

  /** The loops that run and are not stopping. */
  *running(): IterableIterator<L> {
    for (const { loop } of this.loops.values()) if (!this.stopping.has(loop)) yield loop;
  }

  get size(): number {
    return this.loops.size;
  }

  /**
   * Stops the loops that `which` picks (those not stopping already): each drains for at most `timeoutMs`, and
   * stays listed until its drain is done.
   */
  halt(which: Picks<L>, timeoutMs: number): void {
    for (const { loop } of this.loops.values()) {
      if (!which(loop) || this.stopping.has(loop)) continue;
      // never rejects: nobody may await the drain of a loop stopped from its own handler
      const drained = loop.stop(timeoutMs).then(undefined, (err: unknown) => {
        this.failed(err, loop);
      });
      void drained.then(() => {
        this.stopping.delete(loop);
        this.loops.delete(loop.id);
        this.changed();
      });
      this.stopping.set(loop, drained);
    }
  }

  /** The drains of the stopping loops that `which` picks. */
  drains(which: Picks<L>): Promise<void>[] {
    return [...this.stopping].filter(([loop]) => which(loop)).map(([, drained]) => drained);
  }

  /** The drains of the stopping loops that run one of `defs`. */
  drainsOf(defs: readonly D[]): Promise<void>[] {
    return this.drains((loop) => defs.includes(this.loops.get(loop.id)!.def));
  }
}
