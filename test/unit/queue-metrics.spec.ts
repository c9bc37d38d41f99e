import { EventEmitter } from 'node:events';
import { AggregatorRegistry, Registry } from 'prom-client';
import { BIN_COUNT, binLowerEdge, binOf, InvalidOptionError, type QueueEvents, type QueueResult } from '../../lib/index.js';
import { BUCKETS, parseMetricsOptions, QueueMetrics } from '../../lib/metrics/queue-metrics.js';
import { samples, series } from '../helpers/prometheus.js';

/** A queue as QueueMetrics sees it: its events, and getQueues() answering what `answer` gives. */
class FakeQueue extends EventEmitter<QueueEvents> {
  reads = 0;
  answer: () => Promise<QueueResult[]> = async () => [];
  getQueues(): Promise<QueueResult[]> {
    this.reads++;
    return this.answer();
  }
}

/** The counts the monitor cached for a queue, with `over` for the fields a test cares about. */
function counted(name: string, over: Partial<QueueResult> = {}): QueueResult {
  return {
    name,
    queuedCount: 0,
    deferredCount: 0,
    blockedCount: 0,
    readyCount: 0,
    activeCount: 0,
    failedCount: 0,
    totalCount: 0,
    readyOldestSeconds: 0,
    singletonsActive: null,
    unworked: false,
    paused: false,
    countedOn: new Date(1_800_000_000_000),
    ...over,
  } as QueueResult;
}

function setUp(options: Record<string, unknown> = {}) {
  const source = new FakeQueue();
  const registry = new Registry();
  const metrics = new QueueMetrics(source, { registry, ...options });
  const scrape = async () => samples(await registry.metrics());
  return { source, registry, metrics, scrape };
}

describe('QueueMetrics options', () => {
  it.each([
    [{ nope: 1 }, 'options.nope'],
    [{ prefix: '9lives_' }, 'options.prefix'],
    [{ prefix: '' }, 'options.prefix'],
    [{ prefix: 'has space' }, 'options.prefix'],
    [{ prefix: 7 }, 'options.prefix'],
    [{ registry: {} }, 'options.registry'],
    [{ timeoutMs: 0 }, 'options.timeoutMs'],
    [{ timeoutMs: 60_001 }, 'options.timeoutMs'],
    [{ timeoutMs: 1.5 }, 'options.timeoutMs'],
    ['fast', 'options'],
  ])('refuses %j, naming %s', (options, field) => {
    expect(() => parseMetricsOptions(options)).toThrow(InvalidOptionError);
    expect(() => parseMetricsOptions(options)).toThrow(field);
  });

  it('defaults: the pgqueue_ prefix and 5 s', () => {
    expect(parseMetricsOptions(undefined)).toMatchObject({ prefix: 'pgqueue_', timeoutMs: 5000 });
  });

  it('refuses a prefix whose names the registry already holds, and registers nothing then', async () => {
    const { registry } = setUp();
    const before = (await registry.getMetricsAsJSON()).length;
    expect(() => new QueueMetrics(new FakeQueue(), { registry })).toThrow(/options\.prefix must be .*it holds pgqueue_up/);
    expect((await registry.getMetricsAsJSON()).length).toBe(before);
    expect(() => new QueueMetrics(new FakeQueue(), { registry, prefix: 'second_' })).not.toThrow();
  });
});

describe('the histogram buckets', () => {
  it("are the upper edges of the monitor's bins 0 to 46: 10 ms to a day, each about 1.4 times the last", () => {
    expect(BUCKETS).toHaveLength(BIN_COUNT - 1);
    expect(BUCKETS[0]).toBe(0.01);
    expect(BUCKETS[BUCKETS.length - 1]).toBe(86_400);
    BUCKETS.forEach((b, k) => {
      expect(Math.abs(b - binLowerEdge(k + 1)) / b).toBeLessThan(1e-5);
      // a duration a little under the bound is in bin k, a little over in the next
      expect(binOf(b * 0.999)).toBe(k);
      expect(binOf(b * 1.001)).toBe(k + 1);
    });
  });
});

