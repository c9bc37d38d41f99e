import { drizzle } from 'drizzle-orm/node-postgres';
import { sql } from 'drizzle-orm';
import { QueueNotFoundError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('enqueue');
const q = f.create();
beforeAll(async () => {
  await q.createQueue('mail', { retryLimit: 4, retryDelay: 9, expireInSeconds: 60, deleteAfterSeconds: 120, retentionSeconds: 3600 });
  await f.sql('CREATE TABLE $schema.orders (id serial PRIMARY KEY, note text)');
});
afterAll(() => f.cleanup());

async function dbNow(): Promise<Date> {
  return (await f.sql<{ now: Date }>('SELECT now()'))[0]!.now;
}

describe('send', () => {
  it('stores data and inherits the queue settings as the job defaults', async () => {
    const id = await q.send('mail', { to: 'a@example.com', n: 1 });
    expect(id).toMatch(/^\d+$/);
    const job = (await q.getJobById('mail', id!))!;
    expect(job).toMatchObject({
      id,
      name: 'mail',
      data: { to: 'a@example.com', n: 1 },
      state: 'created',
      priority: 0,
      retryCount: 0,
      retryLimit: 4,
      retryDelay: 9,
      retryBackoff: false,
      expireInSeconds: 60,
      deleteAfterSeconds: 120,
      singletonKey: null,
      output: null,
    });
    expect(job.keepUntil!.getTime() - job.startAfter!.getTime()).toBe(3600 * 1000);
  });

  it('job options override the queue defaults', async () => {
    const id = await q.send('mail', null, {
      priority: 5,
      singletonKey: 'k1',
      retryLimit: 0,
      retryDelay: 1,
      retryBackoff: true,
      retryDelayMax: 30,
      expireInSeconds: 5,
      heartbeatSeconds: 2,
      deleteAfterSeconds: 0,
      retentionSeconds: 10,
    });
    expect(await q.getJobById('mail', id!)).toMatchObject({
      data: null,
      priority: 5,
      singletonKey: 'k1',
      retryLimit: 0,
      retryDelay: 1,
      retryBackoff: true,
      retryDelayMax: 30,
      expireInSeconds: 5,
      heartbeatSeconds: 2,
      deleteAfterSeconds: 0,
    });
  });

  it('startAfter accepts a Date, an ISO string and seconds from the database clock', async () => {
    const at = new Date(Date.now() + 3_600_000);
    const byDate = await q.send('mail', {}, { startAfter: at });
    const byIso = await q.sendAfter('mail', {}, {}, '2099-01-02T03:04:05Z');
    const before = await dbNow();
    const bySeconds = await q.sendAfter('mail', {}, null, 120);
    expect((await q.getJobById('mail', byDate!))!.startAfter!.getTime()).toBe(at.getTime());
    expect((await q.getJobById('mail', byIso!))!.startAfter!.toISOString()).toBe('2099-01-02T03:04:05.000Z');
    const deferredTo = (await q.getJobById('mail', bySeconds!))!.startAfter!.getTime();
    expect(deferredTo - before.getTime()).toBeGreaterThanOrEqual(120_000);
    expect(deferredTo - before.getTime()).toBeLessThan(130_000);
  });

  it('an unknown queue throws QueueNotFoundError and writes nothing', async () => {
    const before = await f.sql('SELECT count(*)::int AS n FROM $schema.jobs');
    await expect(q.send('nope', { a: 1 })).rejects.toThrow(QueueNotFoundError);
    await expect(q.send('nope', { a: 1 })).rejects.toThrow('queue "nope" does not exist');
    expect(await f.sql('SELECT count(*)::int AS n FROM $schema.jobs')).toEqual(before);
  });
});

describe('enqueue', () => {
  it("answers the new job's id, queue, state and start, read back from the database", async () => {
    const before = await dbNow();
    const now = await q.enqueue('mail', { to: 'b@example.com' });
    expect(now).toMatchObject({ id: expect.stringMatching(/^\d+$/), queue: 'mail', state: 'created', deduped: false });
    expect(now.startAfter!.getTime()).toBeGreaterThanOrEqual(before.getTime());
    const later = await q.enqueue('mail', {}, { startAfter: 3600 });
    expect(later.startAfter!.getTime() - before.getTime()).toBeGreaterThanOrEqual(3_599_000);
  });

  it('answers the holder of a held dedupeKey with deduped: true, and a job the policy refuses with id null', async () => {
    const first = await q.enqueue('mail', { n: 1 }, { dedupeKey: 'welcome-42' });
    const again = await q.enqueue('mail', { n: 2 }, { dedupeKey: 'welcome-42' });
    expect(first.deduped).toBe(false);
    expect(again).toEqual({ id: first.id, queue: 'mail', state: 'created', startAfter: first.startAfter, deduped: true });
    await q.createQueue('mail.short', { policy: 'short' });
    await q.enqueue('mail.short', {}, { singletonKey: 'k' });
    expect(await q.enqueue('mail.short', {}, { singletonKey: 'k' })).toEqual({
      id: null,
      queue: 'mail.short',
      state: null,
      startAfter: null,
      deduped: false,
    });
  });

  it('answers the same inside a Drizzle transaction (which reads timestamps as text)', async () => {
    const db = drizzle(f.pool);
    const answer = await db.transaction(async (tx) => q.enqueue('mail', { drizzle: true }, { db: tx, startAfter: 60 }));
    expect(answer).toMatchObject({ queue: 'mail', state: 'created', deduped: false });
    expect(answer.startAfter).toBeInstanceOf(Date);
    expect(answer.startAfter!.getTime() - Date.now()).toBeGreaterThan(30_000);
  });

  it("inside the caller's transaction, reads the job back there, and a rollback leaves nothing", async () => {
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      const answer = await q.enqueue('mail', { tx: true }, { db: client });
      expect(answer).toMatchObject({ queue: 'mail', state: 'created', deduped: false });
      await client.query('ROLLBACK');
      expect(await q.getJobById('mail', answer.id!)).toBeNull();
    } finally {
      client.release();
    }
  });
});

