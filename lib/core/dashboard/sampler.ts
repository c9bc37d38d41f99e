// The dashboard's sampler: one per engine instance, reading the database about once a second while someone
// watches, whatever the number of viewers (each page gets the same snapshot), and not at all otherwise. It keeps
// the last two minutes (throughput per second, depth per queue, the feed) so that a page opened meanwhile shows
// them at once. A sample runs in one READ ONLY transaction with a short statement_timeout (beginDashboardRead); a
// sample that fails keeps the last good figures and says why, and the next one tries again.
import type pg from 'pg';
import { inTransaction, lostPreparedStatement, pgExecutor, type Executor } from '../runtime/db.js';
import { withDeadline } from '../runtime/deadline.js';
import type { Statements } from '../sql/index.js';
import { beginDashboardRead } from '../sql/transaction.js';
import type { LoopInfo } from '../types.js';
import { publicError } from '../http/public-error.js';
import { packageVersion } from '../runtime/version.js';
import {
  HISTORY_SECONDS,
  mergeFeed,
  recentFailures,
  RetryTally,
  secondsSeries,
  throughputOf,
  unworkedQueues,
  type DashboardQueue,
  type DashboardSnapshot,
  type FeedEvent,
} from './model.js';
import { readSample, type SampleRows } from './sample-rows.js';

/** What the sampler needs from the engine. */
export interface SamplerSource {
  readonly statements: Statements;
  /** Whether the engine prepares statements on these connections (Runtime.namesStatements): only then are these. */
  readonly prepared: boolean;
  /** A connection of the engine's pool (started if need be). */
  connect(): Promise<pg.PoolClient>;
  /** A statement prepared here was lost by a pooler (Runtime.lostPreparedStatement): the engine names none from now on. */
  lost?(err: unknown): void;
}

const prepared = new WeakMap<Statements, ReadonlySet<string>>();

/**
 * The dashboard's statements, prepared once per connection (pgExecutor's planOnce) rather than planned on each run:
 * planning them took about half of a sample (`node bench/dashboard-sample.mjs`, docs/performance.md). Their plans
 * are made for any arguments (the engine's sessions plan generically), so one plan serves every sample.
 */
export function dashboardStatements(st: Statements): ReadonlySet<string> {
  let set = prepared.get(st);
  if (!set) {
    set = new Set(Object.entries(st).flatMap(([name, text]) => (name.startsWith('dashboard') || name === 'getJobQueue' ? [text] : [])));
    prepared.set(st, set);
  }
  return set;
}

/** An executor on `client` that prepares the dashboard's statements where the engine prepares its own. */
export function executorFor(source: SamplerSource, client: pg.PoolClient): Executor {
  if (!source.prepared) return pgExecutor(client);
  const exec = pgExecutor(client, dashboardStatements(source.statements));
  return {
    // in the sample's transaction a lost statement cannot be sent again: that sample fails, the next goes unnamed
    async query<R>(text: string, values?: unknown[]): Promise<R[]> {
      try {
        return await exec.query<R>(text, values);
      } catch (err) {
        if (lostPreparedStatement(err)) source.lost?.(err);
        throw err;
      }
    },
  };
}

/** How often a sample is read while someone watches. */
export const SAMPLE_INTERVAL_MS = 1000;
/** A sample that has not answered by then is reported (the database hangs); the next waits for it to end. */
const SAMPLE_DEADLINE_MS = 3000;
/** How far back each read of finished jobs goes over the previous one, for completions that committed late. */
const LATE_COMMIT_MS = 5000;

type Listener = (snapshot: DashboardSnapshot) => void;

export class DashboardSampler {
  private readonly listeners = new Set<Listener>();
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> | null = null;
  private stopped = false;
  private latest: DashboardSnapshot | null = null;
  /** Jobs finished per second (database clock), for the last HISTORY_SECONDS. */
  private readonly seconds = new Map<number, { completed: number; failed: number }>();
  private readonly depth: { at: number; waiting: Record<string, number> }[] = [];
  private readonly retries = new RetryTally();
  private feed: FeedEvent[] = [];
  /** Where the next read of finished jobs starts (ms), and the newest job id seen. */
  private readFrom: number | null = null;
  private lastSeq = '0';
  /** When (this process's clock) the last sample was read: after a pause, what was kept is too old to go on from. */
  private readAt = -Infinity;
  /** Samples read since the sampler started (for tests and the benchmark). */
  samples = 0;

