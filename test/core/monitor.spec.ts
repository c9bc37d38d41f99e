import { binOf, BIN_COUNT } from '../../lib/core/stats/bins.js';
import { buildStatements } from '../../lib/core/sql/index.js';
import pg from 'pg';
import { PgQueue } from '../../lib/core/pg-queue.js';
import { testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('monitor');
const q = f.create({ supervise: false });
const stats = f.create({ supervise: false, persistQueueStats: true });
afterAll(() => f.cleanup());

let n = 0;
async function queue(options = {}): Promise<string> {
  const name = `mon${++n}`;
  await q.createQueue(name, options);
  return name;
}

/** Stores a finished job with the given timestamps (seconds before now) directly, as a backdated fixture. */
async function finished(
  name: string,
  state: 'completed' | 'failed',
  ago: { created: number; due?: number; started: number | null; ended: number },
): Promise<void> {
  await f.sql(
    `INSERT INTO $schema.jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until,
       created_on, start_after, started_on, completed_on)
     VALUES ($1, $2, 0, 0, false, 60, 3600, 'infinity',
       now() - $3 * interval '1 second', now() - $4 * interval '1 second',
       now() - $5 * interval '1 second', now() - $6 * interval '1 second')`,
    [name, state, ago.created, ago.due ?? ago.created, ago.started, ago.ended],
  );
}

/**
 * Sets where the queue's last recorded window ended, as if a pass had run then; returns that time as text (to the
 * microsecond, where a Date keeps milliseconds).
 */
const windowEnded = async (name: string, secondsAgo: number): Promise<string> => {
  const [row] = await f.sql<{ at: string }>(
    `UPDATE $schema.queues SET delta_on = now() - $2 * interval '1 second' WHERE name = $1 RETURNING delta_on::text AS at`,
    [name, secondsAgo],
  );
  return row!.at;
};

describe('the monitor pass caches counts on the queue', () => {
  it('getQueue reads the cache: zeros before a pass, the counts of the last pass after it', async () => {
    const name = await queue();
    await q.insert(name, [{}, {}, { startAfter: 3600 }]);
    expect(await q.getQueue(name)).toMatchObject({ queuedCount: 0, totalCount: 0, countedOn: null });
    const result = await q.monitor({ force: true });
    expect(result.ran).toBe(true);
    expect(result.queues.find((x) => x.name === name)).toEqual({
      name,
      queuedCount: 3,
      readyCount: 2,
      warningQueueSize: null,
      previousQueuedCount: null,
    });
    const counted = (await q.getQueue(name))!;
    expect(counted).toMatchObject({ queuedCount: 3, deferredCount: 1, readyCount: 2, activeCount: 0, totalCount: 3 });
    expect(counted.countedOn).toBeInstanceOf(Date);
    await q.send(name, {});
    expect((await q.getQueue(name))!.queuedCount).toBe(3);
    expect((await q.getQueue(name, { force: true }))!.queuedCount).toBe(4);
  });

  it('force counts the named queue only', async () => {
    const a = await queue();
    const b = await queue();
    await q.send(a, {});
    await q.send(b, {});
    await q.getQueue(a, { force: true });
    expect((await q.getQueue(a))!.queuedCount).toBe(1);
    expect((await q.getQueue(b))!.countedOn).toBeNull();
  });

  it('counts every state, blocked flow children apart from deferred jobs', async () => {
    const name = await queue();
    const parent = await queue();
    await q.flow([
      { name: parent, ref: 'p' },
      { name, ref: 'c', dependsOn: ['p'] },
    ]);
    await q.insert(name, [{ retryLimit: 0 }, {}, {}, { startAfter: 60 }]);
    const [first, second] = await q.fetch(name, { batchSize: 2 });
    await q.fail(name, first!.id, new Error('x'));
    expect(second).toBeDefined();
    await q.monitor({ force: true });
    expect(await q.getQueue(name)).toMatchObject({
      queuedCount: 3,
      blockedCount: 1,
      deferredCount: 1,
      readyCount: 1,
      activeCount: 1,
      failedCount: 1,
      totalCount: 5,
    });
  });

  it('lists the keys of the active jobs of a singleton queue', async () => {
    const name = await queue({ policy: 'singleton' });
    await q.insert(name, [{ singletonKey: 'b' }, { singletonKey: 'a' }, { singletonKey: 'c' }]);
    await q.fetch(name, { batchSize: 2 });
    await q.monitor({ force: true });
    expect((await q.getQueue(name))!.singletonsActive).toEqual(['a', 'b']);
    const plain = await queue();
    await q.monitor({ force: true });
    expect((await q.getQueue(plain))!.singletonsActive).toBeNull();
  });

  it('two instances asked at once: one pass runs', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await Promise.all([a.start(), b.start()]);
    await f.sql(`DELETE FROM $schema.maintenance WHERE task IN ('monitor', 'reap')`);
    const monitors = await Promise.all([a.monitor(), b.monitor(), a.monitor(), b.monitor()]);
    expect(monitors.filter((r) => r.ran)).toHaveLength(1);
    const passes = await Promise.all([a.maintain(), b.maintain(), a.maintain(), b.maintain()]);
    expect(passes.filter((r) => r.ran)).toHaveLength(1);
  });

  it('a supervising instance runs the pass on its own, every monitorIntervalSeconds', async () => {
    const name = await queue();
    await q.send(name, {});
    await f.sql(`DELETE FROM $schema.maintenance WHERE task = 'monitor'`);
    const supervisor = f.create({ supervise: true, monitorIntervalSeconds: 1 });
    try {
      await supervisor.start();
      await until(async () => (await q.getQueue(name))!.queuedCount === 1, 'the supervisor counted the queue');
    } finally {
      // Its passes, every second, would move a later test's window (the queue's last count) before that test's own pass.
      await supervisor.close();
    }
  });
});

