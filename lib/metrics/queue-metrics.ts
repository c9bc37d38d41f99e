// The queue's figures on a prom-client registry, for Prometheus to scrape. Two kinds of figure, with the two
// meanings a scraper must keep apart:
// - the monitor's counts (gauges): the cluster's, read at each scrape from what the last monitor pass cached on the
//   queue rows (one small read, whatever the jobs table holds), so every instance reports the same values;
//   aggregate them with max(), never sum();
// - what this instance's workers did (counters, and histograms of wait and run time whose buckets are the edges
//   of the monitor's 48 bins, lib/core/stats/bins.ts): fed by the lifecycle events this instance emits, so the
//   cluster's figure is their sum() over instances.
import { Counter, Gauge, Histogram, register as defaultRegistry, type Registry, type RegistryContentType } from 'prom-client';
import { BIN_COUNT, binLowerEdge } from '../core/stats/bins.js';
import { withDeadline } from '../core/runtime/deadline.js';
import { InvalidOptionError } from '../core/errors.js';
import type { QueueEvents } from '../core/events.js';
import type { QueueResult } from '../core/types.js';
import { noUnknownKeys, optInt, record } from '../core/config/validate.js';

/** What QueueMetrics reads: a PgQueue, or the QueueService that is one. */
export interface MetricsSource {
  getQueues(): Promise<QueueResult[]>;
  on<K extends keyof QueueEvents>(event: K, listener: (...args: QueueEvents[K]) => void): unknown;
  off<K extends keyof QueueEvents>(event: K, listener: (...args: QueueEvents[K]) => void): unknown;
}

export interface QueueMetricsOptions {
  /** The registry the metrics go on (default: prom-client's default registry, `register`). */
  registry?: Registry<RegistryContentType>;
  /** Put before every metric's name (default `pgqueue_`). */
  prefix?: string;
  /**
   * How long a scrape waits for the queues' counts before it answers without them, `up` 0 (default 5,000 ms; keep
   * it under the scraper's own timeout, 10 s by default in Prometheus).
   */
  timeoutMs?: number;
}

const KEYS = new Set(['registry', 'prefix', 'timeoutMs']);

/**
 * The start of a name Prometheus accepts (its data model: `[a-zA-Z_:][a-zA-Z0-9_:]*`). Never empty: the gauge
 * named `up` would clash with the series Prometheus itself writes for every target.
 */
const PREFIX = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Validates the options (InvalidOptionError naming the field). */
export function parseMetricsOptions(value: unknown): { registry: Registry<RegistryContentType>; prefix: string; timeoutMs: number } {
  const o = record('options', value ?? {});
  noUnknownKeys('options', o, KEYS);
  const registry = o.registry ?? defaultRegistry;
  if (!isRegistry(registry)) throw new InvalidOptionError('options.registry', 'a prom-client Registry', registry);
  const prefix = o.prefix ?? 'pgqueue_';
  if (typeof prefix !== 'string' || !PREFIX.test(prefix))
    throw new InvalidOptionError(
      'options.prefix',
      'non-empty text that starts a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)',
      prefix,
    );
  return { registry, prefix, timeoutMs: optInt('options.timeoutMs', o.timeoutMs, 1, 60_000) ?? 5_000 };
}

function isRegistry(value: unknown): value is Registry<RegistryContentType> {
  const r = value as Partial<Registry<RegistryContentType>> | null;
  return typeof r === 'object' && r !== null && typeof r.registerMetric === 'function' && typeof r.metrics === 'function';
}

/**
 * The histograms' bucket bounds: the upper edges of the monitor's bins 0 to 46 (10 ms to one day, each about 1.4
 * times the one before), to six significant digits; bin 47, a day and more, is the +Inf bucket.
 */
export const BUCKETS: readonly number[] = Array.from({ length: BIN_COUNT - 1 }, (_, k) => Number(binLowerEdge(k + 1).toPrecision(6)));

/** A queue a monitor pass has counted: only those have count series (readCounts). */
type CountedQueue = QueueResult & { countedOn: Date };

