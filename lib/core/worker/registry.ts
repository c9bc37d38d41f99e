// The loop registry: the loops this engine runs (one per work() call), the LISTEN connection that wakes them,
// stopping them (by queue, by id, or all at shutdown, each draining within a deadline), and holding them stopped
// for a while (stopWorking / startWorking: a loop held stopped keeps its handler and options, and starts again as
// a new loop).
//
// These calls may come from a handler (offWork from inside a job of the queue it stops). A drain waits for every
// handler of its loop, so a handler waiting for a drain may wait for itself (its own loop), or for a handler that
// waits for it (two loops stopping each other), until the shutdown timeout, its job then handed back. So a call
// made from a handler (loop-frame.ts finds one of this engine's loops on its stack) waits for no drain: the loops
// it stops claim no more from then on and drain in the background, and close() waits for every drain. And no call
// waits for a drain inside the one-at-a-time section, so that a handler's call never queues behind a drain that
// waits for that handler.
import { checkedHandler, jobNameOf, type JobName } from '../job-definition.js';
import { InvalidOptionError, QueueError } from '../errors.js';
import { Notifier } from './notifier.js';
import { parseOffWorkOptions, parseWorkOptions, type ParsedWorkOptions } from '../config/options.js';
import { closedError } from '../runtime/pool-gate.js';
import type { Runtime } from '../runtime/runtime.js';
import type { BatchHandler, JobHandler, LoopInfo, OffWorkOptions, WorkOptions } from '../types.js';
import { queueName } from '../config/validate.js';
import { callingFrames, handlerFrameOf, newHolderId, WorkerLoop, type LoopContext } from './index.js';

/** Which loops a stop call picks. */
type Picks = (w: WorkerLoop) => boolean;

/** A loop as work() was asked for it: what startWorking() makes again. `id` is what work() returned. */
interface LoopDefinition {
  id: string;
  name: string;
  options: ParsedWorkOptions;
  /** The options as given, for the error of a queue that no longer fits them. */
  given: WorkOptions | undefined;
  handler: JobHandler | BatchHandler;
  /** Started once already: the next start is a new loop with a new id (`id` is the first one's). */
  started: boolean;
  /** The frame the handler names as its own (HANDLER_FRAME), or null. */
  frame: string | null;
}

/** This engine's worker loops; PgQueue's work, offWork, stopWorkers, stopWorking and startWorking delegate here. */
export class LoopRegistry {
  private readonly workers = new Map<string, WorkerLoop>();
  /** How each running loop was asked for, by the running loop's id. */
  private readonly definitions = new Map<string, LoopDefinition>();
  /** Loops held stopped (stopWorking, or made while their queue is held), until startWorking(). */
  private held: LoopDefinition[] = [];
  /** Every queue is held (startWorkers false, or stopWorking() with no name), but those in `released`. */
  private holdAll: boolean;
  private readonly released = new Set<string>();
  /** The queues held by name (stopWorking(name)). */
  private readonly heldQueues = new Set<string>();
  /**
   * work, offWork, stopWorking, startWorking and stopWorkers run one at a time, up to the drains they wait for: no
   * loop is held twice, none that offWork() forgot comes back, and startWorking() from outside a handler starts a
   * held loop again only once its last run has drained.
   */
  private control: Promise<unknown> = Promise.resolve();
  private notifier: Notifier | null = null;
  /** Loops stopping (listed in `workers` until then): each one's drain, until it is done. */
  private readonly stopping = new Map<WorkerLoop, Promise<void>>();
  /** Told when a loop starts or stops (the cluster registry refreshes this instance's row then). */
  loopsChanged: () => void = () => undefined;

  constructor(private readonly rt: Runtime) {
    this.holdAll = !rt.config.startWorkers;
  }

  private serial<T>(step: () => T | Promise<T>): Promise<T> {
    const run = this.control.then(step);
    this.control = run.catch(() => undefined);
    return run;
  }

