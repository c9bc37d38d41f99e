// What drain() and runJob() share: the loops of this process that work the queue (started for the while when they
// are held), their options, and a watch on the outcomes this process writes for the queue's jobs (the engine's
// `completed` and `failed` events), which also wakes their wait as soon as one is written instead of at their next look.
import { InvalidOptionError } from '../core/errors.js';
import type { QueueEvents } from '../core/events.js';
import { jobNameOf, type JobName } from '../core/job-definition.js';
import { loopRegistryOf, type PgQueue } from '../core/pg-queue.js';
import { int, queueName } from '../core/config/validate.js';
import type { LoopRegistry } from '../core/worker/registry.js';
import { NoWorkerError } from './errors.js';

/** An attempt's error as the engine records it: `name`, `message`, `stack`, and the thrown error's own fields. */
export type JobError = { name: string; message: string; stack?: string } & Record<string, unknown>;

/** The last outcome this process wrote for a job. */
export type Outcome =
  | { state: 'completed' }
  | { state: 'failed'; error: JobError }
  /** An attempt failed and the job waits for its retry, `retryInSeconds` from when it was written (null: not known). */
  | { state: 'retry'; error: JobError; retryInSeconds: number | null };

/**
 * Below Jest's and Vitest's default test timeout (5 s), so that a test that waits too long fails with our error,
 * which says what was left, rather than with the runner's.
 */
export const DEFAULT_TIMEOUT_MS = 4_000;

/** How long a wait sleeps between two looks when no outcome of the queue wakes it. */
export const LOOK_EVERY_MS = 25;

/** The queue's name of `job`, checked. */
export function queueOf(job: JobName): string {
  return queueName('name', jobNameOf(job));
}

/** `timeoutMs` of drain and runJob: a whole number of milliseconds that setTimeout takes. */
export function timeoutOf(field: string, value: unknown): number {
  return value === undefined ? DEFAULT_TIMEOUT_MS : int(field, value, 1, 2_147_483_647);
}

/** The loop registry of `queue`, checking that it is a queue. */
function registryOf(queue: PgQueue): LoopRegistry {
  if (!queue || typeof queue.findJobs !== 'function') throw new InvalidOptionError('queue', 'a QueueService or PgQueue', queue);
  return loopRegistryOf(queue);
}

/** Held loops that drain and runJob started: how many calls use them, their start, and their stop once none does. */
interface Borrow {
  users: number;
  started: Promise<void>;
  stopping: Promise<void> | null;
}

/** The borrows of each queue object, by queue name: the last call to end holds the loops again. */
const borrowed = new WeakMap<PgQueue, Map<string, Borrow>>();

/** What a call that works queue `name` through this process's loops holds until it ends. */
export interface Loops {
  readonly registry: LoopRegistry;
  /**
   * Holds the loops again if this call started them (and no other call still uses them). `failing`: the call is
   * throwing, so the loops are held again in the background: its error comes now, not after the handlers finish.
   */
  readonly release: (failing?: boolean) => Promise<void>;
}

/**
 * The loops of this process that work queue `name`: those that run, or else its held loops (`startWorkers: false`,
 * stopWorking), started now with startWorking and held again at `release()` (as stopWorking holds them: handlers
 * still running finish first, within `shutdownTimeoutMs`). NoWorkerError, saying why, when it has neither: drain and
 * runJob would otherwise wait for nothing until their deadline.
 */
