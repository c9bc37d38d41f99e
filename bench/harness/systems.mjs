// The systems the bench runs, each with its workload file (bench/workloads/), arguments, label and settings line:
// one list for bench/run.mjs and bench/cost.mjs, so both reports name a system the same way.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BULLMQ, GRAPHILE, PGBOSS, PGQUEUE, RAW_SQL, WORKLOADS } from '../settings.mjs';

const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = join(BENCH_DIR, '..');

/** A package's installed version: the library's from the root, a peer's from bench/node_modules. */
export function version(pkg) {
  try {
    const file = pkg === 'nestjs-pgqueue' ? join(ROOT, 'package.json') : join(BENCH_DIR, 'node_modules', pkg, 'package.json');
    return JSON.parse(readFileSync(file, 'utf8')).version;
  } catch {
    return '?';
  }
}

const json = (o) => `\`${JSON.stringify(o)}\``;

/**
 * The systems and what each runs. kind: pgqueue, pg-peer (a PostgreSQL peer at its fastest settings),
 * pg-peer-polling (a PostgreSQL peer that only polls: shown, and compared with for information), redis-peer,
 * or raw (the ceiling).
 */
export const SYSTEMS = [
  {
    id: 'pgqueue',
    kind: 'pgqueue',
    file: 'pgqueue.mjs',
    args: [],
    workloads: ['insert', 'drain', 'long-drain', 'steady', 'idle', 'scale', 'memory', 'flat'],
    label: `pgqueue ${version('nestjs-pgqueue')} (concurrency ${PGQUEUE.work.concurrency}, batch ${PGQUEUE.work.batchSize}, LISTEN/NOTIFY)`,
    settingsText: `PgQueue ${json(PGQUEUE.engine)}, work ${json(PGQUEUE.work)} (memory workload: concurrency ${WORKLOADS.memoryConcurrency})`,
  },
  {
    // The same engine with the queue option that deletes each job when it completes, as Graphile Worker always
    // does (pgqueue keeps completed jobs for deleteAfterSeconds by default). Measured where completions cost.
    id: 'pgqueue-remove',
    kind: 'pgqueue-variant',
    file: 'pgqueue.mjs',
    args: ['--remove-on-complete', 'true'],
    workloads: ['drain', 'long-drain', 'scale'],
    label: `pgqueue ${version('nestjs-pgqueue')} with removeOnComplete (concurrency ${PGQUEUE.work.concurrency}, batch ${PGQUEUE.work.batchSize})`,
    settingsText: `as pgqueue, and the queue created with \`{ removeOnComplete: true }\`: a completed job is deleted`,
  },
  {
    id: 'graphile-worker',
    kind: 'pg-peer',
    file: 'graphile-worker.mjs',
    args: [],
    workloads: ['insert', 'drain', 'long-drain', 'steady', 'idle'],
    label: `Graphile Worker ${version('graphile-worker')} (concurrency ${GRAPHILE.worker.concurrentJobs}, local queue ${GRAPHILE.worker.localQueue.size}, completeJobBatchDelay ${GRAPHILE.worker.completeJobBatchDelay})`,
    settingsText: `preset.worker ${json(GRAPHILE.worker)}; bulk insert \`addJobs\`, send \`addJob\``,
  },
  {
    id: 'pg-boss',
    kind: 'pg-peer',
    file: 'pg-boss.mjs',
    args: ['--variant', 'fast'],
    workloads: ['insert', 'drain', 'long-drain', 'steady', 'idle'],
    label: `pg-boss ${version('pg-boss')} (batchSize ${PGBOSS.fast.work.batchSize}, burstWhenBatchFull, LISTEN/NOTIFY)`,
    settingsText: `constructor ${json(PGBOSS.fast.boss)}, queue ${json(PGBOSS.fast.queue)}, work ${json(PGBOSS.fast.work)}`,
  },
  {
    id: 'pg-boss-polling',
    kind: 'pg-peer-polling',
    file: 'pg-boss.mjs',
    args: ['--variant', 'polling'],
    workloads: ['steady', 'idle'],
    label: `pg-boss ${version('pg-boss')} (default 2 s polling, no LISTEN/NOTIFY)`,
    settingsText: `constructor ${json(PGBOSS.polling.boss)}, queue ${json(PGBOSS.polling.queue)}, work ${json(PGBOSS.polling.work)}`,
  },
  {
    id: 'bullmq-redis',
    kind: 'redis-peer',
    file: 'bullmq.mjs',
    args: ['--backend', 'redis'],
    needsRedis: true,
    workloads: ['insert', 'drain', 'long-drain', 'steady', 'idle'],
    label: `BullMQ ${version('bullmq')} on Redis (concurrency ${BULLMQ.worker.concurrency})`,
    settingsText: `Worker ${json(BULLMQ.worker)}, Redis ${BULLMQ.redisHost}:${BULLMQ.redisPort} database ${BULLMQ.redisDb}; bulk insert \`addBulk\``,
  },
  {
    id: 'bullmq-postgres',
    kind: 'pg-peer',
    file: 'bullmq.mjs',
    args: ['--backend', 'postgres'],
    // no long drain: at its 1,600 jobs/s, 60,000 jobs take half a minute per repetition
    workloads: ['insert', 'drain', 'steady', 'idle'],
    label: `BullMQ ${version('bullmq')}, PostgreSQL backend (concurrency ${BULLMQ.worker.concurrency})`,
    settingsText: `Worker ${json(BULLMQ.worker)}, \`createPostgresBackend\` with pool ${json(BULLMQ.postgresPool)}; bulk insert \`addBulk\``,
  },
  ...RAW_SQL.variants.map((v, i) => ({
    id: `raw-sql-b${v.batch}-c${v.connections}`,
    kind: 'raw',
    batch: v.batch,
    file: 'raw-sql.mjs',
    args: ['--batch', String(v.batch), '--connections', String(v.connections)],
    workloads: i === 0 ? ['insert', 'drain', 'long-drain'] : ['drain', 'long-drain'],
    label: `raw SQL (batch ${v.batch}, ${v.connections} connection${v.connections > 1 ? 's' : ''})`,
    settingsText: `claim ${v.batch} per statement on ${v.connections} connection${v.connections > 1 ? 's' : ''}, complete with one \`UPDATE … WHERE id = ANY($1)\`${i === 0 ? '; its insert row is one `INSERT … SELECT unnest($2::jsonb[])` per chunk' : ''}`,
  })),
];
