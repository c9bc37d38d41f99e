// The engine behind PgBouncer in transaction mode, with its default options: it finds the pooler at start, works
// without prepared statements and session settings, says so once (a `pooler` warning), and turns LISTEN off unless
// the `listen` option sends it straight to PostgreSQL. Needs Debian's pgbouncer (.ci/run installs it); without
// one these tests are skipped, and say so.
import pg from 'pg';
import { loopRegistryOf, PgQueue, runtimeOf } from '../../lib/core/pg-queue.js';
import type { QueueWarning } from '../../lib/core/events.js';
import { InvalidOptionError } from '../../lib/core/errors.js';
import { DashboardSampler } from '../../lib/core/dashboard/sampler.js';
import { pgExecutor, StatementNames } from '../../lib/core/runtime/db.js';
import { HEARING_WAIT_MS } from '../../lib/core/worker/wake-listener.js';
import { dropSchema, recordingLogger, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { pgBouncerUnavailable, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';

const unavailable = pgBouncerUnavailable();
if (unavailable) console.warn(`[tests] the tests behind PgBouncer are skipped: ${unavailable}`);
const withBouncer = unavailable ? describe.skip : describe;

withBouncer('behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  const pool = testPool();
  const schemas: string[] = [];
  const made: PgQueue[] = [];

  beforeAll(async () => {
    bouncer = await startPgBouncer(testUrl());
  });
  afterEach(async () => {
    await Promise.all(made.splice(0).map((q) => q.close()));
  });
  afterAll(async () => {
    try {
      for (const schema of schemas) await dropSchema(pool, schema);
      await pool.end();
    } finally {
      await bouncer?.stop();
    }
  });

  /**
   * Keeps one server connection of a bouncer busy for half a second through `holder` (a pool of one client), once the
   * server shows it running: a client of the same bouncer that needs a server connection meanwhile gets another one.
   */
  async function holdServerConnection(holder: pg.Pool): Promise<{ holding: Promise<unknown> }> {
    const holding = holder.query('SELECT pg_sleep(0.5)');
    await until(
      async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(0.5)'`)).rowCount! > 0,
      'the holder on a server connection of the bouncer',
    );
    // wrapped: an async function returning the promise itself would wait for it
    return { holding };
  }

  /** An engine through the bouncer on a schema of its own, with its warnings kept. */
  function engine(options: Record<string, unknown> = {}, schema = uniqueSchema('bouncer')) {
    if (!schemas.includes(schema)) schemas.push(schema);
    const warnings: QueueWarning[] = [];
    const q = new PgQueue({ connectionString: bouncer.url, schema, poolSize: 4, logger: recordingLogger(), ...options });
    q.on('warning', (w) => warnings.push(w));
    made.push(q);
    return { q, schema, warnings };
  }

  it('starts with default options, says once that its session settings were refused, and sends and works jobs', async () => {
    const { q, schema, warnings } = engine();
    await q.createQueue('plain');
    const poolerWarnings = () => warnings.filter((w) => w.type === 'pooler' && /session settings/.test(w.message));
    expect(poolerWarnings()).toHaveLength(1);
    expect(poolerWarnings()[0]).toMatchObject({ type: 'pooler', listen: 'pool' });
    expect(poolerWarnings()[0]!.message).toMatch(/refused the session settings .*unsupported startup parameter: options/);
    expect(runtimeOf(q).namesStatements).toBe(false);
    const n = 300;
    await q.insert(
      'plain',
      Array.from({ length: n }, (_, i) => ({ data: { i } })),
    );
    const seen = new Set<number>();
    await q.work('plain', { concurrency: 8, batchSize: 50, pollingIntervalSeconds: 0.2 }, async (job) => {
      seen.add((job.data as { i: number }).i);
    });
    await until(async () => (await stateCounts(pool, schema, 'plain')).completed === n, `${n} jobs completed through the bouncer`);
    expect(seen.size).toBe(n);
    expect(poolerWarnings()).toHaveLength(1);
  });

  it('finds the pooler when it drops the session settings instead of refusing them', async () => {
    const lax = await startPgBouncer(testUrl(), { ignoreStartupParameters: ['options'] });
    try {
      const schema = uniqueSchema('bouncer');
      schemas.push(schema);
      const warnings: QueueWarning[] = [];
      const q = new PgQueue({ connectionString: lax.url, schema, poolSize: 2, logger: recordingLogger() });
      q.on('warning', (w) => warnings.push(w));
      try {
        await q.createQueue('dropped');
        expect(warnings.filter((w) => w.type === 'pooler')).toEqual([
          expect.objectContaining({ listen: 'pool', message: expect.stringMatching(/dropped the session settings .*they did not arrive/) }),
        ]);
        expect(runtimeOf(q).namesStatements).toBe(false);
        await q.send('dropped', { a: 1 });
        expect((await q.fetch('dropped'))[0]?.data).toEqual({ a: 1 });
      } finally {
        await q.close();
      }
    } finally {
      await lax.stop();
    }
  });

  it('refuses to start with preparedStatements: true, naming the option', async () => {
    const { q } = engine({ preparedStatements: true });
    const err = await q.createQueue('never').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as InvalidOptionError).field).toBe('preparedStatements');
    expect((err as Error).message).toMatch(/refused the session settings .* as a pooler does/);
  });

  it('with listen straight to PostgreSQL, an idle worker is woken by NOTIFY, not by its poll', async () => {
    const { q, schema, warnings } = engine({ listen: { connectionString: testUrl() } });
    await q.createQueue('woken');
    expect(warnings.filter((w) => w.type === 'pooler')).toEqual([expect.objectContaining({ listen: 'direct' })]);
    const registry = loopRegistryOf(q);
    const started: number[] = [];
    // polls once a minute: only a wake-up runs these jobs within the test's deadline
    await q.work('woken', { pollingIntervalSeconds: 60 }, async () => void started.push(Date.now()));
    // the loop's LISTEN is in place once its first (empty) claim has returned and it sleeps
    await until(
      async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE query = $1`, [`LISTEN "pgqueue_${schema}"`])).rowCount! > 0,
      'the LISTEN connection, straight to PostgreSQL',
    );
    for (let i = 0; i < 5; i++) {
      const sent = Date.now();
      await q.send('woken', { i });
      await until(() => started.length === i + 1, `job ${i} picked up through its NOTIFY`, 10_000, 5);
      expect(started[i]! - sent).toBeLessThan(10_000);
    }
    // its own NOTIFY, sent through the bouncer, reached the LISTEN connection straight to PostgreSQL
    await until(() => registry.hearingCheck === 'heard', 'the hearing check to hear');
  });

  it('without listen, the LISTEN through the bouncer hears nothing: it is turned off, said once, and loops poll', async () => {
    const { q, schema, warnings } = engine();
    await q.createQueue('polled');
    await q.work('polled', { pollingIntervalSeconds: 0.2 }, async () => undefined);
    const registry = loopRegistryOf(q);
    const deaf = () => warnings.filter((w) => w.type === 'pooler' && /heard no NOTIFY/.test(w.message));
    await until(() => deaf().length > 0, 'the hearing check finding LISTEN deaf', 2 * HEARING_WAIT_MS + 10_000, 50);
    expect(deaf()).toEqual([
      expect.objectContaining({
        listen: 'off',
        message: expect.stringMatching(/within 10 s, twice, as through a transaction-mode pooler: LISTEN is off/),
      }),
    ]);
    expect(registry.hearingCheck).toBe('deaf');
    await until(() => !registry.listening, 'the LISTEN connection closed');
    await q.send('polled', {});
    await until(async () => (await stateCounts(pool, schema, 'polled')).completed === 1, 'the job found by a poll');
  }, 60_000);

  it('behind a session-mode PgBouncer that drops the settings, LISTEN hears and stays', async () => {
    const session = await startPgBouncer(testUrl(), { poolMode: 'session', ignoreStartupParameters: ['options'] });
    try {
      const schema = uniqueSchema('bouncer');
      schemas.push(schema);
      const warnings: QueueWarning[] = [];
      const q = new PgQueue({ connectionString: session.url, schema, poolSize: 2, logger: recordingLogger() });
      q.on('warning', (w) => warnings.push(w));
      try {
        await q.createQueue('session');
        const started: number[] = [];
        await q.work('session', { pollingIntervalSeconds: 60 }, async () => void started.push(Date.now()));
        const registry = loopRegistryOf(q);
        await until(() => registry.hearingCheck === 'heard', 'the hearing check to hear through a session pooler');
        await q.send('session', {});
        await until(() => started.length === 1, 'the job picked up through its NOTIFY', 10_000, 5);
        expect(warnings.filter((w) => w.type === 'pooler')).toEqual([expect.objectContaining({ listen: 'pool' })]);
        expect(registry.listening).toBe(true);
      } finally {
        await q.close();
      }
    } finally {
      await session.stop();
    }
  });

  it('runs flows, key_strict_fifo in order, transactional handlers, pause, and the monitor pass', async () => {
    const { q, schema } = engine();
    await q.createQueue('fifo', { policy: 'key_strict_fifo' });
    await q.createQueue('tx');
    await q.createQueue('parent');
    await q.createQueue('child');
    // flow: the child waits for its parent
    const ids = await q.flow([
      { name: 'parent', ref: 'p', data: { step: 1 } },
      { name: 'child', ref: 'c', data: { step: 2 }, dependsOn: ['p'] },
    ]);
    expect(await q.fetch('child')).toEqual([]);
    const [parent] = await q.fetch('parent');
    await q.complete('parent', parent!.id);
    expect((await q.fetch('child')).map((j) => j.id)).toEqual([ids.c]);
    // key_strict_fifo: one key's jobs in the order sent, several loops' worth of concurrency
    await q.insert(
      'fifo',
      Array.from({ length: 30 }, (_, i) => ({ data: { i }, singletonKey: `k${i % 3}` })),
    );
    const order: Record<string, number[]> = {};
    await q.work('fifo', { concurrency: 4, pollingIntervalSeconds: 0.1 }, async (job) => {
      (order[job.singletonKey!] ??= []).push((job.data as { i: number }).i);
    });
    // transactional: the handler's own write commits with the job's completion
    await pool.query(`CREATE TABLE "${schema}".notes (note text)`);
    await q.work('tx', { transactional: true, pollingIntervalSeconds: 0.1 }, async (job) => {
      await job.db!.query(`INSERT INTO "${schema}".notes VALUES ($1)`, [String((job.data as { n: number }).n)]);
    });
    await q.insert(
      'tx',
      Array.from({ length: 10 }, (_, n) => ({ data: { n } })),
    );
    await until(async () => (await stateCounts(pool, schema, 'fifo')).completed === 30, 'the key_strict_fifo jobs completed');
    for (const [key, seen] of Object.entries(order)) expect([key, seen]).toEqual([key, [...seen].sort((x, y) => x - y)]);
    await until(async () => (await stateCounts(pool, schema, 'tx')).completed === 10, 'the transactional jobs completed');
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".notes`)).rows[0].n).toBe(10);
    // pause: stored, obeyed by this instance's loop; send() keeps working
    await q.pauseQueue('tx');
    await q.send('tx', { n: 99 });
    expect((await q.getQueue('tx', { force: true }))!.readyCount).toBe(1);
    await q.resumeQueue('tx');
    await until(async () => (await stateCounts(pool, schema, 'tx')).completed === 11, 'the job sent while paused, once resumed');
    // the monitor pass, in its transaction with its advisory lock, counts what is there
    await expect(q.monitor({ force: true })).resolves.toMatchObject({ ran: true });
    expect((await q.getQueue('tx'))!.queuedCount).toBe(0);
  });

  it('retention: the maintenance pass deletes what outlived its time, and only that', async () => {
    const { q, schema } = engine({ supervise: false });
    await q.createQueue('kept');
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const id = (await q.send('kept', { i }))!;
      const [job] = await q.fetch('kept');
      await q.complete('kept', job!.id);
      ids.push(id);
    }
    await pool.query(`UPDATE "${schema}".jobs SET keep_until = now() - interval '1 second' WHERE id = ANY($1::bigint[])`, [
      ids.slice(0, 2),
    ]);
    await expect(q.maintain({ force: true })).resolves.toMatchObject({ ran: true, deleted: 2 });
    expect((await pool.query(`SELECT id::text FROM "${schema}".jobs`)).rows).toEqual([{ id: ids[2] }]);
  });

  it('cron: two supervising instances fire each slot of a schedule once', async () => {
    const schema = uniqueSchema('bouncer');
    const a = engine({ supervise: true }, schema);
    const b = engine({ supervise: true }, schema);
    await a.q.createQueue('cron');
    await b.q.start();
    await a.q.schedule('cron', '* * * * * *', { tick: true });
    const slots = async () =>
      (
        await pool.query<{ slot: number }>(
          `SELECT (extract(epoch FROM start_after) * 1000)::float8 AS slot FROM "${schema}".jobs WHERE queue = 'cron' ORDER BY start_after`,
        )
      ).rows.map((r) => r.slot);
    await until(async () => (await slots()).length >= 4, 'four slots fired through the bouncer', 20_000, 100);
    await a.q.unschedule('cron');
    const fired = await slots();
    expect(new Set(fired).size).toBe(fired.length);
    expect((fired.at(-1)! - fired[0]!) / 1000 + 1).toBe(fired.length);
  });

  it("the dashboard's sampler reads its sample through the bouncer, unnamed", async () => {
    const { q } = engine({ supervise: false });
    await q.createQueue('seen');
    await q.send('seen', { a: 1 });
    await q.start();
    const rt = runtimeOf(q);
    const sampler = new DashboardSampler({ statements: rt.statements, connect: () => rt.connect(), prepared: rt.namesStatements });
    try {
      const sample = await sampler.sampleNow();
      expect(sample.error).toBeNull();
      expect(sample.queues.map((row) => row.name)).toEqual(['seen']);
      expect(sample.tiles.waiting).toBe(1);
    } finally {
      await sampler.stop();
    }
  });

  it('two instances that start at once on a fresh schema migrate it once between them', async () => {
    const schema = uniqueSchema('bouncer');
    const [one, two] = [engine({}, schema), engine({}, schema)];
    await Promise.all([one.q.createQueue('both'), two.q.createQueue('both')]);
    const versions = await pool.query(
      `SELECT version, count(*)::int AS n FROM "${schema}".migrations GROUP BY version HAVING count(*) > 1`,
    );
    expect(versions.rows).toEqual([]);
    await one.q.send('both', { from: 'one' });
    expect((await two.q.fetch('both'))[0]?.data).toEqual({ from: 'one' });
  });

  it('a pool handed in through the bouncer: its LISTEN hears no NOTIFY, so it is turned off, said once, and loops poll', async () => {
    const handed = new pg.Pool({ connectionString: bouncer.url, max: 3 });
    const { q, schema, warnings } = engine({ connectionString: undefined, pool: handed, poolSize: undefined });
    try {
      await q.createQueue('handed');
      await q.work('handed', { pollingIntervalSeconds: 0.2 }, async () => undefined);
      const registry = loopRegistryOf(q);
      // the hearing check's NOTIFY goes through the bouncer and never reaches the LISTEN connection
      await until(
        () => warnings.some((w) => w.type === 'pooler'),
        'the pooler warning of the hearing check',
        2 * HEARING_WAIT_MS + 10_000,
        50,
      );
      expect(warnings.filter((w) => w.type === 'pooler')).toEqual([
        expect.objectContaining({
          listen: 'off',
          message: expect.stringMatching(/heard no NOTIFY sent through the pool within 10 s/),
        }),
      ]);
      await until(() => !registry.listening, 'the LISTEN connection closed');
      await q.send('handed', {});
      await until(async () => (await stateCounts(pool, schema, 'handed')).completed === 1, 'the job found by a poll');
    } finally {
      await q.close();
      await handed.end();
    }
  }, 60_000);

  it('a pool handed in through the bouncer, with listen straight to PostgreSQL: the check hears, and NOTIFY wakes the loop', async () => {
    const handed = new pg.Pool({ connectionString: bouncer.url, max: 3 });
    const { q, warnings } = engine({
      connectionString: undefined,
      pool: handed,
      poolSize: undefined,
      listen: { connectionString: testUrl() },
    });
    try {
      await q.createQueue('handed.direct');
      const started: number[] = [];
      await q.work('handed.direct', { pollingIntervalSeconds: 60 }, async () => void started.push(Date.now()));
      // its NOTIFY through the bouncer reaches the LISTEN connection straight to PostgreSQL
      await until(() => loopRegistryOf(q).hearingCheck === 'heard', 'the hearing check to hear');
      for (let i = 0; i < 3; i++) {
        await q.send('handed.direct', { i });
        await until(() => started.length === i + 1, `job ${i} picked up through its NOTIFY`, 10_000, 5);
      }
      expect(warnings.filter((w) => w.type === 'pooler')).toEqual([]);
    } finally {
      await q.close();
      await handed.end();
    }
  });

  it("the dashboard's sampler: a statement it prepared that the pooler lost fails that sample and is told to the engine", async () => {
    const single = await startPgBouncer(testUrl(), { poolSize: 2 });
    const reader = new pg.Pool({ connectionString: single.url, max: 1 });
    const holder = new pg.Pool({ connectionString: single.url, max: 1 });
    const { q } = engine({ supervise: false });
    try {
      await q.createQueue('lost');
      const lost: unknown[] = [];
      const sampler = new DashboardSampler({
        statements: runtimeOf(q).statements,
        connect: () => reader.connect(),
        prepared: true,
        lost: (err) => lost.push(err),
      });
      try {
        expect((await sampler.sampleNow()).error).toBeNull();
        // the reader's statements were prepared on the one server connection; while the holder has it, the next
        // sample runs on a second one
        const { holding } = await holdServerConnection(holder);
        expect((await sampler.sampleNow()).error).not.toBeNull();
        await holding;
        expect(lost).toHaveLength(1);
        expect((lost[0] as { code?: string }).code).toMatch(/^(26000|42P05)$/);
      } finally {
        await sampler.stop();
      }
    } finally {
      await reader.end();
      await holder.end();
      await single.stop();
    }
  });

  it('a prepared statement the pooler lost is sent again unnamed, and naming stops, said once', async () => {
    // One server connection to start with: client A prepares on it; while B holds it, A's next statement gets
    // a second server connection, which never saw the statement (26000), or a third that did (42P05).
    const single = await startPgBouncer(testUrl(), { poolSize: 2 });
    const a = new pg.Pool({ connectionString: single.url, max: 1 });
    const b = new pg.Pool({ connectionString: single.url, max: 1 });
    try {
      const text = 'SELECT $1::int + 1 AS n';
      const lost: unknown[] = [];
      const names = new StatementNames(new Set([text]), (err) => lost.push(err));
      const exec = pgExecutor(a, names);
      expect(await exec.query(text, [1])).toEqual([{ n: 2 }]);
      const { holding } = await holdServerConnection(b);
      expect(await exec.query(text, [2])).toEqual([{ n: 3 }]);
      await holding;
      expect(lost).toHaveLength(1);
      expect((lost[0] as { code?: string }).code).toMatch(/^(26000|42P05)$/);
      expect(names.active).toBe(false);
      expect(await exec.query(text, [3])).toEqual([{ n: 4 }]);
      expect(lost).toHaveLength(1);
    } finally {
      await a.end();
      await b.end();
      await single.stop();
    }
  });
});