/** The gauges of the monitor's counts: name (after the prefix), help, and the value of a counted queue. */
const COUNTS: readonly [string, string, (q: CountedQueue) => number][] = [
  ['queue_queued_jobs', 'Jobs waiting to run (created or retry): deferred, blocked and ready.', (q) => q.queuedCount],
  ['queue_ready_jobs', 'Queued jobs that may run now.', (q) => q.readyCount],
  ['queue_deferred_jobs', 'Queued jobs whose startAfter is still in the future.', (q) => q.deferredCount],
  ['queue_blocked_jobs', 'Jobs of a flow that wait for a parent to complete.', (q) => q.blockedCount],
  ['queue_active_jobs', 'Jobs a worker holds.', (q) => q.activeCount],
  ['queue_failed_jobs', 'Stored jobs that failed for good.', (q) => q.failedCount],
  ['queue_stored_jobs', 'Every job the table holds for the queue, in any state.', (q) => q.totalCount],
  [
    'queue_ready_oldest_seconds',
    'How long the oldest ready job has waited since it became due; 0 when none waits.',
    (q) => q.readyOldestSeconds,
  ],
  ['queue_singletons_active', 'Singleton keys with an active job (singleton and stately queues).', (q) => q.singletonsActive?.length ?? 0],
  ['queue_unworked', '1 when the queue has ready jobs and no live instance of the cluster works it.', (q) => (q.unworked ? 1 : 0)],
  ['queue_paused', '1 while pauseQueue() holds every claim of the queue.', (q) => (q.paused ? 1 : 0)],
  [
    'queue_counted_timestamp_seconds',
    'When the monitor pass took these counts (seconds since the epoch); absent before its first pass.',
    (q) => q.countedOn.getTime() / 1000,
  ],
];

/** One queue's counters and histograms, made once: labels() hashes its labels at each call. */
interface QueueSeries {
  completed: Counter.Internal;
  failed: Counter.Internal;
  retried: Counter.Internal;
  expired: Counter.Internal;
  wait: Histogram.Internal<'queue'>;
  run: Histogram.Internal<'queue'>;
}

type Metric = Gauge | Counter | Histogram;

/**
 * Registers the queue's metrics on a prom-client registry; `close()` takes them off again. Scraping never fails
 * for the database: when the counts cannot be read within `timeoutMs`, `up` is 0 and the count gauges are absent,
 * while this instance's counters and histograms are still served.
 */
export class QueueMetrics {
  private readonly registry: Registry<RegistryContentType>;
  private readonly timeoutMs: number;
  private readonly up: Gauge;
  private readonly counts: { gauge: Gauge; value: (q: CountedQueue) => number }[];
  private readonly completed: Counter;
  private readonly failed: Counter;
  private readonly retried: Counter;
  private readonly expired: Counter;
  private readonly wait: Histogram;
  private readonly run: Histogram;
  /** Every metric this registered, by name, which close() takes off. */
  private readonly metrics = new Map<string, Metric>();
  private readonly series = new Map<string, QueueSeries>();
  /** The read of the scrape under way: prom-client collects every gauge at once, and they share it. */
  private reading: Promise<void> | null = null;
  /**
   * The getQueues() call under way, kept until it settles, past a scrape's deadline: a scrape while the database
   * hangs waits on it again rather than sending one more read to the engine's pool.
   */
  private pending: Promise<QueueResult[]> | null = null;
  private closed = false;

  constructor(
    private readonly source: MetricsSource,
    options?: QueueMetricsOptions,
  ) {
    const { registry, prefix, timeoutMs } = parseMetricsOptions(options);
    this.registry = registry;
    this.timeoutMs = timeoutMs;
    const collect = () => this.read();
    // Made unregistered (registers: []), and registered once all are made and none of their names is taken.
    const registers: Registry[] = [];
    const made = <M extends Metric>(metric: M, name: string): M => {
      this.metrics.set(name, metric);
      return metric;
    };
    // The gauges are the cluster's, the same in every process: prom-client's cluster aggregation takes one value
    // (max; min for up, which any process failing to read makes 0), never the sum.
    const gauge = (name: string, help: string, labelNames: string[], aggregator: 'max' | 'min') =>
      made(new Gauge({ name: `${prefix}${name}`, help, labelNames, registers, collect, aggregator }), `${prefix}${name}`);
    this.up = gauge('up', "1 when this scrape read the queues' counts from the database.", [], 'min');
    this.counts = COUNTS.map(([name, help, value]) => ({ gauge: gauge(name, help, ['queue'], 'max'), value }));
    const counter = (name: string, help: string) =>
      made(new Counter({ name: `${prefix}${name}`, help, labelNames: ['queue'], registers }), `${prefix}${name}`);
    this.completed = counter('jobs_completed_total', "Jobs this instance's workers completed.");
    this.failed = counter('jobs_failed_total', 'Jobs this instance failed for good (no retry left, or not retryable).');
    this.retried = counter('jobs_retried_total', 'Failed attempts this instance sent back to the queue for a retry.');
    this.expired = counter('jobs_expired_total', "Jobs this instance's maintenance failed: they waited unstarted past retentionSeconds.");
    const histogram = (name: string, help: string) =>
      made(new Histogram({ name: `${prefix}${name}`, help, labelNames: ['queue'], buckets: [...BUCKETS], registers }), `${prefix}${name}`);
    this.wait = histogram('job_wait_seconds', "How long the attempts this instance's workers ran waited, from due to claim.");
    this.run = histogram('job_run_seconds', "How long the attempts this instance's workers ran took, from claim to outcome written.");
    for (const name of this.metrics.keys())
      if (registry.getSingleMetric(name))
        throw new InvalidOptionError('options.prefix', `a prefix under which the registry holds no metric yet (it holds ${name})`, prefix);
    for (const m of this.metrics.values()) registry.registerMetric(m);
    source.on('completed', this.onCompleted);
    source.on('failed', this.onFailed);
    source.on('expired', this.onExpired);
  }