describe('insert', () => {
  it('inserts many jobs in one statement and returns their ids in input order', async () => {
    const jobs = Array.from({ length: 500 }, (_, i) => ({ data: { i }, priority: i % 3 }));
    const ids = await q.insert('mail', jobs);
    expect(ids).toHaveLength(500);
    const rows = await f.sql<{ id: string; i: number }>(
      `SELECT id::text, (data->>'i')::int AS i FROM $schema.jobs WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r.i]));
    expect(ids.map((id) => byId.get(id))).toEqual(jobs.map((j) => j.data.i));
  });

  it('an empty list inserts nothing', async () => {
    expect(await q.insert('mail', [])).toEqual([]);
  });

  it('jobs that set only their data inherit every queue setting; a job that sets one option keeps it', async () => {
    const ids = await q.insert('mail', [{ data: { n: 1 } }, { data: { n: 2 }, priority: 7, retryLimit: 0 }, {}]);
    const rows = await f.sql<{ priority: number; retry_limit: number; retry_delay: number; data: unknown }>(
      `SELECT priority, retry_limit, retry_delay, data FROM $schema.jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [ids],
    );
    expect(rows).toEqual([
      { priority: 0, retry_limit: 4, retry_delay: 9, data: { n: 1 } },
      { priority: 7, retry_limit: 0, retry_delay: 9, data: { n: 2 } },
      { priority: 0, retry_limit: 4, retry_delay: 9, data: null },
    ]);
  });

  it('a queue deleted and created again with another policy elsewhere: the policy still holds, no error', async () => {
    const mine = f.create();
    await mine.createQueue('recreated');
    await mine.insert('recreated', [{}]); // this instance now knows the queue as standard
    await q.deleteQueue('recreated');
    await q.createQueue('recreated', { policy: 'short' });
    // short: one queued job per key (no key is one key); the second is skipped, not an error
    expect(await mine.insert('recreated', [{}, {}])).toHaveLength(1);
    expect(await mine.send('recreated', {})).toBeNull();
  });
});

describe('send inside the caller transaction', () => {
  it('with a pg client: the job exists only if the transaction commits', async () => {
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO "${f.schema}".orders (note) VALUES ('committed')`);
      const kept = await q.send('mail', { order: 'committed' }, { db: client });
      await client.query('COMMIT');
      await client.query('BEGIN');
      const dropped = await q.send('mail', { order: 'rolled back' }, { db: client });
      await client.query('ROLLBACK');
      expect(await q.getJobById('mail', kept!)).not.toBeNull();
      expect(await q.getJobById('mail', dropped!)).toBeNull();
    } finally {
      client.release();
    }
  });

  it('with a Drizzle transaction: commit keeps both writes, a throw rolls both back', async () => {
    const db = drizzle(f.pool);
    let kept: string | null = null;
    await db.transaction(async (tx) => {
      await tx.execute(sql.raw(`INSERT INTO "${f.schema}".orders (note) VALUES ('drizzle-commit')`));
      kept = await q.send('mail', { order: 'drizzle-commit' }, { db: tx });
    });
    let dropped: string | null = null;
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql.raw(`INSERT INTO "${f.schema}".orders (note) VALUES ('drizzle-rollback')`));
        dropped = await q.send('mail', { order: 'drizzle-rollback' }, { db: tx });
        const more = await q.insert('mail', [{ data: 1 }, { data: 2 }], { db: tx });
        expect(more).toHaveLength(2);
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect(await q.getJobById('mail', kept!)).toMatchObject({ data: { order: 'drizzle-commit' } });
    expect(dropped).not.toBeNull();
    expect(await q.getJobById('mail', dropped!)).toBeNull();
    const notes = await f.sql<{ note: string }>(`SELECT note FROM $schema.orders WHERE note LIKE 'drizzle%'`);
    expect(notes.map((n) => n.note)).toEqual(['drizzle-commit']);
  });

  it('with a Drizzle database (no transaction) it simply inserts', async () => {
    const id = await q.send('mail', { via: 'drizzle-db' }, { db: drizzle(f.pool) });
    expect((await q.getJobById('mail', id!))!.data).toEqual({ via: 'drizzle-db' });
  });
});
