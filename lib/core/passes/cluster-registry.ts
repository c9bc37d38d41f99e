// The cluster registry: each running instance keeps a row in `workers` (sql/workers.ts) with where it
// runs, its version and its worker loops, refreshed every REFRESH_MS and deleted when it closes. An instance that
// dies without closing stops refreshing; once its heartbeat is older than WORKER_LIVE_SECONDS it no longer counts,
// and the next refresh of any instance deletes its row. getWorkers() and getQueue's `unworked` read it.
import { hostname } from 'node:os';
import { CLOCK_SKEW_WARNING_MS } from '../events.js';
import { newHolderId } from '../worker/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { packageVersion } from '../runtime/version.js';
import type { LoopInfo, WorkerInfo } from '../types.js';

/** How often an instance refreshes its row: well inside the live window, so that two missed refreshes are harmless. */
export const REFRESH_MS = 5_000;

/** Longest round trip of a heartbeat whose clock reading is compared with this process's (see refresh). */
const MAX_CLOCK_ROUND_TRIP_MS = 1_000;

/** What the registry needs to know of this instance's loops. */
export interface LoopSource {
  loops(): LoopInfo[];
  /** The queues whose loops the instance holds stopped (stopWorking). */
  stoppedQueues(): string[];
}

/** A row of the cluster registry, as its statements read it. */
export interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  loops: LoopInfo[];
  stopped: string[];
  started_on: Date;
  heartbeat_on: Date;
}

/** A loop as a registry row holds it: an instance of an older version lists no task nor group limits. */
export function loopOf(l: Partial<LoopInfo> & Omit<LoopInfo, 'task' | 'groupConcurrency' | 'localGroupConcurrency'>): LoopInfo {
  return {
    ...l,
    task: l.task ?? null,
    groupConcurrency: l.groupConcurrency ?? null,
    localGroupConcurrency: l.localGroupConcurrency ?? null,
  };
}

export class ClusterRegistry {
  /** This instance's id in the registry: host, pid and a random suffix. */
  readonly id = newHolderId();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  /** A change of loops came while a refresh was under way: refresh again once it ends. */
  private again = false;
  /** Set while refreshes fail, so that an outage is reported once, and its end once. */
  private failing = false;
  /** Set while the clocks differ by more than CLOCK_SKEW_WARNING_MS, so that it is reported once per crossing. */
  private skewed = false;

  constructor(
    private readonly rt: Runtime,
    private readonly source: LoopSource,
  ) {}

  /** Registers this instance and keeps its row fresh until stop(). */
  start(): void {
    if (this.timer) return;
    // unref: the registry never keeps the process alive on its own
    this.timer = setInterval(() => this.nudge(), REFRESH_MS).unref();
    this.nudge();
  }

  /** Refreshes the row soon: now, or once the refresh under way ends (its loops may have changed meanwhile). */
  nudge(): void {
    if (!this.timer) return;
    if (this.refreshing) {
      this.again = true;
      return;
    }
    // refresh() never rejects; the catch keeps a timer's chain from ever holding an unhandled rejection
    this.refreshing = this.refresh()
      .catch(() => undefined)
      .finally(() => {
        this.refreshing = null;
        if (this.again) {
          this.again = false;
          this.nudge();
        }
      });
  }

  /** Stops refreshing and removes this instance's row (a clean shutdown), never throwing. */
  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.again = false;
    await this.refreshing;
    await this.rt.background.query(this.rt.statements.removeWorker, [this.id]).catch(() => undefined);
  }

  /** Refreshes this instance's row now (also what the timer does). */
  async refresh(): Promise<void> {
    try {
      const sent = Date.now();
      const [row] = await this.rt.background.query<{ db_ms: number }>(this.rt.statements.refreshWorker, [
        this.id,
        hostname(),
        process.pid,
        packageVersion(),
        JSON.stringify(this.source.loops()),
        JSON.stringify(this.source.stoppedQueues()),
      ]);
      // The database read its clock between the statement's send and its answer: compared with the middle, the error
      // is at most half the round trip. A slow round trip (a busy pool) is not read, so it cannot look like skew.
      const answered = Date.now();
      if (row && answered - sent <= MAX_CLOCK_ROUND_TRIP_MS) this.checkClock(row.db_ms - (sent + answered) / 2);
      if (this.failing) this.rt.log.log('the cluster registry is refreshed again');
      this.failing = false;
    } catch (err) {
      // A database outage must not end the process: the next tick tries again, and the outage is reported once.
      // (while the engine closes, a refresh it cuts short is no outage)
      if (!this.failing && !this.rt.closing)
        this.rt.events.warning(`cannot refresh this instance in the cluster registry: ${err instanceof Error ? err.message : String(err)}`);
      this.failing = true;
    }
  }

  /**
   * A `clock-skew` warning when this process's clock and the database's differ by more than CLOCK_SKEW_WARNING_MS:
   * leases, due times and stats are all read on the database's clock, but logs and a handler's own deadlines are
   * not, and a skewed host is worth knowing about.
   */
  private checkClock(skewMs: number): void {
    const skewed = Math.abs(skewMs) > CLOCK_SKEW_WARNING_MS;
    if (skewed && !this.skewed)
      this.rt.events.warning({
        type: 'clock-skew',
        message: `this process's clock is ${Math.round(Math.abs(skewMs))} ms ${skewMs > 0 ? 'behind' : 'ahead of'} the database's`,
        skewMs,
      });
    this.skewed = skewed;
  }

  /** Every live instance of the cluster, oldest first. */
  async getWorkers(): Promise<WorkerInfo[]> {
    const rows = await (await this.rt.db()).query<WorkerRow>(this.rt.statements.getWorkers, []);
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      version: r.version,
      loops: r.loops.map(loopOf),
      queues: summarise(r.loops),
      stopped: r.stopped,
      startedOn: r.started_on,
      heartbeatOn: r.heartbeat_on,
    }));
  }
}

/** An instance's loops added up per queue. */
function summarise(loops: WorkerRow['loops']): WorkerInfo['queues'] {
  const byQueue = new Map<string, { name: string; concurrency: number; active: number }>();
  for (const loop of loops) {
    const q = byQueue.get(loop.queue) ?? { name: loop.queue, concurrency: 0, active: 0 };
    q.concurrency += loop.concurrency;
    q.active += loop.active;
    byQueue.set(loop.queue, q);
  }
  return [...byQueue.values()];
}
