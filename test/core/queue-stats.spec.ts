import { InvalidOptionError, QueueNotFoundError } from '../../lib/core/errors.js';
import { percentile } from '../../lib/core/stats/bins.js';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('qstats');
const persisted = f.create({ supervise: false, persistQueueStats: true });
const plain = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
async function queue(): Promise<string> {
  const name = `qs${++n}`;
  await plain.createQueue(name);
  return name;
}

/** Stores a snapshot captured at `seconds` after the epoch, as a monitor pass would have. */
async function snapshot(name: string, seconds: number, queued: number, created: number | null, wait: number[] | null = null) {
  await f.sql(
    `INSERT INTO $schema.queue_stats (queue, captured_on, queued_count, total_count, created_delta, delta_seconds, delta_on, wait_bins)
     VALUES ($1, to_timestamp($2), $3, $3, coalesce($4, 0), CASE WHEN $4::int IS NULL THEN NULL ELSE 60 END,
       to_timestamp($2 - 10), $5)`,
    [name, seconds, queued, created, wait],
  );
}

const at = (seconds: number) => new Date(seconds * 1000);
const bins = (k: number, count: number) => Array.from({ length: 48 }, (_, i) => (i === k ? count : 0));

describe('getQueueStats with persistQueueStats', () => {
  it('returns the snapshots most recent first, within from/to, up to the limit', async () => {
    const name = await queue();
    for (const [t, queued] of [
      [600, 1],
      [660, 2],
      [720, 3],
      [780, 4],
    ] as const)
      await snapshot(name, t, queued, queued * 10);
    const all = await persisted.getQueueStats(name);
    expect(all.map((s) => [s.capturedOn, s.queuedCount, s.createdDelta])).toEqual([
      [at(780), 4, 40],
      [at(720), 3, 30],
      [at(660), 2, 20],
      [at(600), 1, 10],
    ]);
    expect((await persisted.getQueueStats(name, { limit: 2 })).map((s) => s.queuedCount)).toEqual([4, 3]);
    expect((await persisted.getQueueStats(name, { from: at(660), to: at(720) })).map((s) => s.queuedCount)).toEqual([3, 2]);
  });

  it('downsamples into epoch-aligned buckets, summing deltas and histograms, reading percentiles from the sums', async () => {
    const name = await queue();
    await snapshot(name, 7_205, 5, 1, bins(10, 1)); // bucket 7200
    await snapshot(name, 7_265, 8, 2, bins(20, 3)); // bucket 7200 (its deltas end at 7255)
    await snapshot(name, 10_810, 1, null); // bucket 10800, no window measured
    const series = await persisted.getQueueStats(name, { bucketSeconds: 3600, aggregate: 'avg', percentiles: [50, 25] });
    expect(series).toHaveLength(2);
    expect(series[0]).toMatchObject({ capturedOn: at(10_800), queuedCount: 1, createdDelta: null });
    const summed = bins(10, 1).map((v, i) => v + bins(20, 3)[i]!);
    expect(series[1]).toMatchObject({ capturedOn: at(7_200), queuedCount: 7, createdDelta: 3, deltaSeconds: 120, waitBins: summed });
    expect(series[1]!.percentiles).toEqual([
      { p: 50, waitSeconds: percentile(summed, 50), runSeconds: null },
      { p: 25, waitSeconds: percentile(summed, 25), runSeconds: null },
    ]);
    // maxDataPoints over the window asked: 2 hours in 2 points is the same hour-wide buckets
    expect(await persisted.getQueueStats(name, { from: at(7_200), to: at(14_400), maxDataPoints: 2 })).toEqual(
      (await persisted.getQueueStats(name, { bucketSeconds: 3600 })).filter((s) => s.capturedOn >= at(7_200)),
    );
  });

  it('force runs a pass first, so the series ends now', async () => {
    const name = await queue();
    await plain.send(name, {});
    expect(await persisted.getQueueStats(name)).toEqual([]);
    const [latest] = await persisted.getQueueStats(name, { force: true });
    expect(latest).toMatchObject({ name, queuedCount: 1, totalCount: 1 });
    expect(Date.now() - latest!.capturedOn.getTime()).toBeLessThan(60_000);
  });
});

describe('getQueueStats without persistQueueStats', () => {
  it('is one snapshot: the counts the last pass cached, counted now when none has or when forced', async () => {
    const name = await queue();
    await plain.send(name, {});
    const [first] = await plain.getQueueStats(name);
    expect(first).toMatchObject({ name, queuedCount: 1, createdDelta: null, waitBins: null });
    await plain.send(name, {});
    expect((await plain.getQueueStats(name))[0]!.queuedCount).toBe(1);
    // counted a minute ago (force counts at most once a minute: below)
    await f.sql(`UPDATE $schema.queues SET counted_on = counted_on - interval '61 seconds' WHERE name = $1`, [name]);
    expect((await plain.getQueueStats(name, { force: true }))[0]!.queuedCount).toBe(2);
    const counted = (await plain.getQueue(name))!.countedOn!;
    expect(await plain.getQueueStats(name, { to: new Date(counted.getTime() - 1) })).toEqual([]);
  });
});