describe('persistQueueStats: deltas and histograms', () => {
  it('counts what was created, completed and failed in the window, and bins how long the finished jobs waited and ran', async () => {
    const name = await queue();
    const since = await windowEnded(name, 100); // the window is (now - 100 s, now - 10 s]
    await finished(name, 'completed', { created: 90, started: 89.5, ended: 88 }); // waited 0.5 s, ran 1.5 s
    await finished(name, 'completed', { created: 200, due: 60, started: 57, ended: 50 }); // deferred: waited 3 s from due, ran 7 s
    await finished(name, 'failed', { created: 80, started: 79.98, ended: 20 }); // waited 20 ms, ran 59.98 s
    await finished(name, 'failed', { created: 70, started: null, ended: 69 }); // failed unstarted: no wait, no run
    await finished(name, 'completed', { created: 8, started: 7, ended: 6 }); // in the last 10 s: the next window's
    await finished(name, 'completed', { created: 300, started: 299, ended: 150 }); // before the window
    await stats.monitor({ force: true });
    // the window ends 10 s before the pass's now(), which came after windowEnded's now() and before this statement's
    const [bound] = await f.sql<{ most: number }>(
      `SELECT extract(epoch FROM statement_timestamp() - interval '10 seconds' - $1::timestamptz)::float8 AS most`,
      [since],
    );
    const info = (await stats.getQueue(name))!;
    expect(info).toMatchObject({ createdDelta: 3, completedDelta: 2, failedDelta: 2 });
    expect(info.deltaSeconds).toBeGreaterThanOrEqual(90);
    expect(info.deltaSeconds).toBeLessThanOrEqual(bound!.most);
    expect(Date.now() - info.deltaOn!.getTime()).toBeGreaterThanOrEqual(9_000);
    const expected = (seconds: number[]) => {
      const bins = new Array<number>(BIN_COUNT).fill(0);
      for (const s of seconds) bins[binOf(s)] = (bins[binOf(s)] ?? 0) + 1;
      return bins;
    };
    expect(info.waitBins).toEqual(expected([0.5, 3, 0.02]));
    expect(info.runBins).toEqual(expected([1.5, 7, 59.98]));
    const [snapshot] = await f.sql<{ created_delta: number; wait_bins: number[]; captured_on: Date }>(
      'SELECT created_delta, wait_bins, captured_on FROM $schema.queue_stats WHERE queue = $1',
      [name],
    );
    expect(snapshot).toMatchObject({ created_delta: 3, wait_bins: info.waitBins });
    expect(snapshot!.captured_on).toEqual(info.countedOn);
  });

  it('puts each duration in the bin binOf names, from under 10 ms to beyond a day', async () => {
    // a window may span two intervals: with a day's interval, two days
    const long = f.create({ supervise: false, persistQueueStats: true, monitorIntervalSeconds: 86_400 });
    const name = await queue();
    await windowEnded(name, 150_000);
    const runs = [0.004, 0.012, 0.3, 2.5, 75, 4_000, 50_000, 90_000];
    for (const run of runs) await finished(name, 'completed', { created: 100_020 + run, started: 100_000 + run, ended: 100_000 });
    await long.monitor({ force: true });
    const info = (await long.getQueue(name))!;
    expect(info.runBins!.flatMap((count, bin) => Array<number>(count).fill(bin))).toEqual(runs.map(binOf));
    expect(info.waitBins![binOf(20)]).toBe(runs.length);
  });

  it('starts a fresh window when none was recorded, or the last ended long ago', async () => {
    const name = await queue();
    await finished(name, 'completed', { created: 30, started: 29, ended: 28 });
    await stats.monitor({ force: true });
    const first = (await stats.getQueue(name))!;
    expect(first).toMatchObject({ createdDelta: 0, completedDelta: 0, deltaSeconds: null, waitBins: null, runBins: null });
    expect(first.deltaOn).toBeInstanceOf(Date);
    await windowEnded(name, 3 * 3600);
    await stats.monitor({ force: true });
    expect(await stats.getQueue(name)).toMatchObject({ completedDelta: 0, deltaSeconds: null });
  });

  it('without persistQueueStats, records no deltas and no snapshot', async () => {
    const name = await queue();
    await windowEnded(name, 100);
    await finished(name, 'completed', { created: 90, started: 89, ended: 88 });
    await q.monitor({ force: true });
    expect(await q.getQueue(name)).toMatchObject({ totalCount: 1, completedDelta: 0, waitBins: null });
    expect(await f.sql('SELECT 1 FROM $schema.queue_stats WHERE queue = $1', [name])).toEqual([]);
  });

  it('deletes snapshots older than queueStatRetentionDays, and a queue takes its snapshots with it', async () => {
    const name = await queue();
    await f.sql(
      `INSERT INTO $schema.queue_stats (queue, captured_on) VALUES ($1, now() - interval '8 days'), ($1, now() - interval '6 days')`,
      [name],
    );
    await stats.monitor({ force: true });
    const kept = await f.sql<{ days: number }>(
      `SELECT round(extract(epoch FROM now() - captured_on) / 86400)::int AS days FROM $schema.queue_stats WHERE queue = $1 ORDER BY 1`,
      [name],
    );
    expect(kept.map((r) => r.days)).toEqual([0, 6]);
    await q.deleteQueue(name);
    expect(await f.sql('SELECT 1 FROM $schema.queue_stats WHERE queue = $1', [name])).toEqual([]);
  });
});

