// A worker loses its connections while jobs stream through it: first the server terminates exactly this
// worker's sessions (its pool and its LISTEN connection), then the whole PostgreSQL server restarts.
// Either way the worker must reconnect, keep working and lose nothing. A job whose result could not be
// written when its connection died stays active under its lease, so the queue has a short lease and a
// supervising instance reaps it; such a job runs again, which at-least-once allows.
import pg from 'pg';
import { PgQueue } from '../../lib/core/pg-queue.js';
import type { Job } from '../../lib/core/types.js';
import { recordingLogger, stateCounts, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';
import { PrivatePostgres } from './private-postgres.js';

const f = queueFixture('rel_connloss');
let server: PrivatePostgres | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await server?.close();
  await f.cleanup();
});

/** The URL with `application_name` set, so that pg_stat_activity tells this worker's sessions apart. */
function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

/** The LISTEN sessions under this application name (pg_stat_activity.query is a session's last statement). */
async function listenSessions(pool: pg.Pool, name: string): Promise<number[]> {
  const { rows } = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
    [name],
  );
  return rows.map((r) => r.pid);
}

/**
 * Every job ran at least once and completed, and every extra claim of a job came from the reaper (one
 * retry counted per extra claim): a claim whose answer was lost with its connection runs no handler, so
 * runs may be below claims, never above. Returns how many jobs needed more than one claim.
 */
async function assertNothingLost(pool: pg.Pool, schema: string, queue: string, runs: Map<string, number>, total: number): Promise<number> {
  expect(await stateCounts(pool, schema, queue)).toEqual({ completed: total });
  const { rows } = await pool.query<{ id: string; claim_count: number; retry_count: number }>(
    `SELECT id::text, claim_count, retry_count FROM "${schema}".jobs WHERE queue = $1`,
    [queue],
  );
  const wrong = rows.filter((r) => {
    const ran = runs.get(r.id) ?? 0;
    return ran < 1 || ran > r.claim_count || r.retry_count !== r.claim_count - 1;
  });
  expect(wrong.map((r) => ({ ...r, runs: runs.get(r.id) ?? 0 }))).toEqual([]);
  return rows.filter((r) => r.claim_count > 1).length;
}

