// A worker process for the reliability tests. It runs the compiled engine as a user would
// (`nestjs-pgqueue/core`, package exports → dist), so a test can SIGKILL it, let it crash, or run
// several at once. Started by test/reliability/children.ts with fork(); settings come as JSON in
// PGQUEUE_CHILD, and everything it has to say goes back over the IPC channel.
//
// Settings: { url, schema, queue, mode, work: { concurrency, batchSize, pollingIntervalSeconds },
//             engine: { ...PgQueue options other than connectionString/schema/logger } }
// Modes (every one first appends the attempt to "<schema>".ledger):
//   ledger  return at once
//   block   never return (until the process is killed)
//   poison  process.exit(1) when job.data.poison is true, else return
//   span    record the handler's start and end (database clock) in "<schema>".spans around a spanMs pause
//
// Messages sent: { type: 'ready', pid, workerId } once the loop runs; { type: 'started', id, retryCount }
// per handler when settings.reportStarts; { type: 'log', level, message } for the engine's log and
// its error/warning events; { type: 'stopped' } after a requested stop. Message received: 'stop'.
import pg from 'pg';
import { PgQueue } from 'nestjs-pgqueue/core';
import { logger, stopOnRequest, tell } from './child-ipc.mjs';

const settings = JSON.parse(process.env.PGQUEUE_CHILD ?? '{}');
const { url, schema, queue, mode, work, engine = {}, reportStarts = false, spanMs = 20 } = settings;
if (!url || !schema || !queue || !['ledger', 'block', 'poison', 'span'].includes(mode)) {
  console.error(`child-worker: bad settings ${process.env.PGQUEUE_CHILD}`);
  process.exit(2);
}

// The ledger has its own connections, so the engine's pool is exactly what a user's app would have.
const ledger = new pg.Pool({ connectionString: url, max: Math.max(2, Math.min(work.concurrency ?? 1, 4)) });
ledger.on('error', (err) => logger.warn(`ledger pool: ${err.message}`));

// One statement: the attempt as the jobs table sees it while the handler runs (claim_count and the
// holder are not part of Job, so they are read from the row this process is supposed to hold).
const appendAttempt = `
INSERT INTO "${schema}".ledger (job_id, claim_count, retry_count, pid, worker_id)
SELECT j.id, j.claim_count, $2, $3, j.worker_id FROM "${schema}".jobs j WHERE j.queue = $4 AND j.id = $1`;

const q = new PgQueue({ ...engine, connectionString: url, schema, logger });
q.on('error', (err) => logger.error(`${err.context ?? 'error'}: ${err.message}`));
q.on('warning', (warning) => logger.warn(warning.message));

async function handler(job) {
  await ledger.query(appendAttempt, [job.id, job.retryCount, process.pid, queue]);
  if (reportStarts) tell({ type: 'started', id: job.id, retryCount: job.retryCount });
  if (mode === 'block') return new Promise(() => undefined);
  if (mode === 'poison' && job.data?.poison === true) process.exit(1);
  if (mode === 'span') {
    await ledger.query(`INSERT INTO "${schema}".spans (job_id, pid, t0) VALUES ($1, $2, clock_timestamp())`, [job.id, process.pid]);
    await ledger.query('SELECT pg_sleep($1)', [spanMs / 1000]);
    await ledger.query(`UPDATE "${schema}".spans SET t1 = clock_timestamp() WHERE job_id = $1`, [job.id]);
  }
  return { pid: process.pid };
}

stopOnRequest(async () => {
  await q.close();
  await ledger.end();
});

// A stop may come before the loop has started (the poison test stops a child that is still starting once every
// job has finished): work() then refuses with QUEUE_CLOSED, and the stop ends the process as it would have.
const workerId = await q.work(queue, work, handler).catch((err) => {
  if (err?.code === 'QUEUE_CLOSED') return null;
  throw err;
});
if (workerId !== null) tell({ type: 'ready', pid: process.pid, workerId });
