// The fault campaign. Three worker processes (campaign-worker.mjs, the packaged engine as a user runs it)
// work every handler mode at once (plain, transactional, key_strict_fifo, a flow, group limits) while
// jobs keep coming, and one run injects every fault a deployment meets: SIGKILL of a worker, termination
// of all the workers' sessions, an immediate (crash) restart of PostgreSQL, and a worker frozen (SIGSTOP)
// past its heartbeat and then let go. Then everything is checked from the database: every job completed
// (none lost, none stuck active), no process died that the test did not kill, each transactional effect
// committed exactly once and only with its job's completion, no key ran out of order, no flow child ran
// before its parent completed, and no group ever held more active jobs than its limit.
import { readlinkSync } from 'node:fs';
import { setTimeout as sampleInterval } from 'node:timers/promises';
import pg from 'pg';
import { PgQueue } from '../../lib/core/pg-queue.js';
import { recordingLogger, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { startCampaignChild, stopWorkerChildren, type CampaignSettings, type WorkerChild } from './children.js';
import { PrivatePostgres } from './private-postgres.js';

const QUEUES = {
  plain: 'camp.plain',
  tx: 'camp.tx',
  fifo: 'camp.fifo',
  flowParent: 'camp.flow.parent',
  flowChild: 'camp.flow.child',
  group: 'camp.group',
};
const ALL_QUEUES = Object.values(QUEUES);
const GROUP_LIMIT = 2;
const GROUPS = 6;
const FIFO_KEYS = 10;
/** The producer tops the backlog up to this many unfinished jobs, so faults always land mid-stream. */
const BACKLOG = 400;

/**
 * The server the campaign crashes. The one the suite was given only when asked to (PGQUEUE_TEST_CRASH_SERVER=1,
 * as .ci/run does; the campaign then runs alone, after every other file: Jest's `campaign` project in
 * jest.config.js), and when its sessions are processes of this machine that the test may signal on a server that
 * restarts after a crash. Otherwise a private embedded server.
 */
async function campaignServer(): Promise<{ url: string; kind: string; close: () => Promise<void> }> {
  if (process.env.PGQUEUE_TEST_CRASH_SERVER === '1' && (process.env.PGQUEUE_TEST_DATABASE_URL || process.env.DATABASE_URL)) {
    const url = testUrl();
    if (await backendsAreLocal(url)) return { url, kind: 'the given server', close: async () => undefined };
  }
  const server = await PrivatePostgres.start(30_000, 150);
  return { url: server.url, kind: 'a private embedded server', close: () => server.close() };
}

/** A session's process runs here, in the server's data directory, and the server restarts after a crash. */
async function backendsAreLocal(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number; dir: string; restarts: string }>(
      "SELECT pg_backend_pid() AS pid, current_setting('data_directory') AS dir, current_setting('restart_after_crash') AS restarts",
    );
    return rows[0]!.restarts === 'on' && readlinkSync(`/proc/${rows[0]!.pid}/cwd`) === rows[0]!.dir;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** An immediate restart, as after a crash: a backend killed with SIGKILL makes the postmaster end every session and recover. */
async function crashServer(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  process.kill(rows[0]!.pid, 'SIGKILL');
  await client.end().catch(() => undefined);
  await until(
    async () => {
      const probe = new pg.Client({ connectionString: url });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.query<{ up: boolean }>('SELECT NOT pg_is_in_recovery() AS up')).rows[0]!.up;
      } finally {
        await probe.end().catch(() => undefined);
      }
    },
    'PostgreSQL is back after the crash',
    60_000,
    100,
  );
}

function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

let server: { url: string; kind: string; close: () => Promise<void> } | undefined;
let admin: pg.Pool | undefined;
let producer: PgQueue | undefined;
/** The producer's and the group sampler's loops run while this is set; afterAll clears it on a failure too. */
let running = true;
const loops: Promise<void>[] = [];
const children: WorkerChild<CampaignSettings>[] = [];
const schema = uniqueSchema('campaign');
afterAll(async () => {
  running = false;
  await Promise.all(loops);
  for (const child of children) child.thaw();
  await stopWorkerChildren();
  await producer?.close().catch(() => undefined);
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await admin?.end();
  await server?.close();
});

