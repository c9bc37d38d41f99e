// The prom-client integration against a real PostgreSQL: a scrape of the registry shows the monitor's counts as it
// cached them, and this instance's completed, failed, retried and expired jobs, with the attempts' wait and run
// times in buckets at the edges of the monitor's bins.
import { Registry } from 'prom-client';
import { binOf } from '../../lib/core/stats/bins.js';
import { BUCKETS, QueueMetrics } from '../../lib/metrics/queue-metrics.js';
import { until } from '../helpers/db.js';
import { samples, series } from '../helpers/prometheus.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('prom');
afterAll(() => f.cleanup());

describe('QueueMetrics on a real queue', () => {
  it("a scrape shows the monitor's counts and what this instance's workers and maintenance did", async () => {
    const q = f.create({ supervise: false, logJobFailures: false });
    const registry = new Registry();
    const metrics = new QueueMetrics(q, { registry });
    await q.createQueue('prom.work', { retryLimit: 1 });
    await q.createQueue('prom.idle');
    const oks = await q.insert('prom.work', [{ data: { fail: false } }, { data: { fail: false } }, { data: { fail: false } }]);
    await q.send('prom.work', { fail: true });
    // taken before the UPDATE whose now() the good jobs' wait starts from, so `elapsed` bounds the time after it
    const began = Date.now();
    // the three good jobs were created 30 s ago and became due 3 s ago: their wait counts from due, not creation
    await f.sql(`UPDATE $schema.jobs SET created_on = now() - interval '30 s', start_after = now() - interval '3 s' WHERE id = ANY($1)`, [
      oks,
    ]);
    await q.insert('prom.idle', [{ data: {} }, { data: {} }]);
    const expiring = (await q.send('prom.idle', {}))!;
    await f.sql(`UPDATE $schema.jobs SET keep_until = now() - interval '1 second' WHERE id = $1`, [expiring]);

    let ended = 0;
    q.on('failed', (e) => {
      if (!e.willRetry) ended++;
    });
    await q.work<{ fail: boolean }>('prom.work', { pollingIntervalSeconds: 0.2 }, (job) => {
      if (job.data.fail) throw new Error('no');
      return 'ok';
    });
    await until(async () => ended === 1 && (await q.getQueue('prom.work', { force: true }))!.activeCount === 0, 'the bad job failed twice');
    const elapsed = (Date.now() - began) / 1000;
    await q.offWork('prom.work');
    await q.maintain({ force: true }); // expires the job that waited past its retention
    await q.monitor({ force: true });

    const s = samples(await registry.metrics());
    const work = { queue: 'prom.work' };
    const idle = { queue: 'prom.idle' };
    expect(s.get('pgqueue_up')).toBe(1);
    expect(s.get(series('pgqueue_jobs_completed_total', work))).toBe(3);
    expect(s.get(series('pgqueue_jobs_retried_total', work))).toBe(1);
    expect(s.get(series('pgqueue_jobs_failed_total', work))).toBe(1);
    expect(s.get(series('pgqueue_jobs_expired_total', idle))).toBe(1);
    // five attempts ran: three good ones, the bad one twice
    expect(s.get(series('pgqueue_job_wait_seconds_count', work))).toBe(5);
    expect(s.get(series('pgqueue_job_run_seconds_count', work))).toBe(5);
    // the good jobs waited at least 3 s and less than 3 s plus the test's time; the bad one's attempts less than that
    const over = BUCKETS.find((b) => b >= 3 + elapsed)!;
    expect(s.get(series('pgqueue_job_wait_seconds_bucket', { le: BUCKETS[binOf(3) - 1]!, ...work }))).toBeLessThanOrEqual(2);
    expect(s.get(series('pgqueue_job_wait_seconds_bucket', { le: over, ...work }))).toBe(5);
    expect(s.get(series('pgqueue_job_wait_seconds_sum', work))).toBeGreaterThanOrEqual(9);
    expect(s.get(series('pgqueue_job_run_seconds_sum', work))).toBeLessThanOrEqual(5 * elapsed);
    // the monitor's counts, as the forced pass cached them
    expect(s.get(series('pgqueue_queue_stored_jobs', work))).toBe(4);
    expect(s.get(series('pgqueue_queue_failed_jobs', work))).toBe(1);
    expect(s.get(series('pgqueue_queue_queued_jobs', work))).toBe(0);
    expect(s.get(series('pgqueue_queue_ready_jobs', idle))).toBe(2);
    expect(s.get(series('pgqueue_queue_failed_jobs', idle))).toBe(1);
    expect(s.get(series('pgqueue_queue_unworked', idle))).toBe(1);
    expect(s.get(series('pgqueue_queue_ready_oldest_seconds', idle))).toBeGreaterThanOrEqual(0);
    const counted = s.get(series('pgqueue_queue_counted_timestamp_seconds', idle))!;
    expect(Math.abs(counted - Date.now() / 1000)).toBeLessThan(60);

    metrics.close();
    expect((await registry.metrics()).trim()).toBe('');
  });

  it('a scrape of a queue whose database is gone answers up 0, without the counts, and keeps the counters', async () => {
    const q = f.create({ supervise: false });
    const registry = new Registry();
    const metrics = new QueueMetrics(q, { registry, timeoutMs: 2000 });
    await q.createQueue('prom.gone');
    await q.send('prom.gone', {});
    await q.work('prom.gone', { pollingIntervalSeconds: 0.2 }, () => 'ok');
    await until(
      async () => samples(await registry.metrics()).get(series('pgqueue_jobs_completed_total', { queue: 'prom.gone' })) === 1,
      'one job completed',
    );
    await q.close();
    const s = samples(await registry.metrics());
    expect(s.get('pgqueue_up')).toBe(0);
    expect(s.has(series('pgqueue_queue_stored_jobs', { queue: 'prom.gone' }))).toBe(false);
    expect(s.get(series('pgqueue_jobs_completed_total', { queue: 'prom.gone' }))).toBe(1);
    metrics.close();
  });
});