describe('a scrape', () => {
  it("reads the counts once for all the gauges, and sets each queue's", async () => {
    const { source, scrape } = setUp();
    source.answer = async () => [
      counted('a', { queuedCount: 7, readyCount: 5, deferredCount: 2, totalCount: 9, readyOldestSeconds: 12.5, unworked: true }),
      counted('b', { activeCount: 3, failedCount: 1, singletonsActive: ['x', 'y'], paused: true }),
    ];
    const s = await scrape();
    expect(source.reads).toBe(1);
    expect(s.get('pgqueue_up')).toBe(1);
    expect(s.get(series('pgqueue_queue_queued_jobs', { queue: 'a' }))).toBe(7);
    expect(s.get(series('pgqueue_queue_ready_jobs', { queue: 'a' }))).toBe(5);
    expect(s.get(series('pgqueue_queue_deferred_jobs', { queue: 'a' }))).toBe(2);
    expect(s.get(series('pgqueue_queue_stored_jobs', { queue: 'a' }))).toBe(9);
    expect(s.get(series('pgqueue_queue_ready_oldest_seconds', { queue: 'a' }))).toBe(12.5);
    expect(s.get(series('pgqueue_queue_unworked', { queue: 'a' }))).toBe(1);
    expect(s.get(series('pgqueue_queue_counted_timestamp_seconds', { queue: 'a' }))).toBe(1_800_000_000);
    expect(s.get(series('pgqueue_queue_active_jobs', { queue: 'b' }))).toBe(3);
    expect(s.get(series('pgqueue_queue_failed_jobs', { queue: 'b' }))).toBe(1);
    expect(s.get(series('pgqueue_queue_singletons_active', { queue: 'b' }))).toBe(2);
    expect(s.get(series('pgqueue_queue_unworked', { queue: 'b' }))).toBe(0);
    expect(s.get(series('pgqueue_queue_paused', { queue: 'b' }))).toBe(1);
    expect(s.get(series('pgqueue_queue_paused', { queue: 'a' }))).toBe(0);
    await scrape();
    expect(source.reads).toBe(2);
  });

  it('serves no counts for a queue no monitor pass has counted yet, rather than zeros', async () => {
    const { source, scrape } = setUp();
    source.answer = async () => [counted('new', { countedOn: null })];
    const s = await scrape();
    expect(s.get('pgqueue_up')).toBe(1);
    expect([...s.keys()].filter((k) => k.includes('queue="new"'))).toEqual([]);
  });

  it('while the database hangs, later scrapes wait on the read under way instead of sending more', async () => {
    const { source, scrape } = setUp({ timeoutMs: 20 });
    let answer: (queues: QueueResult[]) => void = () => undefined;
    source.answer = () => new Promise((resolve) => (answer = resolve));
    for (let i = 0; i < 3; i++) expect((await scrape()).get('pgqueue_up')).toBe(0);
    expect(source.reads).toBe(1);
    answer([counted('a')]); // the database answers at last: the next scrape reads afresh
    source.answer = async () => [counted('a', { queuedCount: 2 })];
    await new Promise((resolve) => setImmediate(resolve));
    expect((await scrape()).get(series('pgqueue_queue_queued_jobs', { queue: 'a' }))).toBe(2);
    expect(source.reads).toBe(2);
  });

  it("takes one process's value of the cluster's gauges under prom-client's cluster aggregation, and sums the counters", async () => {
    const processes = [setUp(), setUp()];
    for (const p of processes) {
      p.source.answer = async () => [counted('a', { queuedCount: 7 })];
      p.source.emit('completed', { queue: 'a', id: '1', waitSeconds: 0.5, runSeconds: 0.02 });
    }
    const s = samples(await AggregatorRegistry.aggregate(await Promise.all(processes.map((p) => p.registry.getMetricsAsJSON()))).metrics());
    expect(s.get(series('pgqueue_queue_queued_jobs', { queue: 'a' }))).toBe(7);
    expect(s.get('pgqueue_up')).toBe(1);
    expect(s.get(series('pgqueue_jobs_completed_total', { queue: 'a' }))).toBe(2);
  });

  it("drops a deleted queue's counters and histograms once a read no longer finds it", async () => {
    const { source, scrape } = setUp();
    source.emit('completed', { queue: 'gone', id: '1', waitSeconds: 0.5, runSeconds: 0.02 });
    source.answer = async () => [counted('gone')];
    expect((await scrape()).get(series('pgqueue_jobs_completed_total', { queue: 'gone' }))).toBe(1);
    source.answer = async () => [];
    await scrape(); // (the counters are served beside the read, not after it: they go from the next scrape)
    const s = await scrape();
    expect([...s.keys()].filter((k) => k.includes('queue="gone"'))).toEqual([]);
  });

  it("drops a deleted queue's gauges at the next scrape", async () => {
    const { source, scrape } = setUp();
    source.answer = async () => [counted('a'), counted('gone')];
    expect((await scrape()).has(series('pgqueue_queue_queued_jobs', { queue: 'gone' }))).toBe(true);
    source.answer = async () => [counted('a')];
    const s = await scrape();
    expect(s.has(series('pgqueue_queue_queued_jobs', { queue: 'gone' }))).toBe(false);
    expect(s.has(series('pgqueue_queue_queued_jobs', { queue: 'a' }))).toBe(true);
  });

  it('answers without the counts, up 0, when the read fails or outlasts timeoutMs; the counters are still served', async () => {
    const { source, scrape } = setUp({ timeoutMs: 50 });
    source.answer = async () => [counted('a', { queuedCount: 4 })];
    await scrape();
    source.emit('completed', { queue: 'a', id: '1', waitSeconds: 0.5, runSeconds: 0.02 });
    source.answer = () => Promise.reject(new Error('connection refused'));
    let s = await scrape();
    expect(s.get('pgqueue_up')).toBe(0);
    expect(s.has(series('pgqueue_queue_queued_jobs', { queue: 'a' }))).toBe(false);
    expect(s.get(series('pgqueue_jobs_completed_total', { queue: 'a' }))).toBe(1);
    source.answer = () => new Promise(() => undefined); // a database that never answers
    s = await scrape();
    expect(s.get('pgqueue_up')).toBe(0);
    expect(s.get(series('pgqueue_job_run_seconds_count', { queue: 'a' }))).toBe(1);
  });
});