export async function borrowLoops(queue: PgQueue, name: string, caller: string): Promise<Loops> {
  const registry = registryOf(queue);
  const byName = borrowed.get(queue) ?? new Map<string, Borrow>();
  borrowed.set(queue, byName);
  let borrow = byName.get(name);
  // loops that an earlier call is holding again: once held, they are started anew
  while (borrow?.stopping) {
    await borrow.stopping.catch(() => undefined);
    borrow = byName.get(name);
  }
  if (!borrow) {
    if (registry.runs(name)) return { registry, release: () => Promise.resolve() };
    if (!registry.stoppedQueues().includes(name)) throw new NoWorkerError(caller, name, whyNone(queue));
    // registered before the start is awaited: a call made meanwhile waits for this start, not one of its own
    borrow = { users: 0, started: queue.startWorking(name), stopping: null };
    byName.set(name, borrow);
  }
  const mine = borrow;
  mine.users++;
  const forget = () => {
    if (byName.get(name) === mine) byName.delete(name);
  };
  try {
    await mine.started;
  } catch (err) {
    if (--mine.users === 0) {
      forget();
      // some loops may have started before the failure: held again, as the app configured them
      await queue.stopWorking(name).catch(() => undefined);
    }
    throw err;
  }
  const release = async (failing = false): Promise<void> => {
    if (--mine.users > 0) return;
    mine.stopping = queue.stopWorking(name);
    const held = mine.stopping.finally(forget);
    if (failing) held.catch(() => undefined);
    else await held;
  };
  return { registry, release };
}

/** NoWorkerError when no loop of this process runs queue `name` any more (stopped while drain or runJob waited). */
export function assertRuns(queue: PgQueue, registry: LoopRegistry, name: string, caller: string): void {
  if (!registry.loops().some((loop) => loop.queue === name)) throw new NoWorkerError(caller, name, whyNone(queue));
}

function whyNone(queue: PgQueue): string {
  return queue.config.workers
    ? 'none handles it here, or the app was not initialised (its loops start at bootstrap)'
    : 'this instance was configured with workers: false';
}

/** How many jobs of queue `name` this process's loops hold now (running or being settled). */
export function heldHere(registry: LoopRegistry, name: string): number {
  return registry.loops().reduce((n, loop) => (loop.queue === name ? n + loop.active : n), 0);
}

/**
 * Watches the outcomes this process writes for queue `name`'s jobs, from the moment it is made until `close()`.
 * Each job keeps its last outcome; a job that completes after a failed attempt moves to the end of the order.
 */
export class OutcomeWatch {
  readonly outcomes = new Map<string, Outcome>();
  /** An outcome arrived since the last next(): the next one returns at once. */
  private fresh = false;
  private wake: (() => void) | null = null;
  private readonly onCompleted = (event: QueueEvents['completed'][0]): void => {
    if (event.queue === this.name) this.record(event.id, { state: 'completed' });
  };
  private readonly onFailed = (event: QueueEvents['failed'][0]): void => {
    if (event.queue !== this.name) return;
    const error = event.error as JobError;
    this.record(event.id, event.willRetry ? { state: 'retry', error, retryInSeconds: event.retryInSeconds } : { state: 'failed', error });
  };

  constructor(
    private readonly queue: PgQueue,
    private readonly name: string,
  ) {
    queue.on('completed', this.onCompleted);
    queue.on('failed', this.onFailed);
  }

  private record(id: string, outcome: Outcome): void {
    this.outcomes.delete(id);
    this.outcomes.set(id, outcome);
    this.fresh = true;
    this.wake?.();
  }

  /** Resolves when an outcome of the queue is written (at once if one was since the last call), or after `ms`. */
  next(ms: number): Promise<void> {
    if (this.fresh) {
      this.fresh = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = null;
        this.fresh = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  close(): void {
    this.queue.off('completed', this.onCompleted);
    this.queue.off('failed', this.onFailed);
    this.wake?.();
  }
}

/**
 * Runs `body` with the loops of queue `name` borrowed (borrowLoops) and their outcomes watched from before any loop
 * starts (a held loop started first may settle a job before a later one has started). At the end the loops are held
 * again: awaited when `body` returned, in the background when it threw, so that its error comes at once.
 */
export async function withLoops<R>(
  queue: PgQueue,
  name: string,
  caller: string,
  body: (registry: LoopRegistry, watch: OutcomeWatch) => Promise<R>,
): Promise<R> {
  const watch = new OutcomeWatch(queue, name);
  let loops: Loops;
  try {
    loops = await borrowLoops(queue, name, caller);
  } catch (err) {
    watch.close();
    throw err;
  }
  let failing = false;
  try {
    return await body(loops.registry, watch);
  } catch (err) {
    failing = true;
    throw err;
  } finally {
    watch.close();
    await loops.release(failing);
  }
}