  /**
   * Makes a loop for queue `name` and starts it, unless the queue's loops are held stopped: it is then kept, to
   * start with startWorking(). Returns its id, which offWork() takes whether the loop runs or is held.
   */
  async work(job: JobName, options: WorkOptions | undefined, given: JobHandler | BatchHandler): Promise<string> {
    const name = jobNameOf(job);
    queueName('name', name);
    const parsed = parseWorkOptions(options);
    if (typeof given !== 'function') throw new InvalidOptionError('handler', 'a function', given);
    const handler = typeof job === 'string' ? given : checkedHandler(job, given, parsed.batch);
    if (!this.rt.config.workers)
      throw new QueueError('this instance was configured with workers: false and never claims jobs', 'WORKERS_DISABLED');
    const def: LoopDefinition = {
      id: newHolderId(),
      name,
      options: parsed,
      given: options,
      handler,
      started: false,
      frame: handlerFrameOf(given),
    };
    return this.serial(async () => {
      if (!this.isHeld(name)) return this.start(def);
      // checked as a loop that starts is: the queue exists, and the options fit it
      await this.profileFor(def);
      this.held.push(def);
      this.loopsChanged();
      return def.id;
    });
  }

  /**
   * Stops the loops of queue `name` (of every queue when no name is given), each draining as at shutdown, and
   * holds them: loops made for it meanwhile are held too, until startWorking(). Other instances are not affected.
   */
  async stopWorking(name?: string): Promise<void> {
    if (name !== undefined) queueName('name', name);
    const fromHandler = this.fromHandler();
    const which: Picks = (w) => name === undefined || w.queue === name;
    await this.serial(() => {
      if (name === undefined) {
        this.holdAll = true;
        this.released.clear();
      } else {
        this.heldQueues.add(name);
        this.released.delete(name);
      }
      for (const w of this.workers.values()) if (which(w) && !this.stopping.has(w)) this.held.push(this.definitions.get(w.id)!);
      this.halt(which, this.rt.config.shutdownTimeoutMs);
    });
    if (!fromHandler) await this.drained(which);
  }

  /**
   * Starts again the held loops of queue `name` (of every queue when no name is given), each as a new loop. A loop
   * that cannot start (the database away, its queue deleted) stays held, with those after it, and the call throws.
   * A loop whose last run still drains starts once that drain is done (at once when called from a handler).
   */
  async startWorking(name?: string): Promise<void> {
    if (name !== undefined) queueName('name', name);
    const fromHandler = this.fromHandler();
    const released = await this.serial(() => {
      if (name === undefined) {
        this.holdAll = false;
        this.released.clear();
        this.heldQueues.clear();
      } else {
        this.heldQueues.delete(name);
        if (this.holdAll) this.released.add(name);
      }
      return this.held.filter((d) => !this.isHeld(d.name));
    });
    // One run of a loop at a time, but a handler does not wait (the drain may wait for it). A loop started and
    // stopped again while this call waited has a new drain to wait for: it goes round again.
    let pending = released;
    while (pending.length > 0) {
      if (!fromHandler) await Promise.all(this.drainsOf(pending));
      pending = await this.serial(async () => {
        const again: LoopDefinition[] = [];
        for (const def of pending) {
          // held again, forgotten (offWork, stopWorkers) or started by another call meanwhile
          if (!this.held.includes(def) || this.isHeld(def.name)) continue;
          if (!fromHandler && this.drainsOf([def]).length > 0) {
            again.push(def);
            continue;
          }
          await this.start(def);
          this.held = this.held.filter((d) => d !== def);
        }
        return again;
      });
    }
  }

  /** The drains of the runs of `defs` still draining. */
  private drainsOf(defs: readonly LoopDefinition[]): Promise<void>[] {
    return [...this.stopping].filter(([w]) => defs.includes(this.definitions.get(w.id)!)).map(([, drained]) => drained);
  }

  private isHeld(name: string): boolean {
    return this.heldQueues.has(name) || (this.holdAll && !this.released.has(name));
  }