describe('persistQueueStats: work committed after its window was recorded', () => {
  /** A job stored in `client`'s transaction, with its times (seconds before that transaction's start) backdated. */
  const stored = (client: pg.PoolClient, name: string, state: string, created: number, ended: number | null) =>
    client.query(
      `INSERT INTO "${f.schema}".jobs (queue, state, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds,
         keep_until, created_on, start_after, started_on, completed_on)
       VALUES ($1, $2, 0, 0, false, 60, 3600, 'infinity', now() - $3 * interval '1 second', now() - $3 * interval '1 second',
         now() - $4 * interval '1 second', now() - $4 * interval '1 second')`,
      [name, state, created, ended],
    );
  const snapshots = (name: string) =>
    f.sql<{ created_delta: number; completed_delta: number; failed_delta: number; wait_bins: number[] | null }>(
      'SELECT created_delta, completed_delta, failed_delta, wait_bins FROM $schema.queue_stats WHERE queue = $1 ORDER BY captured_on',
      [name],
    );
  /** A snapshot recorded as by a pass, whose window was (at - from, at - to] (seconds before `at`, a timestamptz). */
  const recorded = (name: string, at: string, from: number, to: number) =>
    f.sql(
      `INSERT INTO $schema.queue_stats (queue, captured_on, created_delta, completed_delta, failed_delta, delta_seconds, delta_on)
       VALUES ($1, $2::timestamptz - ($4 - 10) * interval '1 second', 0, 0, 0, $3 - $4, $2::timestamptz - $4 * interval '1 second')`,
      [name, at, from, to],
    );

  /** A waiting job created `ago` seconds before `at` (a timestamptz). */
  const waiting = (name: string, at: string, ago: number) =>
    f.sql(
      `INSERT INTO $schema.jobs (queue, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until,
         created_on)
       VALUES ($1, 0, 0, false, 60, 3600, 'infinity', $2::timestamptz - $3 * interval '1 second')`,
      [name, at, ago],
    );

  it('a later pass adds it to the snapshot its stamp belongs to; the histograms stay as recorded, and a delta never falls', async () => {
    const name = await queue();
    await windowEnded(name, 100);
    await finished(name, 'completed', { created: 90, started: 89.5, ended: 88 });
    const late = await f.pool.connect();
    let done = false;
    try {
      await late.query('BEGIN');
      await stored(late, name, 'completed', 80, 70);
      await stored(late, name, 'failed', 60, 50);
      await stored(late, name, 'created', 40, null);
      // created before the window and finished in it: a completion only
      await stored(late, name, 'completed', 300, 70);
      // created in the window, and running now or cancelled since: a creation only
      await stored(late, name, 'created', 60, null);
      await late.query(
        `UPDATE "${f.schema}".jobs SET state = 'active', worker_id = 'w', lease_until = now() + interval '1 hour', started_on = now()
         WHERE id = (SELECT max(id) FROM "${f.schema}".jobs)`,
      );
      await stored(late, name, 'cancelled', 50, 45);
      await stats.monitor({ force: true });
      const [before] = await snapshots(name);
      expect(before).toMatchObject({ created_delta: 1, completed_delta: 1, failed_delta: 0 });
      await late.query('COMMIT');
      done = true;
    } finally {
      if (!done) await late.query('ROLLBACK');
      late.release();
    }
    await stats.monitor({ force: true });
    const [first, second] = await snapshots(name);
    expect(first).toMatchObject({ created_delta: 6, completed_delta: 3, failed_delta: 1 });
    expect(first!.wait_bins!.reduce((a, b) => a + b, 0)).toBe(1);
    expect(second).toMatchObject({ created_delta: 0, completed_delta: 0, failed_delta: 0 });
    // the queue's row holds the last pass's window, which the late jobs are not in
    expect(await stats.getQueue(name)).toMatchObject({ createdDelta: 0, completedDelta: 0 });
    await f.sql('DELETE FROM $schema.jobs WHERE queue = $1', [name]);
    await stats.monitor({ force: true });
    expect((await snapshots(name))[0]).toMatchObject({ created_delta: 6, completed_delta: 3, failed_delta: 1 });
  });

  it('counts a job stamped on a boundary in the window that ends there, as the pass did', async () => {
    const name = await queue();
    const [{ at }] = (await f.sql<{ at: string }>('SELECT now()::text AS at')) as [{ at: string }];
    await recorded(name, at, 300, 200);
    await recorded(name, at, 200, 100);
    await waiting(name, at, 200);
    await stats.monitor({ force: true });
    expect((await snapshots(name)).slice(0, 2).map((x) => x.created_delta)).toEqual([1, 0]);
  });

  it("looks back an hour, or the queue's deleteAfterSeconds or failedDeleteAfterSeconds when shorter; not at all with removeOnComplete", async () => {
    const [{ at }] = (await f.sql<{ at: string }>('SELECT now()::text AS at')) as [{ at: string }];
    const hour = await queue();
    const short = await queue({ deleteAfterSeconds: 300 });
    const removed = await queue({ removeOnComplete: true });
    const failedShort = await queue({ failedDeleteAfterSeconds: 300 });
    for (const name of [hour, short, removed, failedShort]) {
      await recorded(name, at, 3800, 3700);
      await recorded(name, at, 1100, 1000);
      await recorded(name, at, 250, 200);
      for (const ago of [3750, 1050, 225]) await waiting(name, at, ago);
    }
    await stats.monitor({ force: true });
    const raised = async (name: string) => (await snapshots(name)).slice(0, 3).map((x) => x.created_delta);
    expect(await raised(hour)).toEqual([0, 1, 1]);
    expect(await raised(short)).toEqual([0, 0, 1]);
    expect(await raised(removed)).toEqual([0, 0, 0]);
    expect(await raised(failedShort)).toEqual([0, 0, 1]);
  });
});

