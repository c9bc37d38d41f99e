// close() never leaves a call hanging: a call made once it has begun rejects with QUEUE_CLOSED, and a call
// made before it, still waiting for a connection, runs (or, past shutdownTimeoutMs, rejects). pg-pool's end()
// drops requests still waiting for a connection without settling them, so the queue waits for its calls first.
import type pg from 'pg';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('close');
afterAll(() => f.cleanup());

/**
 * Locks queue `name`'s row from a connection of the test, so that `updateQueue(name)` blocks on it while it
 * holds a connection of the queue's pool. Returns the locking client (COMMIT and release it to let go).
 */
async function lockQueueRow(name: string): Promise<pg.PoolClient> {
  const lock = await f.pool.connect();
  await lock.query('BEGIN');
  await lock.query(`SELECT 1 FROM "${f.schema}".queues WHERE name = $1 FOR UPDATE`, [name]);
  return lock;
}

/** Waits until a session other than `lock`'s waits for a lock that `lock` holds. */
async function blockedBehind(lock: pg.PoolClient): Promise<void> {
  const [{ pid }] = (await lock.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
  await until(async () => {
    const { rows } = await f.pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
    return rows.length > 0;
  }, 'a statement of the queue blocked behind the test lock');
}

describe('closing a queue', () => {
  it('a call made while close() runs rejects with QUEUE_CLOSED, and so does every call made after it', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('close.during');
    const closing = q.close();
    await expect(q.send('close.during', {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    // Inside the caller's own transaction too: nothing is written there.
    const tx = await f.pool.connect();
    await tx.query('BEGIN');
    await expect(q.send('close.during', {}, { db: tx })).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await expect(q.insert('close.during', [{}], { db: tx })).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await expect(q.flow([{ name: 'close.during', ref: 'a' }], { db: tx })).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await tx.query('COMMIT');
    tx.release();
    await expect(q.getQueues()).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await expect(q.fetch('close.during')).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await closing;
    await expect(q.send('close.during', {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await expect(q.work('close.during', {}, async () => undefined)).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    await expect(q.close()).resolves.toBeUndefined();
  });

  it('a call waiting for a connection when close() begins runs, and close() waits for it', async () => {
    const q = f.create({ supervise: false, poolSize: 1 });
    await q.createQueue('close.wait');
    const lock = await lockQueueRow('close.wait');
    const holder = q.updateQueue('close.wait', { retryLimit: 7 }); // holds the pool's only connection, blocked
    await blockedBehind(lock);
    const waiting = q.getQueue('close.wait'); // waits for that connection
    let closed = false;
    const closing = q.close().then(() => (closed = true));
    await expect(q.send('close.wait', {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    expect(closed).toBe(false);
    await lock.query('COMMIT');
    lock.release();
    await expect(holder).resolves.toBeUndefined();
    await expect(waiting).resolves.toMatchObject({ name: 'close.wait', retryLimit: 7 });
    await closing;
    expect(closed).toBe(true);
  });

  it('a call still waiting when shutdownTimeoutMs has passed rejects with QUEUE_CLOSED', async () => {
    const q = f.create({ supervise: false, poolSize: 1, shutdownTimeoutMs: 200 });
    await q.createQueue('close.late');
    const lock = await lockQueueRow('close.late');
    const holder = q.updateQueue('close.late', { retryLimit: 7 });
    const holderOutcome = holder.then(
      () => 'resolved',
      (err: { code?: string }) => err.code,
    );
    await blockedBehind(lock);
    const waiting = q.getQueue('close.late');
    const closing = q.close();
    await expect(waiting).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    // The blocked statement was already on the server: its caller is told the queue closed.
    expect(await holderOutcome).toBe('QUEUE_CLOSED');
    // close() returns by its deadline although that statement still holds its connection; the pool ends once the
    // server answers it.
    await closing;
    expect(f.logger.lines.some((l) => l.level === 'warn' && /2 call\(s\) still waiting/.test(l.message))).toBe(true);
    expect(f.logger.lines.some((l) => l.level === 'warn' && /connections still in use/.test(l.message))).toBe(true);
    await lock.query('COMMIT');
    lock.release();
  });

  it('close() does not wait for a transactional handler that never returns: its job goes back and its connection is given up', async () => {
    const q = f.create({ supervise: false, poolSize: 2, shutdownTimeoutMs: 300 });
    await q.createQueue('close.stuck');
    let started = false;
    await q.work('close.stuck', { transactional: true, pollingIntervalSeconds: 0.05 }, async () => {
      started = true;
      await new Promise(() => undefined); // ignores its signal
    });
    const id = (await q.send('close.stuck', {}))!;
    await until(() => started, 'the handler runs');
    await q.close();
    const [job] = await f.sql<{ state: string; retry_count: number }>('SELECT state::text, retry_count FROM $schema.jobs WHERE id = $1', [
      id,
    ]);
    expect(job).toEqual({ state: 'created', retry_count: 0 });
  });

  it('calls of several statements made just before close() all run to their end', async () => {
    const setup = f.create({ supervise: false });
    await setup.createQueue('close.multi');
    const id = (await setup.send('close.multi', { n: 1 }, { dedupeKey: 'held' }))!;
    await setup.close();
    for (let round = 0; round < 5; round++) {
      // A fresh engine: nothing cached, so each call reads the queue's profile first, then runs its statement(s).
      const q = f.create({ supervise: false });
      await q.start();
      const calls = [
        q.getJobById('close.multi', id),
        q.send('close.multi', { n: 2 }, { dedupeKey: 'held' }), // refused by the key: then reads the holder
        q.getQueue('close.multi'),
        q.cancel('close.multi', '999999'),
      ];
      const closing = q.close();
      const outcomes = await Promise.allSettled(calls);
      await closing;
      expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ran'))).toEqual(['ran', 'ran', 'ran', 'ran']);
      expect((outcomes[1] as PromiseFulfilledResult<string>).value).toBe(id);
    }
  });
});