  /** The queue's profile, with `def`'s options checked against it. */
  private async profileFor(def: LoopDefinition) {
    const profile = await this.rt.router.profile(await this.rt.db(), def.name);
    if (def.options.groupConcurrency && profile.policy !== 'standard') {
      throw new InvalidOptionError(
        'options.groupConcurrency',
        `left out on a ${profile.policy} queue (group limits apply to standard queues)`,
        def.given?.groupConcurrency,
      );
    }
    if (def.options.localGroupConcurrency && profile.policy !== 'standard') {
      throw new InvalidOptionError(
        'options.localGroupConcurrency',
        `left out on a ${profile.policy} queue (group limits apply to standard queues)`,
        def.given?.localGroupConcurrency,
      );
    }
    return profile;
  }

  /** Starts a loop as `def` asks: under its id the first time, then under a new one. */
  private async start(def: LoopDefinition): Promise<string> {
    const { config, router } = this.rt;
    const profile = await this.profileFor(def);
    const exec = await this.rt.db();
    await this.ensureNotifier();
    // close() may have begun while we awaited: a loop started now would outlive it.
    if (this.rt.closing) throw closedError();
    const ctx: LoopContext = {
      exec,
      profile,
      connect: this.rt.connect,
      staleResult: () => void this.rt.counters.staleResults++,
      statements: router.statementsForProfile(profile),
      recheck: (was) => router.recheck(exec, def.name, was),
      schema: config.schema,
      channel: config.channel,
      log: this.rt.log,
      logFailures: config.logJobFailures,
      error: (err, context) => this.rt.events.error(err, context),
      events: this.rt.events,
      slowClaimMs: config.warningSlowClaimMs,
      tracing: this.rt.tracing,
    };
    const worker = new WorkerLoop(ctx, def.name, def.options, def.handler, def.started ? undefined : def.id);
    def.started = true;
    this.workers.set(worker.id, worker);
    this.definitions.set(worker.id, def);
    worker.start();
    this.loopsChanged();
    return worker.id;
  }

  /**
   * Stops the loops that `which` picks (those not stopping already): they claim no more from now on, and each
   * drains for at most `timeoutMs`, listed until its drain is done.
   */
  private halt(which: Picks, timeoutMs: number): void {
    for (const w of this.workers.values()) {
      if (!which(w) || this.stopping.has(w)) continue;
      // never rejects: nobody may await the drain of a loop stopped from its own handler
      const drained = w.stop(timeoutMs).then(undefined, (err: unknown) => {
        this.rt.events.error(err, `stopping the loop of queue "${w.queue}"`);
      });
      void drained.then(() => {
        this.stopping.delete(w);
        this.workers.delete(w.id);
        this.definitions.delete(w.id);
        this.loopsChanged();
      });
      this.stopping.set(w, drained);
    }
  }

  /** Waits for the drains of the stopping loops that `which` picks. */
  private async drained(which: Picks): Promise<void> {
    await Promise.all([...this.stopping].filter(([w]) => which(w)).map(([, d]) => d));
  }

  /**
   * Stops the loops of a queue (by name) or one loop (by the id work() returned, or its own; or the queue's name
   * and `options.id`), and forgets them. `options.wait: false` waits for no drain, as a call from a handler.
   */
  async offWork(nameOrId: string, options?: OffWorkOptions): Promise<void> {
    const fromHandler = this.fromHandler();
    const { id, wait } = parseOffWorkOptions(nameOrId, options);
    const picks = (d: LoopDefinition | undefined) =>
      d !== undefined && (id !== undefined ? d.name === nameOrId && d.id === id : d.id === nameOrId || d.name === nameOrId);
    const which: Picks = (w) =>
      (id !== undefined ? w.queue === nameOrId && w.id === id : w.id === nameOrId) || picks(this.definitions.get(w.id));
    await this.serial(() => {
      this.held = this.held.filter((d) => !picks(d));
      this.halt(which, this.rt.config.shutdownTimeoutMs);
    });
    if (wait && !fromHandler) await this.drained(which);
  }