describe('the counters and histograms', () => {
  it('count completed, failed for good, retried and expired jobs per queue, and time the attempts a worker ran', async () => {
    const { source, scrape } = setUp();
    source.emit('completed', { queue: 'a', id: '1', waitSeconds: 0.005, runSeconds: 2 });
    source.emit('completed', { queue: 'a', id: '2', waitSeconds: 3, runSeconds: 0.02 });
    const error = { name: 'Error', message: 'no' };
    const failed = { error, retryInSeconds: null, deadLetter: null };
    source.emit('failed', { queue: 'a', id: '3', waitSeconds: 1, runSeconds: 1, ...failed, willRetry: true, retryInSeconds: 5 });
    source.emit('failed', { queue: 'a', id: '3', waitSeconds: 1, runSeconds: 1, ...failed, willRetry: false });
    // reaped by maintenance: counted, not timed (no loop of this instance ran it)
    source.emit('failed', { queue: 'b', id: '4', waitSeconds: null, runSeconds: null, ...failed, willRetry: false });
    source.emit('expired', { queue: 'b', id: '5' });
    const s = await scrape();
    expect(s.get(series('pgqueue_jobs_completed_total', { queue: 'a' }))).toBe(2);
    expect(s.get(series('pgqueue_jobs_retried_total', { queue: 'a' }))).toBe(1);
    expect(s.get(series('pgqueue_jobs_failed_total', { queue: 'a' }))).toBe(1);
    expect(s.get(series('pgqueue_jobs_failed_total', { queue: 'b' }))).toBe(1);
    expect(s.get(series('pgqueue_jobs_expired_total', { queue: 'b' }))).toBe(1);
    expect(s.get(series('pgqueue_job_wait_seconds_count', { queue: 'a' }))).toBe(4);
    expect(s.get(series('pgqueue_job_wait_seconds_sum', { queue: 'a' }))).toBeCloseTo(5.005, 9);
    expect(s.has(series('pgqueue_job_wait_seconds_count', { queue: 'b' }))).toBe(false);
    // cumulative buckets: 0.005 s is under the first bound (10 ms); 3 s is under the bound of its bin
    expect(s.get(series('pgqueue_job_wait_seconds_bucket', { le: 0.01, queue: 'a' }))).toBe(1);
    const three = BUCKETS[binOf(3)]!;
    expect(s.get(series('pgqueue_job_wait_seconds_bucket', { le: three, queue: 'a' }))).toBe(4);
    expect(s.get(series('pgqueue_job_wait_seconds_bucket', { le: BUCKETS[binOf(3) - 1]!, queue: 'a' }))).toBe(3);
    expect(s.get(series('pgqueue_job_run_seconds_bucket', { le: '+Inf', queue: 'a' }))).toBe(4);
    expect(s.get(series('pgqueue_job_run_seconds_sum', { queue: 'a' }))).toBeCloseTo(4.02, 9);
  });

  it('close() takes every metric off the registry and stops counting; twice is harmless', async () => {
    const { source, registry, metrics } = setUp();
    metrics.close();
    metrics.close();
    expect(await registry.getMetricsAsJSON()).toEqual([]);
    expect(source.listenerCount('completed') + source.listenerCount('failed') + source.listenerCount('expired')).toBe(0);
  });

  it('close() leaves alone metrics of the same names that are no longer its own', async () => {
    const { registry, metrics } = setUp();
    registry.clear();
    const second = new QueueMetrics(new FakeQueue(), { registry });
    metrics.close();
    expect((await registry.getMetricsAsJSON()).length).toBeGreaterThan(10);
    second.close();
    expect(await registry.getMetricsAsJSON()).toEqual([]);
  });
});
