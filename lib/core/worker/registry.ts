// The loop registry: the loops this engine runs (one per work() call), stopping them (by queue, by id, or all at
// shutdown, each draining within a deadline), and holding them stopped for a while (stopWorking / startWorking: a
// loop held stopped keeps its handler and options, and starts again as a new loop). It decides when; what runs,
// stops and is held is recorded in loop-table.ts, and the LISTEN connection that wakes the loops is
// wake-listener.ts.
//
// These calls may come from a handler, and a drain waits for its loop's handlers: so a call made from a handler
// (loop-frame.ts finds one of this engine's loops on its stack) waits for no drain, and no call waits for a drain
// inside the one-at-a-time section; close() waits for every drain. Why: docs/design.md, "A stop called from a handler".
import { checkedHandler, jobNameOf, type JobName } from '../job-definition.js';
import { InvalidOptionError, QueueError } from '../errors.js';
import { LoopTable } from './loop-table.js';
import { WakeListener, type HearingCheck } from './wake-listener.js';
import { parseOffWorkOptions, parseWorkOptions, type ParsedWorkOptions } from '../config/options.js';
import { closedError } from '../runtime/pool-gate.js';
import type { Runtime } from '../runtime/runtime.js';
import type { BatchHandler, JobHandler, LoopInfo, OffWorkOptions, WorkOptions } from '../types.js';
import { queueName } from '../config/validate.js';
import { callingFrames, handlerFrameOf, newHolderId, WorkerLoop, type LoopContext } from './index.js';

/** Which loops a stop call picks. */
type Picks = (loop: WorkerLoop) => boolean;

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

/**
 * This engine's worker loops; PgQueue's work, offWork, stopWorkers, stopWorking and startWorking delegate here.
 *
 * Where a definition (one work() call) is:
 *
 * ```
 *              queue held
 *   work() ───────────────────▶ held ──offWork(), stopWorkers(), close()──▶ gone
 *     │                          │  ▲
 *     │ queue not held           │  │ stopWorking()
 *     ▼            startWorking()│  │
 *   running ◀────────────────────┘  │
 *     ├─────────────────────────────┘
 *     └──offWork(), stopWorkers(), close()──▶ gone
 * ```
 *
 * - `running`: a loop runs it (its first under the id work() returned, later ones under new ids).
 * - `held`: kept to start again. stopWorking() holds it at once while its loop drains; startWorking() starts a new
 *   loop only once the last one has drained, so one definition never has two loops.
 * - `gone`: forgotten. A loop that stops stays listed (and in getWorkers) until its drain ends.
 */
export class LoopRegistry {
  private readonly table: LoopTable<WorkerLoop, LoopDefinition>;
  private readonly listener: WakeListener;
  /**
   * work, offWork, stopWorking, startWorking and stopWorkers run one at a time, up to the drains they wait for: no
   * loop is held twice, none that offWork() forgot comes back, and startWorking() from outside a handler starts a
   * held loop again only once its last run has drained.
   */
  private control: Promise<unknown> = Promise.resolve();
  /** Told when a loop starts or stops (the cluster registry refreshes this instance's row then). */
  loopsChanged: () => void = () => undefined;

  constructor(private readonly rt: Runtime) {
    this.table = new LoopTable<WorkerLoop, LoopDefinition>(
      !rt.config.startWorkers,
      (err, loop) => this.rt.events.error(err, `stopping the loop of queue "${loop.queue}"`),
      () => this.loopsChanged(),
    );
    this.listener = new WakeListener(rt, () => this.table.all());
  }

  /** Whether this instance holds a LISTEN connection for its loops, and where its hearing check stands (tests read them). */
  get listening(): boolean {
    return this.listener.listening;
  }

  get hearingCheck(): HearingCheck {
    return this.listener.hearingCheck;
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
      if (!this.table.isHeld(name)) return this.start(def);
      // checked as a loop that starts is: the queue exists, and the options fit it
      await this.profileFor(def);
      this.table.keep(def);
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
    const which: Picks = (loop) => name === undefined || loop.queue === name;
    await this.serial(() => {
      this.table.hold(name);
      this.table.halt(which, this.rt.config.shutdownTimeoutMs);
    });
    if (!fromHandler) await Promise.all(this.table.drains(which));
  }

