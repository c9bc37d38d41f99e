// The dashboard's sampler against a real database: what one sample shows of an empty install and of jobs that
// flow, that it can only read, that many viewers cost what one does, and that a database it cannot read is
// reported while the last figures stay.
import { DashboardSampler, SAMPLE_INTERVAL_MS } from '../../lib/core/dashboard/sampler.js';
import { QUEUE_COUNT_CAP } from '../../lib/core/dashboard/sample-rows.js';
import { inTransaction } from '../../lib/core/runtime/db.js';
import { runtimeOf, type PgQueue } from '../../lib/core/pg-queue.js';
import { beginDashboardRead } from '../../lib/core/sql/transaction.js';
import type { Job } from '../../lib/core/types.js';
import { deferred, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('dashboard');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

async function samplerOf(q: PgQueue): Promise<DashboardSampler> {
  await q.start();
  const rt = runtimeOf(q);
  return new DashboardSampler({ statements: rt.statements, connect: () => rt.connect(), prepared: rt.namesStatements });
}

describe('the dashboard sampler', () => {
  it('an install with no queue shows every section empty, and no error (an instance that works no queue is no worker)', async () => {
    const q = f.create({ supervise: false, schema: `${f.schema}_empty` });
    const sampler = await samplerOf(q);
    const s = await sampler.sampleNow();
    expect(s.error).toBeNull();
    expect(s).toMatchObject({ queues: [], workers: [], feed: [], running: [], problems: [], schedules: [], unworked: [], runningCount: 0 });
    expect(s.tiles).toMatchObject({
      throughput: 0,
      waiting: 0,
      running: 0,
      retries: 0,
      failed: 0,
      oldestReadySeconds: null,
      pickupP50: null,
    });
    expect(s.throughput).toHaveLength(120);
    expect(s.version).toMatch(/^\d+\.\d+\.\d+/);
    await sampler.stop();
    await q.close();
    await f.sql(`DROP SCHEMA "${f.schema}_empty" CASCADE`);
  });

  it('shows jobs as they flow: counts, throughput, the feed, running jobs with their task and lease, problems, workers, schedules', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('d.mail', { retryLimit: 0 });
    await q.createQueue('d.idle');
    const release = deferred();
    const holding = deferred();
    await q.work('d.mail', { concurrency: 2, pollingIntervalSeconds: 0.1 }, async function sendMail(job: Job<string>) {
      if (job.data === 'hold') {
        holding.resolve();
        await release.promise;
      }
      if (job.data === 'bad') throw new Error('<img src=x onerror=alert(1)>');
      return 'sent';
    });
    await q.schedule('d.mail', '0 0 * * *', 'nightly');
    const sampler = await samplerOf(q);
    await sampler.sampleNow();
    const [, held, bad] = await q.insert('d.mail', [{ data: 'ok' }, { data: 'hold' }, { data: 'bad' }]);
    await q.insert('d.idle', [{ data: 1 }, { data: 2 }]);
    await holding.promise;
    await until(async () => (await q.getJobById('d.mail', bad!))!.state === 'failed', 'the bad job failed');

    const s = await until(async () => {
      const snap = await sampler.sampleNow();
      // the per-second counts stop at the start of the sample's second: the failure is counted a second later
      const shown =
        snap.problems.length > 0 && snap.running.length > 0 && snap.feed.some((e) => e.kind === 'failed') && snap.tiles.failed === 1;
      return shown ? snap : null;
    }, 'a sample that shows the flow');
    expect(s.error).toBeNull();
    const mail = s.queues.find((x) => x.name === 'd.mail')!;
    expect(mail).toMatchObject({ running: 1, waiting: 0, loops: 1, tasks: ['sendMail'] });
    expect(s.queues.find((x) => x.name === 'd.idle')).toMatchObject({ waiting: 2, ready: 2, loops: 0 });
    expect(s.unworked).toEqual(['d.idle']);
    expect(s.tiles).toMatchObject({ waiting: 2, running: 1, failed: 1 });
    expect(s.tiles.oldestReadySeconds).toBeGreaterThanOrEqual(0);
    expect(
      s.throughput.reduce((n, x) => n + (x.completed ?? 0), 0) + s.throughput.reduce((n, x) => n + (x.failed ?? 0), 0),
    ).toBeGreaterThanOrEqual(1);
    expect(s.running[0]).toMatchObject({ id: held, queue: 'd.mail', task: 'sendMail', attempt: 1 });
    expect(s.running[0]!.instance).toBe(s.workers[0]!.id);
    expect(s.running[0]!.leaseUntil! - s.at).toBeGreaterThan(60_000);
    expect(s.problems[0]).toMatchObject({ id: bad, queue: 'd.mail', task: 'sendMail', attempts: 1, error: '<img src=x onerror=alert(1)>' });
    expect(s.workers[0]).toMatchObject({ leases: 1, loops: [{ queue: 'd.mail', task: 'sendMail', concurrency: 2 }] });
    expect(s.schedules[0]).toMatchObject({ name: 'd.mail', cron: '0 0 * * *', tz: 'UTC', task: 'sendMail', last: null });
    const kinds = new Set(s.feed.map((e) => `${e.kind}:${e.id}`));
    expect(kinds.has(`sent:${bad}`)).toBe(true);
    expect(kinds.has(`failed:${bad}`)).toBe(true);
    expect(s.feed.find((e) => e.kind === 'failed')!.message).toBe('<img src=x onerror=alert(1)>');

    // paused: no longer "unworked", it waits on purpose
    await q.pauseQueue('d.idle');
    expect((await sampler.sampleNow()).unworked).toEqual([]);
    release.resolve();
    await sampler.stop();
  });

  it('reads the tiles of known jobs: pickup and run percentiles of the latest finishes, and the retries of the last minute', async () => {
    const q = f.create({ supervise: false, schema: `${f.schema}_tiles` });
    await q.createQueue('t');
    const ids = await q.insert(
      't',
      Array.from({ length: 9 }, (_, i) => ({ data: i })),
    );
    const set = (id: string, assignments: string) => f.sql(`UPDATE "${f.schema}_tiles".jobs SET ${assignments} WHERE id = $1`, [id]);
    // four finished 10 s ago, having waited 1, 2, 3 and 4 s from due to claim, and run 0.5, 1, 1.5 and 2 s
    const timed: [wait: number, run: number][] = [
      [1, 0.5],
      [2, 1],
      [3, 1.5],
      [4, 2],
    ];
    for (const [i, [wait, run]] of timed.entries()) {
      await set(
        ids[i]!,
        `state = 'completed', completed_on = now() - interval '10 seconds',
         started_on = now() - interval '10 seconds' - ${run} * interval '1 second',
         start_after = now() - interval '10 seconds' - ${run + wait} * interval '1 second',
         created_on = now() - interval '10 seconds' - ${run + wait} * interval '1 second'`,
      );
    }
    // retried within the minute: two waiting for their delay, one running again; one failed too long ago
    const failedAt = (seconds: number) =>
      `last_error = jsonb_build_object('name', 'Error', 'message', 'x', 'attempt', 1, 'on', now() - interval '${seconds} seconds'), retry_count = 1`;
    await set(ids[4]!, `state = 'retry', start_after = now() + interval '30 seconds', ${failedAt(5)}`);
    await set(ids[5]!, `state = 'retry', start_after = now() + interval '45 seconds', ${failedAt(8)}`);
    await set(ids[6]!, `state = 'active', worker_id = 'w', lease_until = now() + interval '1 hour', started_on = now(), ${failedAt(12)}`);
    await set(ids[7]!, `state = 'retry', start_after = now() + interval '1 hour', ${failedAt(120)}`);
    const sampler = await samplerOf(q);
    const { tiles, error } = await sampler.sampleNow();
    expect(error).toBeNull();
    expect(tiles.timedJobs).toBe(4);
    // PostgreSQL's percentile_cont: interpolated between the two nearest of the sorted values
    expect(tiles.pickupP50).toBeCloseTo(2.5, 3);
    expect(tiles.pickupP95).toBeCloseTo(3.85, 3);
    expect(tiles.runP50).toBeCloseTo(1.25, 3);
    expect(tiles.runP95).toBeCloseTo(1.925, 3);
    expect(tiles.retries).toBe(3);
    await sampler.stop();
    await q.close();
    await f.sql(`DROP SCHEMA "${f.schema}_tiles" CASCADE`);
  });

  it('counts a queue past the cap as over it, never walking the whole backlog', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('d.big');
    await q.insert(
      'd.big',
      Array.from({ length: QUEUE_COUNT_CAP + 5 }, () => ({})),
    );
    const sampler = await samplerOf(q);
    const s = await sampler.sampleNow();
    expect(s.queues[0]).toMatchObject({ name: 'd.big', waitingOver: true, readyOver: true, ready: QUEUE_COUNT_CAP });
    // the monitor's count, once a pass has made one, is shown past the cap
    await q.monitor({ force: true });
    expect((await sampler.sampleNow()).queues.find((x) => x.name === 'd.big')!.waiting).toBe(QUEUE_COUNT_CAP + 5);
    await sampler.stop();
  });

  it('reads in a READ ONLY transaction: a write there is refused by the server', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('d.ro');
    await q.start();
    const rt = runtimeOf(q);
    const err = await inTransaction(
      () => rt.connect(),
      (client) => client.query(`UPDATE "${f.schema}".queues SET paused = true WHERE name = 'd.ro'`),
      beginDashboardRead,
    ).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('25006');
    expect((await q.getQueue('d.ro'))!.paused).toBe(false);
  });

  it('samples once a second however many listen, and stops when nobody does', async () => {
    const q = f.create({ supervise: false });
    await q.start();
    const rt = runtimeOf(q);
    // when each sample starts: a sample's first step is its connect()
    const starts: number[] = [];
    const sampler = new DashboardSampler({
      statements: rt.statements,
      connect: () => {
        starts.push(performance.now());
        return rt.connect();
      },
      prepared: rt.namesStatements,
    });
    const unsubscribes = Array.from({ length: 50 }, () => sampler.subscribe(() => undefined));
    await until(() => sampler.samples >= 5, 'five samples');
    // 50 listeners, one sample a second: the sampler times each sample from the start of the one before (a slow
    // sample shortens the wait after it), so what holds is that samples start at least an interval apart, not that
    // they end so. 50 ms allow for a timer that fires a millisecond early, clocks read in whole milliseconds, and the
    // steps between the sampler's clock read and connect(); one sample per listener would start them together.
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(4);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(SAMPLE_INTERVAL_MS - 50);
    for (const u of unsubscribes) u();
    const stoppedAt = sampler.samples;
    // a sampler that kept going would read two or three more in this time
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(sampler.samples).toBeLessThanOrEqual(stoppedAt + 1);
    await sampler.stop();
  });

  it('prepares its statements only where the engine prepares its own (not with preparedStatements: false)', async () => {
    for (const preparedStatements of [true, false]) {
      // one connection: the sample's and the check's
      const q = f.create({ supervise: false, poolSize: 1, preparedStatements });
      await q.createQueue('d.prepared');
      const sampler = await samplerOf(q);
      expect((await sampler.sampleNow()).error).toBeNull();
      const client = await runtimeOf(q).connect();
      try {
        const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'pgq_%'");
        expect({ preparedStatements, named: rows[0]!.n > 0 }).toEqual({ preparedStatements, named: preparedStatements });
      } finally {
        client.release();
      }
      await sampler.stop();
      await q.close();
    }
  });

  it('a database it cannot read is reported by its code, never its address, and the last figures stay', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('d.down');
    await q.start();
    const rt = runtimeOf(q);
    let down = false;
    const sampler = new DashboardSampler({
      statements: rt.statements,
      // as Node's net module fails a connection
      connect: () =>
        down
          ? Promise.reject(
              Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED', address: '10.0.0.5', port: 5432 }),
            )
          : rt.connect(),
      prepared: rt.namesStatements,
    });
    const good = await sampler.sampleNow();
    expect(good.error).toBeNull();
    down = true;
    const bad = await sampler.sampleNow();
    expect(bad.error).toBe('the database cannot be reached (ECONNREFUSED)');
    expect(bad.queues).toEqual(good.queues);
    down = false;
    expect((await sampler.sampleNow()).error).toBeNull();
    await sampler.stop();
  });
});