describe('the fault campaign', () => {
  it('survives SIGKILL, terminated sessions, a crash restart and a frozen worker in every handler mode, losing nothing', async () => {
    server = await campaignServer();
    const url = server.url;
    admin = new pg.Pool({ connectionString: url, max: 4 });
    admin.on('error', () => undefined); // its idle sessions die with the faults
    const sql = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
      (await admin!.query<R>(text.replaceAll('$schema', `"${schema}"`), values)).rows;

    const logger = recordingLogger();
    producer = new PgQueue({ connectionString: url, schema, logger, workers: false, supervise: false, poolSize: 3 });
    const settings = { heartbeatSeconds: 2, expireInSeconds: 30, retryLimit: 50 };
    await producer.createQueue(QUEUES.plain, settings);
    await producer.createQueue(QUEUES.tx, settings);
    await producer.createQueue(QUEUES.fifo, { ...settings, policy: 'key_strict_fifo' });
    await producer.createQueue(QUEUES.flowParent, settings);
    await producer.createQueue(QUEUES.flowChild, settings);
    await producer.createQueue(QUEUES.group, settings);
    await sql(
      'CREATE TABLE $schema.runs (queue text NOT NULL, job_id bigint NOT NULL, retry_count int NOT NULL, started_on timestamptz NOT NULL, pid int NOT NULL)',
    );
    await sql('CREATE TABLE $schema.effects (job_id bigint NOT NULL, started_on timestamptz, pid int NOT NULL)');

    // ---- the producer: keeps about BACKLOG jobs unfinished, every mode in each round ----
    let round = 0;
    let sendFailures = 0;
    const unfinished = async () =>
      (
        await sql<{ n: number }>("SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = ANY($1) AND state <> 'completed'", [ALL_QUEUES])
      )[0]!.n;
    const completed = async () =>
      (
        await sql<{ n: number }>("SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = ANY($1) AND state = 'completed'", [ALL_QUEUES])
      )[0]!.n;
    const produceRound = async (r: number) => {
      await producer!.insert(
        QUEUES.plain,
        Array.from({ length: 40 }, (_, i) => ({ data: { r, i } })),
      );
      // Every 7th transactional job fails its first attempt inside its transaction: a statement timeout or a serialization failure.
      await producer!.insert(
        QUEUES.tx,
        Array.from({ length: 20 }, (_, i) => ({ data: { r, i, fault: i % 7 === 3 ? (r % 2 ? 'timeout' : 'serialization') : null } })),
      );
      await producer!.insert(
        QUEUES.fifo,
        Array.from({ length: FIFO_KEYS }, (_, k) => ({ singletonKey: `key-${k}`, data: { r, k } })),
      );
      for (let f = 0; f < 3; f++) {
        const flow = `${r}.${f}`;
        await producer!.flow([
          { name: QUEUES.flowParent, ref: 'parent', data: { flow } },
          { name: QUEUES.flowChild, ref: 'a', dependsOn: ['parent'], data: { flow } },
          { name: QUEUES.flowChild, ref: 'b', dependsOn: ['parent'], data: { flow } },
        ]);
      }
      await producer!.insert(
        QUEUES.group,
        Array.from({ length: 24 }, (_, i) => ({ group: { id: `g${i % GROUPS}` }, data: { r, i } })),
      );
    };
    let producing = true;
    const production = (async () => {
      while (producing && running) {
        try {
          await until(async () => !producing || !running || (await unfinished()) < BACKLOG, 'the backlog has room', 120_000, 50);
          if (producing && running) await produceRound(round++);
        } catch {
          // A fault cut the round short; whatever it inserted is checked like every other job.
          sendFailures++;
        }
      }
    })();

    // ---- watchers: group limits, sampled from the database; processes that die unasked ----
    let groupPeak = 0;
    let groupSamples = 0;
    let watching = true;
    const groupWatch = (async () => {
      while (watching && running) {
        try {
          const [row] = await sql<{ peak: number }>(
            "SELECT coalesce(max(n), 0)::int AS peak FROM (SELECT count(*) AS n FROM $schema.jobs WHERE queue = $1 AND state = 'active' GROUP BY group_id) g",
            [QUEUES.group],
          );
          groupPeak = Math.max(groupPeak, row!.peak);
          groupSamples++;
        } catch {
          // the server is down for a moment
        }
        await sampleInterval(20); // a sampling rate, not a wait for something to happen
      }
    })();

    const app = `pgq_${schema}`;
    const childSettings: CampaignSettings = {
      url: withApplicationName(url, app),
      schema,
      queues: QUEUES,
      groupLimit: GROUP_LIMIT,
      engine: { supervise: true, maintenanceIntervalSeconds: 1, poolSize: 8 },
    };
    loops.push(production, groupWatch);
    const killedByTest = new Set<WorkerChild<CampaignSettings>>();
    const startChild = async () => {
      const child = await startCampaignChild(childSettings).ready();
      children.push(child);
      return child;
    };
    for (let i = 0; i < 3; i++) await startChild();
    const diedUnasked = () => children.filter((c) => c.exit !== null && !killedByTest.has(c));
    const died = () =>
      new Error(
        `a worker died: ${diedUnasked()
          .map((c) => `${c.pid} ${JSON.stringify(c.exit)}\n${c.stderrTail}`)
          .join('\n')}`,
      );
    /** What is unfinished, and which sessions wait for a lock held by whom: said when the stream stalls. */
    const stallReport = async () => {
      const states = await sql(
        "SELECT queue, state::text, count(*)::int AS n FROM $schema.jobs WHERE queue = ANY($1) AND state <> 'completed' GROUP BY 1, 2",
        [ALL_QUEUES],
      );
      const sessions = await sql(
        `SELECT w.pid, w.state, w.wait_event, now() - w.xact_start AS in_xact, left(w.query, 60) AS query, pg_blocking_pids(w.pid) AS blocked_by
        FROM pg_stat_activity w WHERE w.application_name = $1 AND w.state <> 'idle'`,
        [app],
      );
      const held = await sql(
        `SELECT id::text, queue, worker_id, now() - heartbeat_until AS heartbeat_late, now() - lease_until AS lease_late
        FROM $schema.jobs WHERE queue = ANY($1) AND state = 'active' ORDER BY heartbeat_until LIMIT 20`,
        [ALL_QUEUES],
      );
      const maintenance = await sql('SELECT task, now() - last_run_on AS ago FROM $schema.maintenance');
      return JSON.stringify({ states, sessions, held, maintenance }, null, 1);
    };
    /** Waits for `n` more completions while checking that no worker died unasked. */
    const progress = async (n: number, what: string) => {
      const target = (await until(async () => (await completed()) + 1, 'a count of completed jobs', 60_000, 100)) - 1 + n;
      let outcome: string;
      try {
        // A worker that died ends the wait at once (until() would take a throw for a passing error).
        outcome = await until(
          async () => (diedUnasked().length > 0 ? 'died' : (await completed()) >= target ? 'done' : null),
          `${n} more jobs completed ${what}`,
          60_000,
          100,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${await stallReport().catch(String)}`, { cause: err });
      }
      if (outcome === 'died') throw died();
    };

    await progress(300, 'before the first fault');
    const faults: string[] = [];

    // 1. SIGKILL of a worker: nothing is handed back; the reaper of another process puts its jobs back.
    const doomed = children[0]!;
    killedByTest.add(doomed);
    expect(await doomed.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    faults.push('SIGKILL');
    await startChild();
    await progress(300, 'after SIGKILL');

    // 2. Every session of the workers terminated at once (pools, transactions in flight, LISTEN).
    const terminated = await sql<{ n: number }>(
      'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [app],
    );
    expect(terminated[0]!.n).toBeGreaterThan(3);
    faults.push(`terminate ${terminated[0]!.n} sessions`);
    await progress(300, 'after the sessions were terminated');

    // 3. An immediate restart of PostgreSQL, as after a crash.
    await crashServer(url);
    faults.push('crash restart');
    await progress(300, 'after the crash restart');

    // 4. A worker frozen past its heartbeat: its jobs are reaped and run elsewhere; when it wakes, its results are refused.
    const frozen = children[1]!;
    const frozenLoops = frozen.workerId.split(',');
    const heldByFrozen = async () =>
      (
        await sql<{ n: number }>("SELECT count(*)::int AS n FROM $schema.jobs WHERE state = 'active' AND worker_id = ANY($1)", [
          frozenLoops,
        ])
      )[0]!.n;
    // Frozen while it holds jobs, as the database sees it once it is frozen (else let go and frozen again).
    await until(
      async () => {
        if ((await heldByFrozen()) === 0) return false;
        frozen.freeze();
        if ((await heldByFrozen()) > 0) return true;
        frozen.thaw();
        return false;
      },
      'the worker is frozen while it holds jobs',
      30_000,
      10,
    );
    faults.push('SIGSTOP');
    try {
      await until(async () => (await heldByFrozen()) === 0, "the frozen worker's jobs were reaped", 30_000, 100);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await stallReport().catch(String)}`, { cause: err });
    }
    await progress(200, 'while a worker is frozen');
    frozen.thaw();
    // Its handlers finish when it wakes, and their results are refused: the jobs were reaped and ran elsewhere.
    await until(
      () => frozen.logs('warn').some((m) => /no longer held by this worker; its result was discarded/.test(m)),
      "the frozen worker's late results were refused",
      30_000,
      50,
    );
    await progress(200, 'after the frozen worker woke');

    producing = false;
    await production;
    const total = async () =>
      (await sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = ANY($1)', [ALL_QUEUES]))[0]!.n;
    const drained = await until(
      async () => (diedUnasked().length > 0 ? 'died' : (await unfinished()) === 0 ? 'done' : null),
      'every job completed',
      90_000,
      200,
    );
    if (drained === 'died') throw died();
    watching = false;
    await groupWatch;

    // No process died that the test did not kill, and each of them still shuts down cleanly.
    expect(diedUnasked().map((c) => ({ pid: c.pid, exit: c.exit, stderr: c.stderrTail }))).toEqual([]);
    for (const child of children.filter((c) => !killedByTest.has(c))) expect(await child.stop(20_000)).toEqual({ code: 0, signal: null });

    // Every job completed: none lost, none stuck active (checked above: nothing unfinished), in every queue.
    const byQueue = await sql<{ queue: string; n: number }>(
      "SELECT queue, count(*)::int AS n FROM $schema.jobs WHERE queue = ANY($1) AND state = 'completed' GROUP BY queue ORDER BY queue",
      [ALL_QUEUES],
    );
    expect(byQueue.map((r) => r.queue).sort()).toEqual([...ALL_QUEUES].sort());
    expect(byQueue.every((r) => r.n >= 10)).toBe(true);

    // Each transactional effect committed exactly once, by the attempt that completed its job.
    const effects = await sql<{ id: string; effects: number; own: number }>(
      `SELECT j.id::text, count(e.job_id)::int AS effects, count(e.job_id) FILTER (WHERE e.started_on = j.started_on)::int AS own
       FROM $schema.jobs j LEFT JOIN $schema.effects e ON e.job_id = j.id WHERE j.queue = $1 GROUP BY j.id HAVING count(e.job_id) <> 1 OR count(e.job_id) FILTER (WHERE e.started_on = j.started_on) <> 1`,
      [QUEUES.tx],
    );
    expect(effects).toEqual([]);
    const [orphans] = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM $schema.effects e WHERE NOT EXISTS (SELECT 1 FROM $schema.jobs j WHERE j.id = e.job_id AND j.queue = $1)`,
      [QUEUES.tx],
    );
    expect(orphans!.n).toBe(0);
    // The faults inside transactions did fail first attempts, and those attempts' effects rolled back.
    const [faulted] = await sql<{ n: number; retried: number }>(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE retry_count >= 1)::int AS retried FROM $schema.jobs WHERE queue = $1 AND data->>'fault' IS NOT NULL",
      [QUEUES.tx],
    );
    expect(faulted!.n).toBeGreaterThan(0);
    expect(faulted!.retried).toBe(faulted!.n);

    // No key ran out of order: every run of a job began after the job before it on its key (by id) completed.
    const disorder = await sql(
      `WITH k AS (SELECT id, singleton_key, completed_on, lag(completed_on) OVER (PARTITION BY singleton_key ORDER BY id) AS before FROM $schema.jobs WHERE queue = $1)
       SELECT k.id::text, k.singleton_key, r.started_on, k.before FROM k JOIN $schema.runs r ON r.job_id = k.id AND r.queue = $1
       WHERE k.before IS NOT NULL AND r.started_on < date_trunc('milliseconds', k.before)`,
      [QUEUES.fifo],
    );
    expect(disorder).toEqual([]);

    // No flow child ran before its parent completed.
    const early = await sql(
      `SELECT c.id::text AS child, r.started_on, p.completed_on FROM $schema.jobs c
       JOIN $schema.jobs p ON p.queue = $1 AND p.data->>'flow' = c.data->>'flow'
       JOIN $schema.runs r ON r.job_id = c.id AND r.queue = $2
       WHERE c.queue = $2 AND r.started_on < date_trunc('milliseconds', p.completed_on)`,
      [QUEUES.flowParent, QUEUES.flowChild],
    );
    expect(early).toEqual([]);

    // No group ever held more active jobs than its limit (and the limit was reached: the check can fail).
    expect(groupSamples).toBeGreaterThan(100);
    expect(groupPeak).toBe(GROUP_LIMIT);

    // Every fault happened, mid-stream.
    expect(faults).toHaveLength(4);
    const [reruns] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = ANY($1) AND claim_count > 1', [
      ALL_QUEUES,
    ]);
    expect(reruns!.n).toBeGreaterThan(0);
    console.log(
      `[campaign] on ${server.kind}: ${await total()} jobs, ${round} rounds (${sendFailures} cut short by faults), faults: ${faults.join(', ')}; ` +
        `${reruns!.n} jobs claimed more than once; group peak ${groupPeak} over ${groupSamples} samples`,
    );
  }, 300_000);
});
