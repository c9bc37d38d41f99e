// docs/performance.md, "What bounds a drain": what the jobs table's indexes whose predicate a plain job never enters
// (the policies', the keys', the groups', findJobs' and the job view's) cost a drain of kept jobs, and, with
// --variants, what some of the five a plain job does use cost it. Each round drains
// `--jobs` jobs of a standard queue once per variant, in schemas of their own:
//   all           every index;
//   lean          only the five a plain job's life writes or reads (the primary key, the ready and lease indexes, the
//                 two finished-rows indexes);
//   one-finished  lean without jobs_finished_on_idx: what a drain would cost if one index of finished rows served
//                 both retention and the dashboard (a design not built: the dashboard's reads need the other);
//   bare          one-finished without jobs_lease_idx: a claim that writes no index entry but the primary key's (a
//                 design not built either: the reaper finds expired leases through that index).
//
//   node bench/design/unused-indexes.mjs [--rounds 3] [--jobs 60000] [--variants all,lean]  (any of the four)
//
// Prints per variant: drained jobs/s, the machine's CPU per job (every process, /proc/stat) and the WAL per job
// (pg_current_wal_lsn, from after a CHECKPOINT), medians (min–max) of the rounds. The variants' order turns each
// round, so that none always runs first.
import { readFileSync } from 'node:fs';
import { args, describeServer, inSchema, intArg, spread, table } from './common.mjs';

const ROUNDS = intArg('rounds', 3);
const JOBS = intArg('jobs', 60_000);
/** The parent's indexes a plain job's claim and completion use (schema/index.ts names them). */
const LEAN = ['jobs_pkey', 'jobs_ready_idx', 'jobs_lease_idx', 'jobs_finished_keep_idx', 'jobs_finished_on_idx'];
/** Each variant's indexes kept (null: all of them). */
const VARIANTS = {
  all: null,
  lean: LEAN,
  'one-finished': LEAN.filter((n) => n !== 'jobs_finished_on_idx'),
  bare: ['jobs_pkey', 'jobs_ready_idx', 'jobs_finished_keep_idx'],
};
const CHOSEN = String(args.variants ?? 'all,lean')
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean);
if (CHOSEN.length === 0) throw new Error(`--variants: name at least one (variants: ${Object.keys(VARIANTS).join(', ')})`);
for (const v of CHOSEN)
  if (!(v in VARIANTS)) throw new Error(`--variants: no variant "${v}" (variants: ${Object.keys(VARIANTS).join(', ')})`);
const WORK = { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 2 };

/** busy and all jiffies of the machine, from /proc/stat */
function ticks() {
  const t = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  const all = t.reduce((a, b) => a + b, 0);
  return { busy: all - t[3] - t[4], all };
}

async function drain(variant) {
  return inSchema(`unused_${variant.replaceAll('-', '_')}`, async ({ q, S, admin }) => {
    await q.createQueue('d');
    const keep = VARIANTS[variant];
    if (keep) {
      // the partition's indexes are attached to the parent's: each is dropped through its parent, known by name
      const { rows } = await admin.query(
        `SELECT p.inhparent::regclass::text AS parent, c.relname AS parent_name
         FROM pg_index i JOIN pg_inherits p ON p.inhrelid = i.indexrelid JOIN pg_class c ON c.oid = p.inhparent
         WHERE i.indrelid = '${S}.jobs_default'::regclass`,
      );
      const kept = rows.filter((r) => keep.includes(r.parent_name));
      if (kept.length !== keep.length) throw new Error(`expected the indexes ${keep.join(', ')}, found ${kept.map((r) => r.parent_name)}`);
      for (const { parent, parent_name } of rows) if (!keep.includes(parent_name)) await admin.query(`DROP INDEX ${parent}`);
    }
    const {
      rows: [{ n: indexes }],
    } = await admin.query(`SELECT count(*)::int AS n FROM pg_index WHERE indrelid = '${S}.jobs_default'::regclass`);
    for (let i = 0; i < JOBS; i += 1000)
      await q.insert(
        'd',
        Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) => ({ data: { i: i + k } })),
      );
    await admin.query('CHECKPOINT');
    const lsn = async () => (await admin.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
    const [l0, c0, t0] = [await lsn(), ticks(), performance.now()];
    let handled = 0;
    let done;
    const all = new Promise((resolve) => (done = resolve));
    const id = await q.work('d', WORK, async () => {
      if (++handled === JOBS) done();
    });
    await all;
    for (;;) {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${S}.jobs WHERE queue = 'd' AND state <> 'completed'`);
      if (rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const ms = performance.now() - t0;
    const c1 = ticks();
    const {
      rows: [{ b }],
    } = await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS b', [l0]);
    await q.offWork(id);
    const hz = 100; // USER_HZ
    return { indexes, rate: JOBS / (ms / 1000), cpu: (((c1.busy - c0.busy) / hz) * 1e6) / JOBS, wal: b / JOBS };
  });
}

const results = Object.fromEntries(CHOSEN.map((v) => [v, []]));
let machine = '';
for (let r = 0; r < ROUNDS; r++)
  for (let k = 0; k < CHOSEN.length; k++) {
    const variant = CHOSEN[(k + r) % CHOSEN.length];
    results[variant].push(await drain(variant));
    console.error(`round ${r + 1}/${ROUNDS}: ${variant} done`);
  }
await inSchema('unused_machine', async ({ admin }) => (machine = await describeServer(admin)));
console.log(`${machine}\n\n${JOBS} jobs drained by one worker (concurrency 50, batch 200), ${ROUNDS} interleaved rounds\n`);
table(
  ['variant', 'indexes on the jobs', 'drained jobs/s', 'machine CPU µs per job', 'WAL bytes per job'],
  Object.entries(results).map(([variant, rs]) => [
    variant,
    rs[0].indexes,
    spread(
      rs.map((x) => x.rate),
      0,
    ),
    spread(
      rs.map((x) => x.cpu),
      1,
    ),
    spread(
      rs.map((x) => x.wal),
      0,
    ),
  ]),
);
