import { queueFixture } from '../helpers/queue.js';
import pg from 'pg';
import { PgQueue } from '../../lib/core/pg-queue.js';
import { testUrl, until } from '../helpers/db.js';

const f = queueFixture('maint');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let queueName = 'm';
let queues = 0;
beforeEach(async () => {
  // A queue per test, so a job put back by one test is never claimed by the next.
  queueName = `m${++queues}`;
  await q.createQueue(queueName, { retryLimit: 1 });
});

async function claimOne(options = {}): Promise<string> {
  const id = (await q.send(queueName, {}, options))!;
  const [job] = await q.fetch(queueName);
  expect(job!.id).toBe(id);
  return id;
}

/** A claimed job whose lease ran out a second ago. */
async function expiredLease(): Promise<string> {
  const id = await claimOne();
  await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
  return id;
}

/** Another instance's pass, as far as the lock goes: a connection holding the schema's maintenance lock until it commits or ends. */
async function holdLock(): Promise<pg.Client> {
  const x = new pg.Client({ connectionString: testUrl() });
  await x.connect();
  await x.query('BEGIN');
  await x.query('SELECT pg_advisory_xact_lock(1885824374, hashtext($1))', [f.schema]);
  return x;
}

describe('reaping expired leases', () => {
  it('a job whose lease ran out goes back to retry, attempt counted, with the reason in its output', async () => {
    const id = await claimOne();
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    expect((await q.maintain({ force: true })).reaped).toBe(1);
    const job = (await q.getJobById(queueName, id))!;
    expect(job).toMatchObject({ state: 'retry', retryCount: 1, leaseUntil: null });
    expect((job.output as { error: { name: string; message: string } }).error).toMatchObject({ name: 'LeaseExpiredError' });
    expect((job.output as { error: { message: string } }).error.message).toContain('lease of 900 seconds ran out');
  });

  it('with no retries left it fails, visibly', async () => {
    const id = await claimOne({ retryLimit: 0 });
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    await q.maintain({ force: true });
    expect(await q.getJobById(queueName, id)).toMatchObject({ state: 'failed', retryCount: 0 });
  });

  it('a missed heartbeat counts like an expired lease', async () => {
    const id = await claimOne({ heartbeatSeconds: 30 });
    await f.sql(`UPDATE $schema.jobs SET heartbeat_until = now() - interval '1 second' WHERE id = $1`, [id]);
    await q.maintain({ force: true });
    const job = (await q.getJobById(queueName, id))!;
    expect(job.state).toBe('retry');
    expect((job.output as { error: { message: string } }).error.message).toContain('no heartbeat for 30 seconds');
  });

  it('live leases and finished jobs are left alone, and the stale holder can no longer complete', async () => {
    const live = await claimOne();
    const stale = await claimOne();
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [stale]);
    expect((await q.maintain({ force: true })).reaped).toBe(1);
    expect((await q.getJobById(queueName, live))!.state).toBe('active');
    expect((await q.complete(queueName, { id: stale, retryCount: 0 })).updated).toBe(0);
    expect((await q.complete(queueName, live)).updated).toBe(1);
    expect((await q.maintain({ force: true })).reaped).toBe(0);
    expect((await q.getJobById(queueName, live))!.state).toBe('completed');
  });

  it('a supervising instance reaps on its own, and the job is worked again', async () => {
    const id = await claimOne();
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    const supervisor = f.create({ supervise: true, maintenanceIntervalSeconds: 1 });
    await supervisor.work(queueName, { pollingIntervalSeconds: 0.1 }, (job) => `attempt ${job.retryCount}`);
    await until(async () => (await q.getJobById(queueName, id))!.state === 'completed', 'reaped and completed');
    expect((await q.getJobById(queueName, id))!.output).toBe('attempt 1');
    // its passes would reap the next tests' jobs before their forced passes do
    await supervisor.close();
  });

  it('a forced pass waits for a pass under way elsewhere, then runs; callers that force one meanwhile share the next', async () => {
    const id = await expiredLease();
    const x = await holdLock();
    try {
      const [first, second, third] = [q.maintain({ force: true }), q.maintain({ force: true }), q.maintain({ force: true })];
      // one backend waits for the lock: the first pass; the other two callers wait in the instance, holding no connection
      const waiting = async () => (await f.passLockWaiters(1885824374)).length;
      await until(async () => (await waiting()) === 1, 'the forced pass waiting for the lock');
      expect((await q.getJobById(queueName, id))!.state).toBe('active');
      await x.query('COMMIT');
      const [a, b, c] = await Promise.all([first, second, third]);
      expect(a).toMatchObject({ ran: true, reaped: 1 });
      expect(b).toMatchObject({ ran: true, reaped: 0 });
      expect(c).toBe(b);
    } finally {
      await x.end();
    }
    expect((await q.getJobById(queueName, id))!.state).toBe('retry');
  });

  it('a forced pass gives up after 10 s of another pass holding the lock: ran: false, nothing reaped, the engine goes on', async () => {
    const id = await expiredLease();
    const x = await holdLock();
    try {
      const started = Date.now();
      expect(await q.maintain({ force: true })).toMatchObject({ ran: false, reaped: 0 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_900);
      expect((await q.getJobById(queueName, id))!.state).toBe('active');
    } finally {
      await x.end();
    }
    expect(await q.maintain({ force: true })).toMatchObject({ ran: true, reaped: 1 });
  }, 30_000);

  it("a forced pass waits no longer than the session's own lock_timeout when that is shorter, and keeps it after", async () => {
    // sessions whose role sets lock_timeout to 1 s (the startup option stands in for ALTER ROLE … SET)
    const pool = new pg.Pool({ connectionString: testUrl(), options: '-c lock_timeout=1000', max: 2 });
    const short = new PgQueue({ pool, schema: f.schema, migrate: false, supervise: false, logger: f.logger });
    const x = await holdLock();
    try {
      const started = Date.now();
      expect(await short.maintain({ force: true })).toMatchObject({ ran: false });
      expect(Date.now() - started).toBeLessThan(9_000);
      await x.query('COMMIT');
      expect(await short.maintain({ force: true })).toMatchObject({ ran: true });
      expect((await pool.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]!.lock_timeout).toBe('1s');
    } finally {
      await Promise.all([x.end(), short.close()]);
      await pool.end();
    }
  }, 30_000);
});
