// The worker registry: the loops this engine runs (one per work() call), the LISTEN connection that wakes them,
// and stopping them (by queue, by id, or all at shutdown, each draining within a deadline).
import { InvalidOptionError, QueueError } from './errors.js';
import { Notifier } from './notifier.js';
import { parseWorkOptions } from './options.js';
import { closedError } from './pool-gate.js';
import type { Runtime } from './runtime.js';
import type { JobHandler, WorkOptions } from './types.js';
import { queueName } from './validate.js';
import { Worker, type WorkerContext } from './worker.js';

/** This engine's worker loops; PgQueue's work, offWork and stopWorkers delegate here. */
export class WorkerRegistry {
  private readonly workers = new Map<string, Worker>();
  private notifier: Notifier | null = null;
  /** Told when a loop starts or stops (the workers registry refreshes this instance's row then). */
  loopsChanged: () => void = () => undefined;

  constructor(private readonly rt: Runtime) {}

  async work<T>(name: string, options: WorkOptions | undefined, handler: JobHandler<T>): Promise<string> {
    queueName('name', name);
    const parsed = parseWorkOptions(options);
    if (typeof handler !== 'function') throw new InvalidOptionError('handler', 'a function', handler);
    const { config, router } = this.rt;
    if (!config.workers) throw new QueueError('this instance was configured with workers: false and never claims jobs', 'WORKERS_DISABLED');
    const exec = await this.rt.db();
    const profile = await router.profile(exec, name);
    if (parsed.groupConcurrency && profile.policy !== 'standard') {
      throw new InvalidOptionError(
        'options.groupConcurrency',
        `left out on a ${profile.policy} queue (group limits apply to standard queues)`,
        options?.groupConcurrency,
      );
    }
    await this.ensureNotifier();
    // close() may have begun while we awaited: a loop started now would outlive it.
    if (this.rt.closing) throw closedError();
    const ctx: WorkerContext = {
      exec,
      profile,
      connect: this.rt.connect,
      staleResult: () => void this.rt.counters.staleResults++,
      statements: router.statementsFor(profile),
      recheck: (was) => router.recheck(exec, name, was),
      schema: config.schema,
      channel: config.channel,
      log: this.rt.log,
      logFailures: config.logJobFailures,
      error: (err, context) => this.rt.events.error(err, context),
      events: this.rt.events,
      slowClaimMs: config.warningSlowClaimMs,
    };
    const worker = new Worker(ctx, name, parsed, handler as JobHandler);
    this.workers.set(worker.id, worker);
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
      }),
    );
    this.loopsChanged();
  }

  /** Stops the loops of a queue (by name) or one loop (by id). */
  offWork(nameOrId: string): Promise<void> {
    return this.stop((w) => w.id === nameOrId || w.queue === nameOrId, this.rt.config.shutdownTimeoutMs);
  }

  /** Stops every loop, then the LISTEN connection. */
  async stopAll(timeoutMs: number): Promise<void> {
    await this.stop(() => true, timeoutMs);
    await this.notifier?.stop();
    this.notifier = null;
  }

  get count(): number {
    return this.workers.size;
  }

  /** Each loop as the workers registry shows it. */
  loops(): { id: string; queue: string; concurrency: number; active: number }[] {
    return [...this.workers.values()].map((w) => ({ id: w.id, queue: w.queue, concurrency: w.concurrency, active: w.activeCount }));
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
