// schema/migrations/0015_fillfactor.ts and docs/performance.md, "Cost per job in PostgreSQL": what the fill factor of
// the jobs' partition trades. For each fill factor, on a schema of its own: a backlog of --jobs jobs, drained by one
// worker (concurrency 50, batch 200), then VACUUM and a second backlog as large: the WAL the drain wrote per job
// (pg_current_wal_lsn()), and the heap's size after each step (pg_relation_size of jobs_default): the room the pages
// keep costs space, most of it once the kept jobs and the next backlog share the table.
//
//   node bench/design/fill-room.mjs [--jobs 60000] [--factors 100,70,50]
import { args, describeServer, inSchema, intArg, table } from './common.mjs';

const JOBS = intArg('jobs', 60_000);
const FACTORS = String(args.factors ?? '100,70,50')
  .split(',')
  .map((f) => {
    const n = Number(f);
    if (!Number.isInteger(n) || n < 10 || n > 100) throw new Error(`--factors: each from 10 to 100, got ${f}`);
    return n;
  });
const MIB = 1024 * 1024;

const rows = [];
let machine = '';
for (const factor of FACTORS) {
  await inSchema(`fill${factor}`, async ({ q, S, admin }) => {
    machine ||= await describeServer(admin);
    await q.createQueue('f');
    await admin.query(`ALTER TABLE ${S}.jobs_default SET (fillfactor = ${factor})`);
    const size = async () => Number((await admin.query(`SELECT pg_relation_size('${S}.jobs_default') AS b`)).rows[0].b) / MIB;
    const backlog = async () => {
      for (let i = 0; i < JOBS; i += 5000)
        await q.insert(
          'f',
          Array.from({ length: Math.min(5000, JOBS - i) }, (_, k) => ({ data: { k } })),
        );
    };
    await backlog();
    const waiting = await size();
    const wal0 = (await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn;
    let done = 0;
    let finished;
    const all = new Promise((resolve) => (finished = resolve));
    const id = await q.work('f', { concurrency: 50, batchSize: 200 }, async () => {
      if (++done === JOBS) finished();
    });
    await all;
    // the last completions are written after the last handler returns
    for (;;) {
      const left = (await admin.query(`SELECT count(*)::int AS n FROM ${S}.jobs WHERE state <> 'completed'`)).rows[0].n;
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const wal = (await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS b', [wal0])).rows[0].b;
    await q.offWork(id);
    const drained = await size();
    await admin.query(`VACUUM ${S}.jobs_default`);
    await backlog();
    rows.push([String(factor), (wal / JOBS).toFixed(0), waiting.toFixed(1), drained.toFixed(1), (await size()).toFixed(1)]);
  });
}
console.log(`${machine}; ${JOBS} jobs a backlog, one worker (concurrency 50, batch 200)\n`);
table(['fill factor', 'drain WAL bytes per job', 'heap MiB, backlog', 'drained', 'vacuumed, + a backlog'], rows);