describe('force, at most once a minute per queue', () => {
  /** Moves the queue's last count `seconds` back, as if no instance had counted it since. */
  const age = (name: string, seconds: number) =>
    f.sql(`UPDATE $schema.queues SET counted_on = counted_on - $2 * interval '1 second' WHERE name = $1`, [name, seconds]);

  it('without persistQueueStats: a second force within the minute serves the count of the first', async () => {
    const name = await queue();
    await plain.send(name, {});
    expect((await plain.getQueueStats(name, { force: true }))[0]!.queuedCount).toBe(1);
    await plain.send(name, {});
    expect((await plain.getQueueStats(name, { force: true }))[0]!.queuedCount).toBe(1);
    await age(name, 59);
    expect((await plain.getQueueStats(name, { force: true }))[0]!.queuedCount).toBe(1);
    await age(name, 2);
    expect((await plain.getQueueStats(name, { force: true }))[0]!.queuedCount).toBe(2);
  });

  it('with persistQueueStats: no new pass while the queue has a snapshot of the last minute', async () => {
    const name = await queue();
    await plain.send(name, {});
    const first = await persisted.getQueueStats(name, { force: true });
    expect(first.map((x) => x.queuedCount)).toEqual([1]);
    await plain.send(name, {});
    expect((await persisted.getQueueStats(name, { force: true })).map((x) => x.queuedCount)).toEqual([1]);
    await f.sql(`UPDATE $schema.queue_stats SET captured_on = captured_on - interval '59 seconds' WHERE queue = $1`, [name]);
    expect((await persisted.getQueueStats(name, { force: true })).map((x) => x.queuedCount)).toEqual([1]);
    await f.sql(`UPDATE $schema.queue_stats SET captured_on = captured_on - interval '2 seconds' WHERE queue = $1`, [name]);
    const after = await persisted.getQueueStats(name, { force: true });
    expect(after.map((x) => x.queuedCount)).toEqual([2, 1]);
  });

  it('with persistQueueStats: a count that kept no snapshot (getQueue with force) does not hold the pass back', async () => {
    const name = await queue();
    await plain.send(name, {});
    await plain.getQueue(name, { force: true });
    expect((await persisted.getQueueStats(name, { force: true })).map((x) => x.queuedCount)).toEqual([1]);
  });
});

describe('bad input', () => {
  it('names the field, what it accepts and what it got', async () => {
    const name = await queue();
    const cases: [object, string][] = [
      [{ limit: 0 }, 'options.limit'],
      [{ limit: 100_001 }, 'options.limit'],
      [{ bucketSeconds: 60, maxDataPoints: 10 }, 'options.maxDataPoints'],
      [{ aggregate: 'max' }, 'options.aggregate'],
      [{ bucketSeconds: 60, aggregate: 'median' }, 'options.aggregate'],
      [{ percentiles: [50, 0] }, 'options.percentiles[1]'],
      [{ percentiles: [] }, 'options.percentiles'],
      [{ from: '2026-01-01' }, 'options.from'],
      [{ from: at(10), to: at(5) }, 'options.to'],
      [{ every: 5 }, 'options.every'],
    ];
    for (const [options, field] of cases) {
      const err = await persisted.getQueueStats(name, options as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err).toMatchObject({ field });
    }
    await expect(persisted.getQueueStats('qs.absent')).rejects.toBeInstanceOf(QueueNotFoundError);
    await expect(plain.getQueueStats('qs.absent')).rejects.toBeInstanceOf(QueueNotFoundError);
  });
});

describe('force while a pass is under way', () => {
  it('waits for that pass, then runs its own', async () => {
    const name = await queue();
    await plain.send(name, {});
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(1885824376, hashtext($1))', [f.schema]);
      const forced = persisted.getQueueStats(name, { force: true });
      await until(
        async () =>
          // this schema's stats lock only: another test's session may wait for an advisory lock of its own
          (
            await f.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                 AND classid = 1885824376 AND objid = hashtext($1)::oid AND objsubid = 2`,
              [f.schema],
            )
          )[0]!.n > 0,
        'the forced pass waits for the lock',
      );
      await holder.query('COMMIT');
      const [latest] = await forced;
      expect(latest).toMatchObject({ name, queuedCount: 1 });
    } finally {
      holder.release();
    }
  });
});
