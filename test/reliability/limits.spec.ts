// Queue-wide limits hold across worker processes: checked from a ledger of start and end times
// (database clock) that the handlers of three processes write, never from one process's memory.
import { stateCounts, testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';
import { ledgerTableSql, startWorkerChild, stopWorkerChildren } from './children.js';

const f = queueFixture('rel_limits');
const q = f.create({ supervise: false, workers: false });
beforeAll(async () => {
  await q.start();
  await f.sql(ledgerTableSql(f.schema));
  await f.sql('CREATE TABLE $schema.spans (job_id bigint PRIMARY KEY, pid int NOT NULL, t0 timestamptz NOT NULL, t1 timestamptz)');
});
afterAll(async () => {
  await stopWorkerChildren();
  await f.cleanup();
});

async function drainWithThreeProcesses(queue: string, jobs: number, spanMs: number): Promise<void> {
  await q.insert(
    queue,
    Array.from({ length: jobs }, (_, i) => ({ data: { i } })),
  );
  const children = Array.from({ length: 3 }, () =>
    startWorkerChild({
      url: testUrl(),
      schema: f.schema,
      queue,
      mode: 'span',
      spanMs,
      // Each process alone could run far more than the limit at once.
      work: { concurrency: 8, batchSize: 8, pollingIntervalSeconds: 0.05 },
      engine: { supervise: false, poolSize: 4 },
    }),
  );
  await Promise.all(children.map((c) => c.ready()));
  await until(
    async () => (await stateCounts(f.pool, f.schema, queue)).completed === jobs,
    `${jobs} jobs of ${queue} completed`,
    40_000,
    100,
  );
  await Promise.all(children.map((c) => c.stop()));
  // Which processes won the claims is up to the lock; the limits below must hold whichever did.
}

describe('queue limits across worker processes', () => {
  it('concurrencyLimit: never more handlers running at once than the limit, not even by one', async () => {
    await q.createQueue('lim.conc', { concurrencyLimit: 3 });
    await drainWithThreeProcesses('lim.conc', 60, 30);
    // The most spans open at any instant: +1 at each start, -1 at each end, in time order (ends first on ties).
    const [peak] = await f.sql<{ peak: number }>(`
      WITH spans AS (SELECT s.* FROM $schema.spans s JOIN $schema.jobs j ON j.id = s.job_id WHERE j.queue = 'lim.conc'),
      edges AS (SELECT t0 AS t, 1 AS d FROM spans UNION ALL SELECT t1, -1 FROM spans)
      SELECT max(open)::int AS peak FROM (SELECT sum(d) OVER (ORDER BY t, d) AS open FROM edges) x`);
    // Reaching the limit depends on scheduling; exceeding it must never happen (without the lock: 20).
    expect(peak!.peak).toBeLessThanOrEqual(3);
    expect(peak!.peak).toBeGreaterThan(1);
  });

  it('rateLimit: never more jobs started in a window than the limit', async () => {
    await q.createQueue('lim.rate', { rateLimit: { count: 10, perSeconds: 1 } });
    await drainWithThreeProcesses('lim.rate', 35, 1);
    const windows = await f.sql<{ w: number; n: number }>(`
      SELECT floor(extract(epoch FROM started_on))::bigint AS w, count(*)::int AS n
      FROM $schema.jobs WHERE queue = 'lim.rate' GROUP BY 1 ORDER BY 1`);
    // 35 starts at 10 per window need at least 4 windows (without the limit: all 35 in one).
    expect(Math.max(...windows.map((x) => x.n))).toBeLessThanOrEqual(10);
    expect(windows.length).toBeGreaterThanOrEqual(4);
  });

  it('a limit’s value can change, but a queue cannot gain or lose its limit', async () => {
    await q.createQueue('lim.update', { concurrencyLimit: 2 });
    await q.updateQueue('lim.update', { concurrencyLimit: 5 });
    expect((await q.getQueue('lim.update'))!.concurrencyLimit).toBe(5);
    await expect(q.updateQueue('lim.update', { concurrencyLimit: null })).rejects.toThrow(
      'options.concurrencyLimit must be a new value, not null',
    );
    await expect(q.updateQueue('lim.update', { rateLimit: { count: 1, perSeconds: 1 } })).rejects.toThrow(
      'options.rateLimit must be left out',
    );
  });
});

describe('group concurrency across worker processes', () => {
  it('never more active jobs of one group than its tier allows, while other groups go on', async () => {
    await q.createQueue('lim.group');
    const groups = [{ id: 'tenant-free', tier: 'free' }, { id: 'tenant-pro', tier: 'pro' }, { id: 'tenant-other' }];
    await q.insert(
      'lim.group',
      Array.from({ length: 60 }, (_, i) => ({ data: { i }, group: groups[i % 3]! })),
    );
    const children = Array.from({ length: 3 }, () =>
      startWorkerChild({
        url: testUrl(),
        schema: f.schema,
        queue: 'lim.group',
        mode: 'span',
        spanMs: 30,
        work: { concurrency: 8, batchSize: 8, pollingIntervalSeconds: 0.05, groupConcurrency: { free: 1, pro: 3, default: 2 } } as never,
        engine: { supervise: false, poolSize: 4 },
      }),
    );
    await Promise.all(children.map((c) => c.ready()));
    await until(async () => (await stateCounts(f.pool, f.schema, 'lim.group')).completed === 60, '60 grouped jobs completed', 40_000, 100);
    await Promise.all(children.map((c) => c.stop()));
    const peaks = await f.sql<{ group_id: string; peak: number }>(`
      WITH spans AS (SELECT s.*, j.group_id FROM $schema.spans s JOIN $schema.jobs j ON j.id = s.job_id WHERE j.queue = 'lim.group'),
      edges AS (SELECT group_id, t0 AS t, 1 AS d FROM spans UNION ALL SELECT group_id, t1, -1 FROM spans)
      SELECT group_id, max(open)::int AS peak FROM (
        SELECT group_id, sum(d) OVER (PARTITION BY group_id ORDER BY t, d) AS open FROM edges) x
      GROUP BY group_id ORDER BY group_id`);
    const limits: Record<string, number> = { 'tenant-free': 1, 'tenant-other': 2, 'tenant-pro': 3 };
    expect(peaks.map((p) => p.group_id)).toEqual(Object.keys(limits));
    for (const { group_id, peak } of peaks) expect(peak).toBeLessThanOrEqual(limits[group_id]!);
    // The groups ran side by side: more handlers at once than any one group may have.
    const [all] = await f.sql<{ peak: number }>(`
      WITH spans AS (SELECT s.* FROM $schema.spans s JOIN $schema.jobs j ON j.id = s.job_id WHERE j.queue = 'lim.group'),
      edges AS (SELECT t0 AS t, 1 AS d FROM spans UNION ALL SELECT t1, -1 FROM spans)
      SELECT max(open)::int AS peak FROM (SELECT sum(d) OVER (ORDER BY t, d) AS open FROM edges) x`);
    expect(all!.peak).toBeGreaterThan(3);
  });

  it('groupConcurrency is refused on a queue of another policy', async () => {
    await q.createQueue('lim.group.single', { policy: 'singleton' });
    const w = f.create({ supervise: false });
    await expect(w.work('lim.group.single', { groupConcurrency: 2 }, () => 1)).rejects.toThrow(
      'options.groupConcurrency must be left out on a singleton queue',
    );
  });
});

describe('limited claims under contention', () => {
  it('a claim that waited for the queue lock stamps the time it really started, not when it began waiting', async () => {
    await q.createQueue('lim.wait', { concurrencyLimit: 5 });
    const id = (await q.send('lim.wait', {}))!;
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(1885824375, hashtext($1 || '.' || $2))`, [f.schema, 'lim.wait']);
      const claiming = q.fetch('lim.wait');
      await until(
        async () =>
          // this queue's claim lock only: another test's claims may wait for theirs meanwhile
          (
            await f.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                 AND classid = 1885824375 AND objid = hashtext($1 || '.' || $2)::oid AND objsubid = 2`,
              [f.schema, 'lim.wait'],
            )
          )[0]!.n > 0,
        'the claim waits for the queue lock',
      );
      const [{ released }] = (await holder.query<{ released: Date }>('SELECT clock_timestamp() AS released')).rows as [{ released: Date }];
      await holder.query('COMMIT');
      const [job] = await claiming;
      expect(job!.id).toBe(id);
      expect(job!.startedOn.getTime()).toBeGreaterThanOrEqual(released.getTime());
      const [row] = await f.sql<{ lease: number }>(
        `SELECT extract(epoch FROM lease_until - started_on)::int AS lease FROM $schema.jobs WHERE id = $1`,
        [id],
      );
      expect(row!.lease).toBe(900);
    } finally {
      holder.release();
    }
  });

  it('a group at its limit does not starve the groups queued behind its backlog', async () => {
    await q.createQueue('lim.starve');
    await q.insert(
      'lim.starve',
      Array.from({ length: 100 }, () => ({ group: { id: 'busy' } })),
    );
    const quiet = await q.insert(
      'lim.starve',
      Array.from({ length: 5 }, () => ({ group: { id: 'quiet' } })),
    );
    const w = f.create({ supervise: false, shutdownTimeoutMs: 20 });
    const done: string[] = [];
    await w.work('lim.starve', { concurrency: 5, pollingIntervalSeconds: 0.05, groupConcurrency: 1 }, (job) => {
      if (quiet.includes(job.id)) return void done.push(job.id);
      return new Promise(() => undefined); // the busy group's one slot stays taken
    });
    await until(() => done.length === 5, 'the quiet group ran while the busy group was at its limit', 10_000);
    // A handler's return is written a moment later: wait for the five completions, then count.
    await until(async () => (await stateCounts(f.pool, f.schema, 'lim.starve')).completed === 5, 'the quiet group completed', 10_000);
    expect((await stateCounts(f.pool, f.schema, 'lim.starve')).active).toBe(1);
    await w.stopWorkers();
  });
});
