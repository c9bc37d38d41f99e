// A worker process of the fault campaign (campaign.spec.ts): one engine, as a user's app would run it,
// working every handler mode at once: a plain queue, a transactional one, a key_strict_fifo one, the
// queues of a flow, and a queue whose loop has group limits. It runs the compiled package
// (`nestjs-pgqueue/core`), is started by test/reliability/children.ts with fork(), and takes its settings
// as JSON in PGQUEUE_CHILD:
//   { url, schema, queues: { plain, tx, fifo, flowParent, flowChild, group }, groupLimit, engine }
// Every handler run appends a row to "<schema>".runs (on connections of its own, outside the job's
// transaction): which queue, job and attempt (retryCount, and the claim's time, job.startedOn) ran where.
// The transactional handler also writes its effect, "<schema>".effects, in the job's transaction: the
// effect must exist exactly once per job, committed with the job's completion. Some transactional jobs
// fail their first attempt inside the transaction: data.fault 'timeout' (a statement timeout) or
// 'serialization' (SQLSTATE 40001, as a serializable transaction that lost a race gets it).
//
// Messages sent: { type: 'ready', pid, workerId } once every loop runs (workerId: the loops' ids, joined by
// ','); { type: 'log', level, message }; { type: 'stopped' } after a requested stop. Received: 'stop'.
import pg from 'pg';
import { PgQueue } from 'nestjs-pgqueue/core';
import { logger, stopOnRequest, tell } from './child-ipc.mjs';

const settings = JSON.parse(process.env.PGQUEUE_CHILD ?? '{}');
const { url, schema, queues, groupLimit, engine = {} } = settings;
if (!url || !schema || !queues) {
  console.error(`campaign-worker: bad settings ${process.env.PGQUEUE_CHILD}`);
  process.exit(2);
}

// The runs are written on connections of their own, so the engine's pool is exactly what a user's app has.
const side = new pg.Pool({ connectionString: url, max: 4 });
side.on('error', (err) => logger.warn(`side pool: ${err.message}`));

const recordRun = (job) =>
  side.query(`INSERT INTO "${schema}".runs (queue, job_id, retry_count, started_on, pid) VALUES ($1, $2, $3, $4, $5)`, [
    job.name,
    job.id,
    job.retryCount,
    job.startedOn,
    process.pid,
  ]);

const q = new PgQueue({ ...engine, connectionString: url, schema, logger });
q.on('error', (err) => logger.error(`${err.context ?? 'error'}: ${err.message}`));
q.on('warning', (warning) => logger.warn(warning.message));

async function plain(job) {
  await recordRun(job);
  await side.query('SELECT pg_sleep(0.002)');
  return { pid: process.pid };
}

async function transactional(job) {
  await recordRun(job);
  // The effect reads the job's row in the job's own transaction: its started_on is this attempt's while the
  // attempt holds the job, which the completion in the same transaction checks before anything commits.
  await job.db.query(
    `INSERT INTO "${schema}".effects (job_id, started_on, pid) SELECT id, started_on, $2 FROM "${schema}".jobs WHERE queue = $3 AND id = $1`,
    [job.id, process.pid, job.name],
  );
  if (job.retryCount === 0 && job.data?.fault === 'timeout') {
    await job.db.query("SET LOCAL statement_timeout = '50ms'");
    await job.db.query('SELECT pg_sleep(5)');
  }
  if (job.retryCount === 0 && job.data?.fault === 'serialization') {
    await job.db.query("DO $$ BEGIN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = 'serialization_failure'; END $$");
  }
  await job.db.query('SELECT pg_sleep(0.01)');
  return { pid: process.pid };
}

async function recorded(job) {
  await recordRun(job);
  return { pid: process.pid };
}

async function grouped(job) {
  await recordRun(job);
  await side.query('SELECT pg_sleep(0.01)');
  return { pid: process.pid };
}

stopOnRequest(async () => {
  await q.close();
  await side.end();
});

const poll = { pollingIntervalSeconds: 0.5 };
const ids = [
  await q.work(queues.plain, { ...poll, concurrency: 8 }, plain),
  await q.work(queues.tx, { ...poll, concurrency: 4, transactional: true }, transactional),
  await q.work(queues.fifo, { ...poll, concurrency: 4 }, recorded),
  await q.work(queues.flowParent, { ...poll, concurrency: 3 }, recorded),
  await q.work(queues.flowChild, { ...poll, concurrency: 3 }, recorded),
  await q.work(queues.group, { ...poll, concurrency: 6, groupConcurrency: groupLimit }, grouped),
];
tell({ type: 'ready', pid: process.pid, workerId: ids.join(',') });