  /**
   * Stops every loop (held loops are forgotten with the rest) and waits for their drains, but from a handler
   * (stopWorkers). close() (`closing`) waits for every drain, also from a handler, then stops the LISTEN connection;
   * it does not queue behind the other calls (a loop starting meanwhile sees the engine closing and does not start).
   */
  async stopAll(timeoutMs: number, closing = false): Promise<void> {
    const fromHandler = !closing && this.fromHandler();
    const stopAll = () => {
      this.held = [];
      this.halt(() => true, timeoutMs);
    };
    if (closing) stopAll();
    else await this.serial(stopAll);
    if (!fromHandler) await this.drained(() => true);
    // not under a loop started meanwhile (work, startWorking): it would hear no NOTIFY (a loop draining claims no more)
    const stopNotifier = async () => {
      if (!closing && [...this.workers.values()].some((w) => !this.stopping.has(w))) return;
      await this.notifier?.stop();
      this.notifier = null;
    };
    if (closing) await stopNotifier();
    else await this.serial(stopNotifier);
  }

  /**
   * Whether the call comes from a handler of one of this engine's loops: one's frame (loop-frame.ts) is on its
   * stack. Read when the call is made, before it awaits anything.
   */
  private fromHandler(): boolean {
    const { loops: ids, frames } = callingFrames();
    if (ids.length === 0 && frames.length === 0) return false;
    for (const w of this.workers.values()) {
      const frame = this.definitions.get(w.id)?.frame;
      if (ids.includes(w.id) || (frame != null && frames.includes(frame))) return true;
    }
    return false;
  }

  /** Whether a loop of queue `name` runs (not stopping): for nestjs-pgqueue/testing. */
  runs(name: string): boolean {
    for (const w of this.workers.values()) if (w.queue === name && !this.stopping.has(w)) return true;
    return false;
  }

  /** The queues whose loops this instance holds stopped, as the cluster registry shows them. */
  stoppedQueues(): string[] {
    return [...new Set(this.held.map((d) => d.name))].sort();
  }

  get count(): number {
    return this.workers.size;
  }

  /**
   * Wakes this instance's running loops of queue `name`, each to claim at once (a loop working claims again when its
   * claim ends); returns how many there are. For nestjs-pgqueue/testing, whose drain and runJob must not wait for a
   * poll when no NOTIFY reaches the loops (useListenNotify off).
   */
  wake(name: string): number {
    let woken = 0;
    for (const w of this.workers.values()) {
      if (w.queue !== name) continue;
      w.notify();
      woken++;
    }
    return woken;
  }

  /** Each loop as the cluster registry shows it. */
  loops(): LoopInfo[] {
    return [...this.workers.values()].map((w) => ({
      id: w.id,
      queue: w.queue,
      concurrency: w.concurrency,
      active: w.activeCount,
      task: this.definitions.get(w.id)?.handler.name || null,
      groupConcurrency: this.definitions.get(w.id)?.options.groupConcurrency ?? null,
      localGroupConcurrency: this.definitions.get(w.id)?.options.localGroupConcurrency ?? null,
    }));
  }

  get activeJobCount(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.activeCount;
    return n;
  }

  private async ensureNotifier(): Promise<void> {
    if (!this.rt.config.useListenNotify || this.notifier || this.rt.closing) return;
    this.notifier = new Notifier(
      this.rt.connectionOptions,
      this.rt.config.channel,
      (queue, dueInMs) => this.workers.forEach((w) => w.queue === queue && w.heard(dueInMs)),
      () => this.workers.forEach((w) => w.reconnected()),
      this.rt.log,
      {
        lost: (err) =>
          this.rt.events.error(err ?? new Error('the connection ended'), 'LISTEN connection lost; reconnecting, and polling meanwhile'),
        regained: () => this.rt.events.warning('the LISTEN connection is back'),
      },
    );
    try {
      await this.notifier.start();
    } catch (err) {
      // Polling still finds every job; the notifier keeps trying in the background.
      this.rt.events.error(err, 'opening the LISTEN connection');
    }
  }
}