/** The UTC day `offset` days from today, as a day partition's name ends (YYYYMMDD). */
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');

describe("queue_stats' day partitions", () => {
  const partitions = async () =>
    (
      await f.sql<{ relname: string }>(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = '$schema.queue_stats'::regclass ORDER BY 1`,
      )
    ).map((r) => r.relname);

  it('are made ahead for the next days, and a day past retention goes by dropping its partition, not deleting its rows', async () => {
    const name = await queue();
    await stats.monitor({ force: true });
    expect(await partitions()).toEqual(expect.arrayContaining([`queue_stats_${day(0)}`, `queue_stats_${day(1)}`, `queue_stats_${day(2)}`]));
    // a partition ten days old, with a snapshot in it, as the passes of that day would have left
    // made by hand: the function makes only the days near today
    await f.sql(
      `CREATE TABLE $schema.queue_stats_${day(-10)} PARTITION OF $schema.queue_stats
       FOR VALUES FROM (((now() AT TIME ZONE 'UTC')::date - 10)::timestamp AT TIME ZONE 'UTC')
       TO (((now() AT TIME ZONE 'UTC')::date - 9)::timestamp AT TIME ZONE 'UTC')`,
    );
    await f.sql(`INSERT INTO $schema.queue_stats (queue, captured_on) VALUES ($1, now() - interval '10 days')`, [name]);
    expect(
      await f.sql(
        `SELECT tableoid::regclass::text AS t FROM $schema.queue_stats WHERE queue = $1 AND captured_on < now() - interval '9 days'`,
        [name],
      ),
    ).toEqual([{ t: `${f.schema}.queue_stats_${day(-10)}` }]);
    await stats.monitor({ force: true });
    expect(await partitions()).not.toContain(`queue_stats_${day(-10)}`);
    expect(await f.sql(`SELECT 1 FROM $schema.queue_stats WHERE queue = $1 AND captured_on < now() - interval '9 days'`, [name])).toEqual(
      [],
    );
    // the snapshots of now went to a day's partition (today's, or tomorrow's across midnight), none to the default
    const homes = await f.sql<{ t: string }>(`SELECT DISTINCT tableoid::regclass::text AS t FROM $schema.queue_stats WHERE queue = $1`, [
      name,
    ]);
    expect(homes.length).toBeGreaterThan(0);
    for (const { t } of homes) expect(t).toMatch(new RegExp(`^${f.schema}\\.queue_stats_\\d{8}$`));
  });
  it("are kept by a forced pass even while another instance's pass holds the monitor's lock at that moment", async () => {
    await f.sql(
      `CREATE TABLE $schema.queue_stats_${day(-11)} PARTITION OF $schema.queue_stats
       FOR VALUES FROM (((now() AT TIME ZONE 'UTC')::date - 11)::timestamp AT TIME ZONE 'UTC')
       TO (((now() AT TIME ZONE 'UTC')::date - 10)::timestamp AT TIME ZONE 'UTC')`,
    );
    const lock = `SELECT pg_advisory_xact_lock(1885824376, hashtext($1))`;
    const waiting = () => f.passLockWaiters(1885824376);
    const [x, y] = [new pg.Client({ connectionString: testUrl() }), new pg.Client({ connectionString: testUrl() })];
    await Promise.all([x.connect(), y.connect()]);
    try {
      // x holds the lock; the forced pass's count waits behind it, and y behind the count
      await x.query('BEGIN');
      await x.query(lock, [f.schema]);
      const forced = stats.monitor({ force: true });
      await until(async () => (await waiting()).length === 1, "the forced pass's count waiting for the lock");
      const yPid = (await y.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await y.query('BEGIN');
      const yHeld = y.query(lock, [f.schema]);
      await until(async () => (await waiting()).includes(yPid), 'y waiting behind the count');
      await x.query('COMMIT');
      // the count runs and commits; y then holds the lock while the pass goes on to keep the partitions
      await yHeld;
      const settled = forced.then(() => 'settled' as const);
      const first = await Promise.race([settled, until(async () => (await waiting()).length === 1 && ('waits' as const), 'the pass')]);
      await y.query('COMMIT');
      expect(first).toBe('waits');
      await forced;
    } finally {
      await Promise.all([x.end(), y.end()]);
    }
    expect(await partitions()).not.toContain(`queue_stats_${day(-11)}`);
  });
});

describe("queue_stats' day partitions, kept by an application role that owns no table", () => {
  it('are made and dropped through the functions migration 17 owns, and the default partition is pruned', async () => {
    const role = `pgq_app_${process.pid}`;
    await stats.start(); // the schema, installed by the fixture's engines
    await f.sql(`CREATE ROLE ${role} NOLOGIN`);
    await f.sql(`GRANT USAGE ON SCHEMA $schema TO ${role}`);
    await f.sql(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA $schema TO ${role}`);
    await f.sql(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA $schema TO ${role}`);
    // sessions of that role (the pool's startup option: the test's superuser may take any role)
    const pool = new pg.Pool({ connectionString: testUrl(), options: `-c role=${role}`, max: 3 });
    const app = new PgQueue({ pool, schema: f.schema, migrate: false, supervise: false, persistQueueStats: true, logger: f.logger });
    const errors: unknown[] = [];
    app.on('error', (e) => errors.push(e));
    try {
      const name = await queue();
      await f.sql(
        `CREATE TABLE $schema.queue_stats_${day(-12)} PARTITION OF $schema.queue_stats
       FOR VALUES FROM (((now() AT TIME ZONE 'UTC')::date - 12)::timestamp AT TIME ZONE 'UTC')
       TO (((now() AT TIME ZONE 'UTC')::date - 11)::timestamp AT TIME ZONE 'UTC')`,
      );
      await f.sql(`INSERT INTO $schema.queue_stats (queue, captured_on) VALUES ($1, now() - interval '12 days')`, [name]);
      await f.sql(`INSERT INTO $schema.queue_stats_default (queue, captured_on) VALUES ($1, now() - interval '30 days')`, [name]);
      expect((await pool.query('SELECT current_user AS u')).rows[0].u).toBe(role);
      await app.monitor({ force: true });
      expect(errors).toEqual([]);
      expect(
        await f.sql(`SELECT 1 FROM $schema.queue_stats WHERE queue = $1 AND captured_on < now() - interval '11 days'`, [name]),
      ).toEqual([]);
      const tables = await f.sql<{ relname: string }>(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '$schema.queue_stats'::regclass`,
      );
      expect(tables.filter((t) => /^queue_stats_\d{8}$/.test(t.relname)).length).toBeGreaterThanOrEqual(3);
      // a login that may not delete snapshots may not drop their partitions either, nor make any
      const reader = `${role}_ro`;
      await f.sql(`CREATE ROLE ${reader} LOGIN PASSWORD 'reader'`);
      await f.sql(`GRANT USAGE ON SCHEMA $schema TO ${reader}`);
      await f.sql(`GRANT SELECT ON ALL TABLES IN SCHEMA $schema TO ${reader}`);
      const url = new URL(testUrl());
      url.username = reader;
      url.password = 'reader';
      const ro = new pg.Client({ connectionString: url.toString() });
      await ro.connect();
      try {
        const before = tables.length;
        await expect(ro.query(`SELECT "${f.schema}".drop_stats_partitions('infinity')`)).rejects.toMatchObject({ code: '42501' });
        await expect(ro.query(`SELECT "${f.schema}".create_stats_partition(current_date + 1)`)).rejects.toMatchObject({ code: '42501' });
        const after = await f.sql(`SELECT 1 FROM pg_inherits WHERE inhparent = '$schema.queue_stats'::regclass`);
        expect(after.length).toBe(before);
      } finally {
        await ro.end();
        await f.sql(`DROP OWNED BY ${reader}`);
        await f.sql(`DROP ROLE ${reader}`);
      }
    } finally {
      await app.close();
      await pool.end();
      await f.sql(`DROP OWNED BY ${role}`);
      await f.sql(`DROP ROLE ${role}`);
    }
  });
});

describe('the cost of a pass', () => {
  it('is never compiled by JIT, though the engine session prices a whole-table read at 10^10', async () => {
    await queue();
    const statements = buildStatements(`"${f.schema}"`);
    const client = await f.pool.connect();
    const jitOf = async () => {
      const { rows } = await client.query<{ 'QUERY PLAN': [Record<string, unknown>] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statements.monitorQueues}`,
        [null, true, 60, null],
      );
      return rows[0]!['QUERY PLAN'][0].JIT;
    };
    try {
      await client.query('BEGIN');
      await client.query(`SELECT set_config('enable_seqscan', 'off', true), set_config('jit_above_cost', '0', true)`);
      const [{ available }] = (await client.query<{ available: boolean }>('SELECT pg_jit_available() AS available')).rows as [
        { available: boolean },
      ];
      // where the server can JIT, this plan is compiled unless the pass's settings say otherwise
      if (available) expect(await jitOf()).toBeDefined();
      await client.query(statements.setPassSettings, [60_000]);
      expect(await jitOf()).toBeUndefined();
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});