describe('a worker whose connections are lost', () => {
  it('reconnects when the server terminates all its sessions, LISTEN included, keeps working and loses nothing', async () => {
    const QUEUE = 'rel.terminated';
    const app = `pgq_${f.schema}`;
    const supervisor = f.create({ workers: false, supervise: true, maintenanceIntervalSeconds: 1 });
    await supervisor.createQueue(QUEUE, { expireInSeconds: 3, retryLimit: 5 });
    const worker = f.create({ connectionString: withApplicationName(testUrl(), app), supervise: false });
    const runs = new Map<string, number>();
    // A polling interval far beyond every deadline below: an idle loop wakes only through LISTEN/NOTIFY.
    await worker.work(QUEUE, { concurrency: 8, pollingIntervalSeconds: 60 }, async (job: Job) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      await f.pool.query('SELECT $1::bigint AS id', [job.id]); // some work, on a connection that is not killed
      return 'done';
    });

    let total = 0;
    for (let i = 0; i < 4; i++)
      total += (
        await supervisor.insert(
          QUEUE,
          Array.from({ length: 500 }, (_, n) => ({ data: { n } })),
        )
      ).length;
    await until(async () => ((await stateCounts(f.pool, f.schema, QUEUE)).completed ?? 0) >= 300, 'the stream is flowing');

    const listening = await listenSessions(f.pool, app);
    expect(listening).toHaveLength(1);
    const backlogAtKill = total - ((await stateCounts(f.pool, f.schema, QUEUE)).completed ?? 0);
    const killed = await f.pool.query<{ pid: number; query: string; terminated: boolean }>(
      'SELECT pid, query, pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [app],
    );
    expect(killed.rows.length).toBeGreaterThan(1);
    expect(killed.rows.every((r) => r.terminated)).toBe(true);
    expect(killed.rows.find((r) => r.pid === listening[0])?.query).toMatch(/^LISTEN /);

    // More jobs while the worker reconnects.
    total += (
      await supervisor.insert(
        QUEUE,
        Array.from({ length: 200 }, (_, n) => ({ data: { n, late: true } })),
      )
    ).length;

    // A new LISTEN session under this worker's name, and the loss was noticed.
    const killedPids = new Set(killed.rows.map((r) => r.pid));
    await until(async () => (await listenSessions(f.pool, app)).some((pid) => !killedPids.has(pid)), 'LISTEN re-opened');
    expect(f.logger.lines.some((l) => l.level === 'error' && l.message.startsWith('LISTEN connection lost'))).toBe(true);

    await until(async () => (await stateCounts(f.pool, f.schema, QUEUE)).completed === total, `all ${total} jobs completed`, 20_000, 100);

    // The loop is idle now and polls once a minute: jobs sent now are found through the new LISTEN session.
    const after = await supervisor.insert(
      QUEUE,
      Array.from({ length: 20 }, () => ({ data: { after: true } })),
    );
    total += after.length;
    await until(
      async () => (await stateCounts(f.pool, f.schema, QUEUE)).completed === total,
      'jobs sent after the reconnect completed',
      15_000,
      50,
    );

    expect(backlogAtKill).toBeGreaterThan(0);
    await assertNothingLost(f.pool, f.schema, QUEUE, runs, total);
    await worker.offWork(QUEUE);
    expect({ loops: worker.workerCount, handlers: worker.activeJobCount }).toEqual({ loops: 0, handlers: 0 });
  });

  it('outlives a restart of PostgreSQL: every job completes, and jobs sent after the restart are processed', async () => {
    const QUEUE = 'rel.restart';
    const schema = uniqueSchema('rel_restart');
    server = await PrivatePostgres.start();
    const admin = new pg.Pool({ connectionString: server.url, max: 4 });
    admin.on('error', () => undefined); // its idle sessions die with the server
    cleanups.push(() => admin.end());
    const logger = recordingLogger();
    // One instance that works and supervises, as a single-node deployment would run.
    const app = `pgq_${schema}`;
    const worker = new PgQueue({ connectionString: withApplicationName(server.url, app), schema, logger, maintenanceIntervalSeconds: 1 });
    cleanups.push(() => worker.close());
    await worker.createQueue(QUEUE, { expireInSeconds: 3, retryLimit: 5 });
    const runs = new Map<string, number>();
    await worker.work(QUEUE, { concurrency: 8, pollingIntervalSeconds: 60 }, async (job: Job) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      await admin.query('SELECT $1::bigint AS id', [job.id]);
      return 'done';
    });
    const completed = async () => (await stateCounts(admin, schema, QUEUE)).completed ?? 0;

    let total = (
      await worker.insert(
        QUEUE,
        Array.from({ length: 3000 }, (_, n) => ({ data: { n } })),
      )
    ).length;
    await until(async () => (await completed()) >= 200, 'the stream is flowing');
    await server.stop();
    const handledAtStop = [...runs.values()].reduce((a, b) => a + b, 0);
    await server.start();

    await until(async () => (await completed()) === total, `all ${total} jobs completed after the restart`, 30_000, 100);
    expect(handledAtStop).toBeLessThan(total); // the restart did come mid-run
    await until(async () => (await listenSessions(admin, app)).length === 1, 'LISTEN re-opened after the restart');

    // Idle again, polling once a minute: new jobs are found through the re-opened LISTEN session.
    total += (
      await worker.insert(
        QUEUE,
        Array.from({ length: 20 }, () => ({ data: { after: true } })),
      )
    ).length;
    await until(async () => (await completed()) === total, 'jobs sent after the restart completed', 15_000, 50);

    await assertNothingLost(admin, schema, QUEUE, runs, total);
    expect(logger.lines.some((l) => l.level === 'error' && l.message.startsWith('LISTEN connection lost'))).toBe(true);
    await worker.offWork(QUEUE);
    expect({ loops: worker.workerCount, handlers: worker.activeJobCount }).toEqual({ loops: 0, handlers: 0 });
  });

  it('transactional handlers that hold every connection of the pool lose nothing when all its sessions are terminated', async () => {
    const QUEUE = 'rel.exhausted';
    const app = `pgq_ex_${f.schema}`;
    const supervisor = f.create({ workers: false, supervise: true, maintenanceIntervalSeconds: 1 });
    await supervisor.createQueue(QUEUE, { expireInSeconds: 5, retryLimit: 10 });
    await f.sql('CREATE TABLE $schema.exhausted_effects (job_id bigint NOT NULL)');
    // Six handlers on a pool of two: each holds a connection for its transaction, and claims, settles and the
    // other handlers' transactions wait for one.
    const worker = f.create({ connectionString: withApplicationName(testUrl(), app), supervise: false, poolSize: 2 });
    await worker.work(QUEUE, { concurrency: 6, transactional: true, pollingIntervalSeconds: 0.2 }, async (job: Job) => {
      await job.db!.query(`INSERT INTO "${f.schema}".exhausted_effects (job_id) VALUES ($1)`, [job.id]);
      await job.db!.query('SELECT pg_sleep(0.02)');
      return 'done';
    });
    const total = (
      await supervisor.insert(
        QUEUE,
        Array.from({ length: 150 }, (_, n) => ({ data: { n } })),
      )
    ).length;
    const completed = async () => (await stateCounts(f.pool, f.schema, QUEUE)).completed ?? 0;
    await until(async () => (await completed()) >= 30, 'the stream is flowing');
    // Exhausted: both connections are in use (the LISTEN session is the third).
    const sessions = await f.sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [app]);
    expect(sessions[0]!.n).toBe(3);
    const killed = await f.sql<{ n: number }>(
      'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [app],
    );
    expect(killed[0]!.n).toBe(3);
    await until(async () => (await completed()) === total, `all ${total} jobs completed`, 30_000, 100);
    // Each job's effect committed exactly once, with its completion.
    const effects = await f.sql<{ job_id: string; n: number }>(
      'SELECT j.id::text AS job_id, count(e.job_id)::int AS n FROM $schema.jobs j LEFT JOIN $schema.exhausted_effects e ON e.job_id = j.id WHERE j.queue = $1 GROUP BY j.id HAVING count(e.job_id) <> 1',
      [QUEUE],
    );
    expect(effects).toEqual([]);
    await worker.offWork(QUEUE);
    expect({ loops: worker.workerCount, handlers: worker.activeJobCount }).toEqual({ loops: 0, handlers: 0 });
  });
});
