// `{ db }` on fetch and on the calls on jobs by id (pg-boss's ConnectionOptions): each runs inside the caller's
// transaction, so fetch, work and complete can be one transaction, as pg-boss users write them.
import type pg from 'pg';
import { InvalidOptionError } from '../../lib/core/errors.js';
import { deferred, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('conn');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

/** Runs `fn` in a transaction of a client of the test pool, committed when `commit`, else rolled back. */
async function inTx<T>(commit: boolean, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await f.pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query(commit ? 'COMMIT' : 'ROLLBACK');
    return result;
  } finally {
    client.release();
  }
}

describe('fetch and settle in the caller’s transaction', () => {
  it('fetch, then complete, in one transaction: invisible to others until it commits', async () => {
    const q = f.create();
    await q.createQueue('c.one');
    const id = (await q.send('c.one', { n: 1 }))!;
    await inTx(true, async (client) => {
      const [job] = await q.fetch('c.one', { db: client });
      expect(job!.id).toBe(id);
      // the claim is the caller's, uncommitted: another fetch passes over the locked row
      expect(await q.fetch('c.one')).toEqual([]);
      expect((await q.getJobById('c.one', id))!.state).toBe('created');
      expect(await q.complete('c.one', id, { done: true }, { db: client })).toMatchObject({ updated: 1 });
      expect((await q.getJobById('c.one', id))!.state).toBe('created');
    });
    expect(await q.getJobById('c.one', id)).toMatchObject({ state: 'completed', output: { done: true } });
  });

  it('rolled back, the fetch and the completion leave the job waiting, claimed by nobody', async () => {
    const q = f.create();
    await q.createQueue('c.back');
    const id = (await q.send('c.back', {}))!;
    await inTx(false, async (client) => {
      expect((await q.fetch('c.back', { db: client })).map((j) => j.id)).toEqual([id]);
      // the short form: options third, no output
      expect(await q.complete('c.back', id, { db: client })).toMatchObject({ updated: 1 });
    });
    expect(await q.getJobById('c.back', id)).toMatchObject({ state: 'created', retryCount: 0, output: null });
    expect((await q.fetch('c.back')).map((j) => j.id)).toEqual([id]);
  });

  it('fail, touch, cancel, resume, retry and deleteJob change nothing when the transaction rolls back, and commit with it', async () => {
    const q = f.create();
    await q.createQueue('c.calls', { retryLimit: 0, heartbeatSeconds: 30 });
    const [a, b, c, d] = await q.insert('c.calls', [{ data: 'a' }, { data: 'b' }, { data: 'c' }, { data: 'd' }]);
    const fetched = await q.fetch('c.calls', { batchSize: 2 });
    expect(fetched.map((j) => j.id).sort()).toEqual([a, b].sort());
    const states = async () => Promise.all([a, b, c, d].map(async (id) => (await q.getJobById('c.calls', id!))?.state ?? 'deleted'));
    for (const commit of [false, true]) {
      const before = await states();
      const heartbeat = (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [a]))[0]!.t;
      await inTx(commit, async (client) => {
        const db = { db: client };
        expect(await q.touch('c.calls', a!, db)).toMatchObject({ updated: 1 });
        expect(await q.fail('c.calls', b!, new Error('by hand'), db)).toMatchObject({ updated: 1 });
        expect(await q.cancel('c.calls', c!, db)).toMatchObject({ updated: 1 });
        expect(await q.resume('c.calls', c!, db)).toMatchObject({ updated: 1 });
        expect(await q.retry('c.calls', b!, db)).toMatchObject({ updated: 1 });
        expect(await q.deleteJob('c.calls', d!, db)).toMatchObject({ updated: 1 });
      });
      const touched = (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [a]))[0]!.t;
      if (!commit) {
        expect(await states()).toEqual(before);
        expect(touched).toEqual(heartbeat);
        continue;
      }
      expect(touched.getTime()).toBeGreaterThan(heartbeat.getTime());
      // b failed for good, then retried; c cancelled, then resumed; d deleted
      const [sa, sb, sc, sd] = await states();
      expect([sa, sc, sd]).toEqual(['active', 'created', 'deleted']);
      expect(['created', 'retry']).toContain(sb);
      expect((await q.getJobById('c.calls', b!))!.lastError).toMatchObject({ message: 'by hand' });
    }
  });

  it('works with a Drizzle transaction as with a pg client', async () => {
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const q = f.create();
    await q.createQueue('c.drizzle');
    const id = (await q.send('c.drizzle', {}))!;
    const failure = await drizzle(f.pool)
      .transaction(async (tx) => {
        const [job] = await q.fetch('c.drizzle', { db: tx });
        await q.complete('c.drizzle', job!.id, 'in drizzle', { db: tx });
        throw new Error('roll it back');
      })
      .catch((e: Error) => e.message);
    expect(failure).toBe('roll it back');
    expect((await q.getJobById('c.drizzle', id))!.state).toBe('created');
    await drizzle(f.pool).transaction(async (tx) => {
      const [job] = await q.fetch('c.drizzle', { db: tx });
      await q.complete('c.drizzle', job!.id, 'in drizzle', { db: tx });
    });
    expect(await q.getJobById('c.drizzle', id)).toMatchObject({ state: 'completed', output: 'in drizzle' });
  });

  it('a fetch with a db outside any transaction commits at once', async () => {
    const q = f.create();
    await q.createQueue('c.auto');
    const id = (await q.send('c.auto', {}))!;
    const client = await f.pool.connect();
    try {
      expect((await q.fetch('c.auto', { db: client })).map((j) => j.id)).toEqual([id]);
    } finally {
      client.release();
    }
    expect((await q.getJobById('c.auto', id))!.state).toBe('active');
    expect(await q.complete('c.auto', id, 'done', { db: f.pool })).toMatchObject({ updated: 1 });
  });

  it('under a concurrency limit a fetch in a transaction holds the queue’s claims until it ends, so the limit holds', async () => {
    const q = f.create();
    await q.createQueue('c.limit', { concurrencyLimit: 1 });
    await q.insert('c.limit', [{ data: 1 }, { data: 2 }]);
    const fetchedInside = deferred();
    const commit = deferred();
    const inside = inTx(true, async (client) => {
      const jobs = await q.fetch('c.limit', { db: client, batchSize: 2 });
      fetchedInside.resolve();
      await commit.promise;
      return jobs;
    });
    await fetchedInside.promise;
    // waits for the caller's transaction: until then it could not count the job claimed there
    let outsideDone = false;
    const outside = q.fetch('c.limit', { batchSize: 2 }).finally(() => (outsideDone = true));
    await until(async () => {
      const [row] = await f.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()`,
      );
      return row!.n > 0;
    }, 'the other fetch waiting for the queue lock');
    expect(outsideDone).toBe(false);
    commit.resolve();
    expect((await inside).length).toBe(1);
    // the job claimed in the transaction is active now: no room left under the limit
    expect(await outside).toEqual([]);
  });

  it('a job fetched in a transaction keeps its heartbeat through the engine’s pool after the transaction ends', async () => {
    const q = f.create();
    await q.createQueue('c.beat', { heartbeatSeconds: 30 });
    const id = (await q.send('c.beat', {}))!;
    // the caller's connection closes with its transaction: a heartbeat through it would fail
    const client = await f.pool.connect();
    await client.query('BEGIN');
    const [job] = await q.fetch('c.beat', { db: client });
    await client.query('COMMIT');
    client.release(true);
    const before = (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [id]))[0]!.t;
    await expect(job!.heartbeat()).resolves.toBeUndefined();
    const after = (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [id]))[0]!.t;
    expect(after.getTime()).toBeGreaterThan(before.getTime());
    expect((await q.getJobById('c.beat', id))!.state).toBe('active');
  });

  it('a fetch whose queue was made again elsewhere recovers inside the transaction, and leaves no savepoint open', async () => {
    const q = f.create();
    const other = f.create();
    await q.createQueue('c.moved', { partition: true });
    expect(await q.fetch('c.moved')).toEqual([]);
    // made again without a partition of its own: q's statements still name the dropped partition
    await other.deleteQueue('c.moved');
    await other.createQueue('c.moved');
    const id = (await other.send('c.moved', {}))!;
    await inTx(false, async (client) => {
      expect((await q.fetch('c.moved', { db: client })).map((j) => j.id)).toEqual([id]);
      // the caller's transaction goes on, and the claim's savepoint is closed
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await expect(client.query('RELEASE SAVEPOINT pgqueue_claim')).rejects.toMatchObject({ code: '3B001' });
    });
    expect((await q.getJobById('c.moved', id))!.state).toBe('created');
  });

  it('so does a fetch of a limited queue, whose lock and count run in the transaction too', async () => {
    const q = f.create();
    const other = f.create();
    await q.createQueue('c.moved.limited', { partition: true, concurrencyLimit: 2 });
    expect(await q.fetch('c.moved.limited')).toEqual([]);
    await other.deleteQueue('c.moved.limited');
    await other.createQueue('c.moved.limited', { concurrencyLimit: 2 });
    const id = (await other.send('c.moved.limited', {}))!;
    await inTx(false, async (client) => {
      expect((await q.fetch('c.moved.limited', { db: client })).map((j) => j.id)).toEqual([id]);
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });
  });

  it('touch in a transaction that began a while ago extends the heartbeat from the statement, not from its start', async () => {
    const q = f.create();
    await q.createQueue('c.late', { heartbeatSeconds: 2 });
    const id = (await q.send('c.late', {}))!;
    await q.fetch('c.late');
    await inTx(true, async (client) => {
      await client.query(`SELECT pg_sleep(1.2)`);
      await q.touch('c.late', id, { db: client });
      const [row] = (
        await client.query<{ ahead: number }>(
          `SELECT extract(epoch FROM heartbeat_until - clock_timestamp())::float8 AS ahead FROM "${f.schema}".jobs WHERE id = $1`,
          [id],
        )
      ).rows;
      expect(row!.ahead).toBeGreaterThan(1.5);
    });
  });

  it('refuses a REPEATABLE READ transaction on a limited queue, naming options.db, and leaves its transaction usable', async () => {
    const q = f.create();
    await q.createQueue('c.rr', { concurrencyLimit: 2 });
    await q.send('c.rr', {});
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const err = await q.fetch('c.rr', { db: client }).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err.message).toContain('options.db');
      expect(err.message).toContain('READ COMMITTED');
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      expect(await q.fetch('c.rr', { db: client })).toHaveLength(1);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('refuses a db that is no client or database, and unknown options beside it, naming the field', async () => {
    const q = f.create();
    await q.createQueue('c.bad');
    const id = (await q.send('c.bad', {}))!;
    for (const call of [
      () => q.cancel('c.bad', id, { db: 42 as never }),
      () => q.fail('c.bad', id, undefined, { db: {} }),
      () => q.complete('c.bad', id, null, { db: 'pool' as never }),
    ]) {
      const err = await call().catch((e) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err.message).toContain('options.db');
    }
    const err = await q.touch('c.bad', id, { db: f.pool, wait: true } as never).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.message).toContain('options.wait');
    expect((await q.getJobById('c.bad', id))!.state).toBe('created');
  });
});
