// The worker registry: the loops this engine runs (one per work() call), the LISTEN connection that wakes them,
// stopping them (by queue, by id, or all at shutdown, each draining within a deadline), and holding them stopped
// for a while (stopWorking / startWorking: a loop held stopped keeps its handler and options, and starts again as
// a new loop).
import { checkedHandler, jobNameOf, type JobName } from './job-definition.js';
import { InvalidOptionError, QueueError } from './errors.js';
import { Notifier } from './notifier.js';
import { parseWorkOptions, type ParsedWorkOptions } from './options.js';
import { closedError } from './pool-gate.js';
import type { Runtime } from './runtime.js';
import type { BatchHandler, JobHandler, LoopInfo, WorkOptions } from './types.js';
import { queueName } from './validate.js';
import { callingFrames, handlerFrameOf, newWorkerId, Worker, type WorkerContext } from './worker.js';

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
export class WorkerRegistry {
  private readonly workers = new Map<string, Worker>();
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
   * work, offWork, stopWorking and startWorking run one at a time, each to its end: a loop cannot start in the
   * middle of a stopWorking() (which returns once the node is drained), nor one be held twice, nor one that
   * offWork() forgot come back.
   */
  private control: Promise<unknown> = Promise.resolve();
  private notifier: Notifier | null = null;
  /** Loops stopped with attempts still running (their handler awaited a stop call), until those are done. */
  private readonly detached = new Set<Worker>();
  /** Told when a loop starts or stops (the workers registry refreshes this instance's row then). */
  loopsChanged: () => void = () => undefined;

  constructor(private readonly rt: Runtime) {
    this.holdAll = !rt.config.startWorkers;
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
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
      id: newWorkerId(),
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
    return this.fromHandler(() =>
      this.serial(async () => {
        if (name === undefined) {
          this.holdAll = true;
          this.released.clear();
        } else {
          this.heldQueues.add(name);
          this.released.delete(name);
        }
        const which = (w: Worker) => name === undefined || w.queue === name;
        for (const w of this.workers.values()) if (which(w)) this.held.push(this.definitions.get(w.id)!);
        await this.stop(which, this.rt.config.shutdownTimeoutMs);
      }),
    );
  }

  /**
   * Starts again the held loops of queue `name` (of every queue when no name is given), each as a new loop. A loop
   * that cannot start (the database away, its queue deleted) stays held, with those after it, and the call throws.
   */
  async startWorking(name?: string): Promise<void> {
    if (name !== undefined) queueName('name', name);
    return this.serial(async () => {
      if (name === undefined) {
        this.holdAll = false;
        this.released.clear();
        this.heldQueues.clear();
      } else {
        this.heldQueues.delete(name);
        if (this.holdAll) this.released.add(name);
      }
      for (const def of [...this.held]) {
        if (this.isHeld(def.name)) continue;
        await this.start(def);
        this.held = this.held.filter((d) => d !== def);
      }
    });
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
    const ctx: WorkerContext = {
      exec,
      profile,
      connect: this.rt.connect,
      staleResult: () => void this.rt.counters.staleResults++,
      statements: router.statementsFor(profile),
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
    const worker = new Worker(ctx, def.name, def.options, def.handler, def.started ? undefined : def.id);
    worker.frame = def.frame;
    def.started = true;
    this.workers.set(worker.id, worker);
    this.definitions.set(worker.id, def);
    worker.start();
    this.loopsChanged();
    return worker.id;
  }

  /** Stops the loops that `which` picks, each draining for at most `timeoutMs`. */
  async stop(which: (w: Worker) => boolean, timeoutMs: number): Promise<void> {
    await Promise.all(
      [...this.workers.values()].filter(which).map(async (w) => {
        await w.stop(timeoutMs);
        this.workers.delete(w.id);
        this.definitions.delete(w.id);
        if (w.activeCount > 0) this.detached.add(w);
      }),
    );
    this.loopsChanged();
  }

  /** Stops the loops of a queue (by name) or one loop (by the id work() returned, or its own), and forgets them. */
  async offWork(nameOrId: string): Promise<void> {
    const picks = (d: LoopDefinition | undefined) => d !== undefined && (d.id === nameOrId || d.name === nameOrId);
    return this.fromHandler(() =>
      this.serial(async () => {
        this.held = this.held.filter((d) => !picks(d));
        await this.stop((w) => w.id === nameOrId || picks(this.definitions.get(w.id)), this.rt.config.shutdownTimeoutMs);
      }),
    );
  }

  /**
   * Stops every loop, then the LISTEN connection; held loops are forgotten with the rest. What stopped loops left
   * running (handlers that awaited a stop call) is drained too, as at shutdown.
   */
  async stopAll(timeoutMs: number): Promise<void> {
    return this.fromHandler(async () => {
      this.held = [];
      const deadline = Date.now() + timeoutMs;
      await this.stop(() => true, timeoutMs);
      await Promise.all([...this.detached].map((w) => w.finish(timeoutMs, deadline)));
      this.pruneDetached();
      await this.notifier?.stop();
      this.notifier = null;
    });
  }

  /**
   * Runs a stop call. Made by a handler of a loop (its stack leads back to the loop's frame, loop-frame.ts), that
   * loop's drains do not wait for the handler while it runs: the drain would wait for the handler, which waits for
   * the stop. The handler then goes on, and its job is settled as any other's.
   */
  private async fromHandler<T>(call: () => Promise<T>): Promise<T> {
    const { loops: ids, frames } = callingFrames();
    const frameOf = (w: Worker) => this.definitions.get(w.id)?.frame ?? w.frame;
    const loops = [...this.workers.values(), ...this.detached].filter((w) => ids.includes(w.id) || frames.includes(frameOf(w) ?? ''));
    if (loops.length === 0) return call();
    for (const w of loops) w.handlerStopCall(1);
    try {
      return await call();
    } finally {
      for (const w of loops) w.handlerStopCall(-1);
    }
  }

  private pruneDetached(): void {
    for (const w of this.detached) if (w.activeCount === 0) this.detached.delete(w);
  }

  /** The queues whose loops this instance holds stopped, as the workers registry shows them. */
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

  /** Each loop as the workers registry shows it. */
  loops(): LoopInfo[] {
    return [...this.workers.values()].map((w) => ({
      id: w.id,
      queue: w.queue,
      concurrency: w.concurrency,
      active: w.activeCount,
      task: this.definitions.get(w.id)?.handler.name || null,
      groupConcurrency: this.definitions.get(w.id)?.options.groupConcurrency ?? null,
    }));
  }

  get activeJobCount(): number {
    this.pruneDetached();
    let n = 0;
    for (const w of [...this.workers.values(), ...this.detached]) n += w.activeCount;
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