  constructor(private readonly source: SamplerSource) {}

  /** Whether it samples now (someone listens): its latest snapshot is then at most a second or two old. */
  get live(): boolean {
    return this.listeners.size > 0 && !this.stopped;
  }

  /** The latest snapshot, if any (a page opened now gets it at once). */
  get snapshot(): DashboardSnapshot | null {
    return this.latest;
  }

  /** `listener` gets every snapshot from now on; sampling runs while anyone listens. Returns the unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && !this.stopped) this.schedule(0);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
    };
  }

  /** Stops sampling for good (the engine closes); waits for a sample under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.listeners.clear();
    await this.sampling;
  }

  /** Reads one sample now and returns its snapshot (the page's first paint; tests). Never rejects. */
  async sampleNow(): Promise<DashboardSnapshot> {
    if (!this.sampling) this.sampling = this.sample().finally(() => (this.sampling = null));
    await this.sampling;
    return this.latest!;
  }

  private schedule(ms: number): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const started = Date.now();
      void this.sampleNow().then(() => {
        if (this.listeners.size > 0) this.schedule(Math.max(0, SAMPLE_INTERVAL_MS - (Date.now() - started)));
      });
    }, ms);
    this.timer.unref();
  }

  private async sample(): Promise<void> {
    if (Date.now() - this.readAt > HISTORY_SECONDS * 1000) this.forget();
    const work = inTransaction(
      () => this.source.connect(),
      (client) => readSample(executorFor(this.source, client), this.source.statements, this.readFrom, this.lastSeq),
      beginDashboardRead,
    );
    let snapshot: DashboardSnapshot;
    try {
      const rows = await withDeadline(work, SAMPLE_DEADLINE_MS, `the database did not answer within ${SAMPLE_DEADLINE_MS / 1000} s`);
      snapshot = this.take(rows);
      this.readAt = Date.now();
      this.samples++;
    } catch (err) {
      snapshot = this.failed(err);
    }
    this.latest = snapshot;
    for (const listener of this.listeners) {
      try {
        // a viewer that cannot take it (its connection closed) is dropped by its own unsubscribe
        void Promise.resolve(listener(snapshot)).catch(() => undefined);
      } catch {
        // as above, thrown at once
      }
    }
    // a sample given up at its deadline still holds a connection: the next one starts once it has ended
    await work.catch(() => undefined);
  }

  /** Drops what was kept: after a pause longer than the history, the next sample starts afresh. */
  private forget(): void {
    this.readFrom = null;
    this.seconds.clear();
    this.depth.splice(0);
    this.feed = [];
  }

  /** Folds one sample's rows into what the sampler keeps, and makes the snapshot. */
  private take(rows: SampleRows): DashboardSnapshot {
    const now = rows.now;
    const until = rows.finishedUntil;
    // seconds read whole are replaced; a capped read leaves the second it stopped in, and those before, as they were
    const from =
      rows.finishedCapped && rows.finishedOldest !== null
        ? Math.floor(rows.finishedOldest / 1000) * 1000 + 1000
        : (this.readFrom ?? until - HISTORY_SECONDS * 1000);
    for (let at = from; at < until; at += 1000) this.seconds.set(at, { completed: 0, failed: 0 });
    for (const s of rows.seconds) if (s.at >= from) this.seconds.set(s.at, { completed: s.completed, failed: s.failed });
    for (const at of this.seconds.keys()) if (at < until - HISTORY_SECONDS * 1000) this.seconds.delete(at);
    // the next read goes back a few seconds: a completion is stamped with its transaction's start, before its commit,
    // and may land in a second read already (a transactional handler's job running longer is not counted per second)
    this.readFrom = until - LATE_COMMIT_MS;
    for (const r of rows.retried) this.retries.add(r.id, r.on, now);

    const loopsByQueue = new Map<string, LoopInfo[]>();
    const instanceOf = new Map<string, { instance: string; task: string | null }>();
    for (const w of rows.workers) {
      for (const l of w.loops) {
        loopsByQueue.set(l.queue, [...(loopsByQueue.get(l.queue) ?? []), l]);
        instanceOf.set(l.id, { instance: w.id, task: l.task });
      }
    }
    const taskOf = (queue: string): string | null => loopsByQueue.get(queue)?.find((l) => l.task)?.task ?? null;
    const queues: DashboardQueue[] = rows.queues.map((q) => ({
      ...q,
      loops: loopsByQueue.get(q.name)?.length ?? 0,
      tasks: [...new Set((loopsByQueue.get(q.name) ?? []).map((l) => l.task).filter((t): t is string => t !== null))],
    }));
    this.depth.push({ at: now, waiting: Object.fromEntries(queues.map((q) => [q.name, q.waiting])) });
    while (this.depth.length > 0 && this.depth[0]!.at < now - HISTORY_SECONDS * 1000) this.depth.shift();

    this.feed = mergeFeed(this.feed, [...rows.sent, ...rows.started, ...rows.finishes]);
    if (rows.lastSeq !== null) this.lastSeq = rows.lastSeq;

    const throughput = secondsSeries(this.seconds, until);
    const recent = recentFailures(throughput);
    const oldest = queues.reduce<number | null>(
      (m, q) => (q.oldestReadySeconds === null ? m : Math.max(m ?? 0, q.oldestReadySeconds)),
      null,
    );
    return {
      version: packageVersion(),
      at: now,
      error: null,
      tiles: {
        throughput: throughputOf(throughput),
        ...rows.timings,
        waiting: queues.reduce((n, q) => n + q.waiting, 0),
        waitingOver: queues.some((q) => q.waitingOver),
        running: rows.runningCount,
        retries: this.retries.count(now),
        failed: recent.failed,
        recentSeconds: recent.seconds,
        oldestReadySeconds: oldest,
      },
      throughput,
      queues,
      depth: [...this.depth],
      // an instance that works no queue (one that only sends, say) is no worker
      workers: rows.workers
        .filter((w) => w.loops.length > 0 || w.stopped.length > 0)
        .map((w) => ({
          id: w.id,
          host: w.host,
          pid: w.pid,
          version: w.version,
          heartbeatAgeSeconds: w.heartbeatAgeSeconds,
          leases: w.loops.reduce((n, l) => n + (rows.leases.get(l.id) ?? 0), 0),
          loops: w.loops.map((l) => ({ queue: l.queue, task: l.task, concurrency: l.concurrency, active: l.active })),
          stopped: w.stopped,
        })),
      feed: this.feed,
      running: rows.running.map((r) => ({
        ...r,
        task: instanceOf.get(r.workerId ?? '')?.task ?? taskOf(r.queue),
        instance: instanceOf.get(r.workerId ?? '')?.instance ?? null,
      })),
      runningCount: rows.runningCount,
      problems: rows.problems.map((p) => ({ ...p, task: taskOf(p.queue) })),
      schedules: rows.schedules.map((c) => ({ ...c, task: taskOf(c.name) })),
      unworked: unworkedQueues(queues),
    };
  }

  /** A sample that could not be read: the last good figures, with why (publicError: no host, user or pid). */
  private failed(err: unknown): DashboardSnapshot {
    const base = this.latest ?? emptySnapshot();
    return { ...base, error: publicError(err) };
  }
}

/** A snapshot before any sample could be read. */
export function emptySnapshot(): DashboardSnapshot {
  return {
    version: packageVersion(),
    // no sample was read: no time of the database's to show
    at: 0,
    error: null,
    tiles: {
      throughput: null,
      pickupP50: null,
      pickupP95: null,
      runP50: null,
      runP95: null,
      timedJobs: 0,
      waiting: 0,
      waitingOver: false,
      running: 0,
      retries: 0,
      failed: 0,
      recentSeconds: 0,
      oldestReadySeconds: null,
    },
    throughput: [],
    queues: [],
    depth: [],
    workers: [],
    feed: [],
    running: [],
    runningCount: 0,
    problems: [],
    schedules: [],
    unworked: [],
  };
}