  /**
   * Starts again the held loops of queue `name` (of every queue when no name is given), each as a new loop. A loop
   * that cannot start (the database away, its queue deleted) stays held, with those after it, and the call throws.
   * A loop whose last run still drains starts once that drain is done (at once when called from a handler).
   */
  async startWorking(name?: string): Promise<void> {
    if (name !== undefined) queueName('name', name);
    const fromHandler = this.fromHandler();
    const released = await this.serial(() => this.table.release(name));
    // One run of a loop at a time, but a handler does not wait (the drain may wait for it). A loop started and
    // stopped again while this call waited has a new drain to wait for: it goes round again.
    let pending = released;
    while (pending.length > 0) {
      if (!fromHandler) await Promise.all(this.table.drainsOf(pending));
      pending = await this.serial(async () => {
        const again: LoopDefinition[] = [];
        for (const def of pending) {
          // held again, forgotten (offWork, stopWorkers) or started by another call meanwhile
          if (!this.table.startable(def)) continue;
          if (!fromHandler && this.table.drainsOf([def]).length > 0) {
            again.push(def);
            continue;
          }
          await this.start(def);
          this.table.unhold(def);
        }
        return again;
      });
    }
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
    await this.listener.open();
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
    const loop = new WorkerLoop(ctx, def.name, def.options, def.handler, def.started ? undefined : def.id);
    def.started = true;
    this.table.add(loop, def);
    loop.start();
    this.loopsChanged();
    return loop.id;
  }

  /**
   * Stops the loops of a queue (by name) or one loop (by the id work() returned, or its own; or the queue's name
   * and `options.id`), and forgets them. `options.wait: false` waits for no drain, as a call from a handler.
   */
  async offWork(nameOrId: string, options?: OffWorkOptions): Promise<void> {
    const fromHandler = this.fromHandler();
    const { id, wait, graceful } = parseOffWorkOptions(nameOrId, options);
    const picks = (d: LoopDefinition | undefined) =>
      d !== undefined && (id !== undefined ? d.name === nameOrId && d.id === id : d.id === nameOrId || d.name === nameOrId);
    const which: Picks = (loop) =>
      (id !== undefined ? loop.queue === nameOrId && loop.id === id : loop.id === nameOrId) || picks(this.table.definitionOf(loop.id));
    await this.serial(() => {
      this.table.forget(picks);
      this.table.halt(which, graceful ? this.rt.config.shutdownTimeoutMs : 0);
    });
    if (wait && !fromHandler) await Promise.all(this.table.drains(which));
  }

  /**
   * Stops every loop (held loops are forgotten with the rest) and waits for their drains, but from a handler
   * (stopWorkers). close() (`closing`) waits for every drain, also from a handler, then stops the LISTEN connection;
   * it does not queue behind the other calls (a loop starting meanwhile sees the engine closing and does not start).
   */
  async stopAll(timeoutMs: number, closing = false): Promise<void> {
    const fromHandler = !closing && this.fromHandler();
    const stopAll = () => {
      this.table.forget();
      this.table.halt(() => true, timeoutMs);
    };
    if (closing) stopAll();
    else await this.serial(stopAll);
    if (!fromHandler) await Promise.all(this.table.drains(() => true));
    // not under a loop started meanwhile (work, startWorking): it would hear no NOTIFY (a loop draining claims no more)
    const stopNotifier = async () => {
      if (!closing && !this.table.running().next().done) return;
      await this.listener.close();
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
    for (const loop of this.table.all()) {
      const frame = this.table.definitionOf(loop.id)?.frame;
      if (ids.includes(loop.id) || (frame != null && frames.includes(frame))) return true;
    }
    return false;
  }

  /** Whether a loop of queue `name` runs (not stopping): for nestjs-pgqueue/testing. */
  runs(name: string): boolean {
    for (const loop of this.table.running()) if (loop.queue === name) return true;
    return false;
  }

  /** The queues whose loops this instance holds stopped, as the cluster registry shows them. */
  stoppedQueues(): string[] {
    return this.table.heldQueueNames();
  }

  get count(): number {
    return this.table.size;
  }

  /**
   * Wakes this instance's running loops of queue `name`, each to claim at once (a loop working claims again when its
   * claim ends); returns how many there are. For nestjs-pgqueue/testing, whose drain and runJob must not wait for a
   * poll when no NOTIFY reaches the loops (useListenNotify off).
   */
  wake(name: string): number {
    let woken = 0;
    for (const loop of this.table.all()) {
      if (loop.queue !== name) continue;
      loop.notify();
      woken++;
    }
    return woken;
  }

  /** Each loop as the cluster registry shows it. */
  loops(): LoopInfo[] {
    return [...this.table.all()].map((loop) => {
      const def = this.table.definitionOf(loop.id);
      return {
        id: loop.id,
        queue: loop.queue,
        concurrency: loop.concurrency,
        active: loop.activeCount,
        task: def?.handler.name || null,
        groupConcurrency: def?.options.groupConcurrency ?? null,
        localGroupConcurrency: def?.options.localGroupConcurrency ?? null,
      };
    });
  }

  get activeJobCount(): number {
    let n = 0;
    for (const loop of this.table.all()) n += loop.activeCount;
    return n;
  }
}