  /** Takes the metrics off the registry (those still its own) and stops listening to the queue. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.source.off('completed', this.onCompleted);
    this.source.off('failed', this.onFailed);
    this.source.off('expired', this.onExpired);
    for (const [name, m] of this.metrics) if (this.registry.getSingleMetric(name) === m) this.registry.removeSingleMetric(name);
  }

  private readonly onCompleted = (e: QueueEvents['completed'][0]) => {
    const s = this.of(e.queue);
    s.completed.inc();
    this.time(s, e);
  };

  private readonly onFailed = (e: QueueEvents['failed'][0]) => {
    const s = this.of(e.queue);
    (e.willRetry ? s.retried : s.failed).inc();
    this.time(s, e);
  };

  private readonly onExpired = (e: QueueEvents['expired'][0]) => this.of(e.queue).expired.inc();

  private time(s: QueueSeries, e: { waitSeconds: number | null; runSeconds: number | null }): void {
    if (e.waitSeconds !== null) s.wait.observe(e.waitSeconds);
    if (e.runSeconds !== null) s.run.observe(e.runSeconds);
  }

  /** A queue's series, made when this instance first settles one of its jobs. */
  private of(queue: string): QueueSeries {
    let s = this.series.get(queue);
    if (!s) {
      const labels = { queue };
      s = {
        completed: this.completed.labels(labels),
        failed: this.failed.labels(labels),
        retried: this.retried.labels(labels),
        expired: this.expired.labels(labels),
        wait: this.wait.labels(labels),
        run: this.run.labels(labels),
      };
      this.series.set(queue, s);
    }
    return s;
  }

  /** Reads the counts once per scrape (shared by the gauges collected together) and sets every gauge from them. */
  private read(): Promise<void> {
    this.reading ??= this.readCounts().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readCounts(): Promise<void> {
    let queues: QueueResult[] | null = null;
    try {
      this.pending ??= this.source.getQueues().finally(() => {
        this.pending = null;
      });
      queues = await withDeadline(this.pending, this.timeoutMs, `the database did not answer within ${this.timeoutMs} ms`);
    } catch {
      // up 0 says it; the reason is the health check's to give (QueueHealthIndicator), not every scrape's to log
    }
    // Set with no await between: a scrape sees every gauge of one read, and a deleted queue's series go.
    for (const c of this.counts) c.gauge.reset();
    try {
      for (const q of queues ?? []) {
        // never counted yet: no series, rather than counts of 0 for a queue that may hold a backlog
        if (!q.countedOn) continue;
        for (const c of this.counts) c.gauge.set({ queue: q.name }, c.value(q as CountedQueue));
      }
      if (queues) this.forgetDeleted(new Set(queues.map((q) => q.name)));
    } catch {
      // an answer the gauges cannot take (a source other than PgQueue): served as no answer
      for (const c of this.counts) c.gauge.reset();
      queues = null;
    }
    this.up.set(queues ? 1 : 0);
  }

  /** Drops the counters and histograms of queues that no longer exist: names that come and go would pile up. */
  private forgetDeleted(existing: ReadonlySet<string>): void {
    for (const queue of this.series.keys()) {
      if (existing.has(queue)) continue;
      for (const m of [this.completed, this.failed, this.retried, this.expired, this.wait, this.run]) m.remove({ queue });
      this.series.delete(queue);
    }
  }
}
