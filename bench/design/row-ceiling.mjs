// docs/performance.md, "What bounds a drain": where a drain of kept jobs spends the machine, from a loop with no
// library on a narrow table up to the engine. Each round drains `--jobs` jobs four ways, in turn (the order turns each
// round), each on a fresh backlog:
//
//   raw, narrow row          bench/workloads/raw-sql.mjs's table (7 columns, one partial index) and statements: an
//                            UPDATE that claims with FOR UPDATE SKIP LOCKED, then one that completes by id;
//   raw, pgqueue's row       the same two statements on pgqueue's jobs table (its columns, its indexes), setting the
//                            columns a claim and a completion set there and nothing else: no fence, no probe, and
//                            only the ids and the data returned;
//   raw, engine's statements the engine's own claim and completion (claimJobs, completeLeafJobs: fenced, probed, with
//                            the columns a worker reads) in the same loop, with no worker around them;
//   engine                   a pgqueue worker (concurrency 50, batch `--batch`), as the bench's drain runs one.
//
// The raw loops run on `--connections` connections (2), each claiming `--batch` rows (200) and completing them
// before it claims again, as the bench's raw-SQL rows do. They commit as the server's synchronous_commit says, where
// the engine's claims do not wait for the flush (asyncCommit), so the first two ways are, if anything, understated.
//
//   node bench/design/row-ceiling.mjs [--rounds 3] [--jobs 60000] [--connections 2] [--batch 200]
//
// Prints per way, medians (min–max) of the rounds: drained jobs/s; the machine's CPU per job (every process,
// /proc/stat) and, of it, this process's (the loop's or the worker's: process.cpuUsage); the WAL per job
// (pg_current_wal_lsn, from after a CHECKPOINT).
import { readFileSync } from 'node:fs';
import { describeServer, inSchema, intArg, spread, sql, table } from './common.mjs';

const ROUNDS = intArg('rounds', 3);
const JOBS = intArg('jobs', 60_000);
const CONNECTIONS = intArg('connections', 2);
const BATCH = intArg('batch', 200);
const WORK = { concurrency: 50, batchSize: BATCH, pollingIntervalSeconds: 2 };

/** busy and all jiffies of the machine, from /proc/stat */
function ticks() {
  const t = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return { busy: t.reduce((a, b) => a + b, 0) - t[3] - t[4] };
}

/**
 * Claims and completes on `CONNECTIONS` sessions until a claim comes back empty on each. `complete` is a statement
 * whose only parameter is the claimed ids, or a function of the claimed rows that returns one with its values.
 */
async function rawLoop(session, claim, complete) {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => session()));
  const completion =
    typeof complete === 'function' ? complete : (rows) => ({ ...complete, values: [`{${rows.map((r) => r.id).join(',')}}`] });
  return async () =>
    Promise.all(
      clients.map(async (c) => {
        for (;;) {
          const { rows } = await c.query(claim);
          if (rows.length === 0) return;
          await c.query(completion(rows));
        }
      }),
    );
}

const WAYS = {
  async 'raw, narrow row'({ S, admin, session }) {
    await admin.query(`CREATE TABLE ${S}.raw_jobs (
      id bigserial PRIMARY KEY, queue text NOT NULL, state smallint NOT NULL DEFAULT 0, data jsonb,
      created_on timestamptz NOT NULL DEFAULT now(), started_on timestamptz, completed_on timestamptz);
    CREATE INDEX raw_jobs_ready ON ${S}.raw_jobs (queue, id) WHERE state = 0`);
    await admin.query(`INSERT INTO ${S}.raw_jobs (queue, data) SELECT 'd', jsonb_build_object('i', g) FROM generate_series(1, ${JOBS}) g`);
    const run = await rawLoop(
      session,
      {
        name: 'claim',
        text: `UPDATE ${S}.raw_jobs j SET state = 1, started_on = now()
        FROM (SELECT id FROM ${S}.raw_jobs WHERE queue = 'd' AND state = 0 ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) next
        WHERE j.id = next.id RETURNING j.id, j.data`,
      },
      { name: 'complete', text: `UPDATE ${S}.raw_jobs SET state = 2, completed_on = now() WHERE id = ANY($1::bigint[]) AND state = 1` },
    );
    return { run, left: `SELECT count(*)::int AS n FROM ${S}.raw_jobs WHERE state <> 2` };
  },
  async "raw, pgqueue's row"({ q, S, session }) {
    await fill(q);
    const J = `${S}.jobs_default`;
    const run = await rawLoop(
      session,
      {
        name: 'claim',
        text: `WITH next AS MATERIALIZED (
        SELECT j.ctid AS tid FROM ${J} j WHERE j.queue = 'd' AND j.state < 'active' AND j.start_after <= statement_timestamp()
        ORDER BY j.priority DESC, j.start_after, j.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      UPDATE ${J} j SET state = 'active', claim_count = j.claim_count + 1, worker_id = 'w', started_on = statement_timestamp(),
        lease_until = statement_timestamp() + j.expire_seconds * interval '1 second'
      WHERE j.ctid = ANY (ARRAY(SELECT tid FROM next)) RETURNING j.id, j.data`,
      },
      {
        name: 'complete',
        text: `UPDATE ${J} SET state = 'completed', completed_on = now(), lease_until = NULL,
        keep_until = now() + delete_after_seconds * interval '1 second'
      WHERE queue = 'd' AND id = ANY ($1::bigint[]) AND state = 'active'`,
      },
    );
    return { run, left: `SELECT count(*)::int AS n FROM ${S}.jobs WHERE state <> 'completed'` };
  },
  async "raw, engine's statements"({ q, S, session, statementsFor }) {
    await fill(q);
    const st = await statementsFor('d');
    const list = (rows, key) => `{${rows.map((r) => r[key]).join(',')}}`;
    const run = await rawLoop(session, { name: 'claim', text: st.claimJobs, values: ['d', BATCH, 'w', null, null, true] }, (rows) => ({
      name: 'complete',
      text: st.completeLeafJobs,
      values: sql.completeLeafArgs(
        {
          queue: 'd',
          ids: list(rows, 'id'),
          retryCounts: null,
          workerId: 'w',
          claimCounts: list(rows, 'claim_count'),
          stamps: list(rows, 'stamp'),
        },
        null,
        null,
      ),
    }));
    return { run, left: `SELECT count(*)::int AS n FROM ${S}.jobs WHERE state <> 'completed'` };
  },
  async engine({ q, S }) {
    await fill(q);
    const run = async () => {
      let handled = 0;
      let done;
      const all = new Promise((resolve) => (done = resolve));
      const id = await q.work('d', WORK, async () => {
        if (++handled === JOBS) done();
      });
      await all;
      return id;
    };
    return { run, left: `SELECT count(*)::int AS n FROM ${S}.jobs WHERE state <> 'completed'`, stop: (id) => q.offWork(id) };
  },
};

async function fill(q) {
  for (let i = 0; i < JOBS; i += 1000)
    await q.insert(
      'd',
      Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) => ({ data: { i: i + k } })),
    );
}

async function drain(way) {
  return inSchema('row_ceiling', async (ctx) => {
    await ctx.q.createQueue('d');
    const { run, left, stop } = await WAYS[way](ctx);
    const { admin } = ctx;
    await admin.query('CHECKPOINT');
    const lsn = (await admin.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
    const [c0, u0, t0] = [ticks(), process.cpuUsage(), performance.now()];
    const ran = await run();
    // the engine's last completions may still be in flight when its last handler returns
    while ((await admin.query(left)).rows[0].n !== 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const ms = performance.now() - t0;
    const c1 = ticks();
    const u = process.cpuUsage(u0);
    const { b } = (await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS b', [lsn])).rows[0];
    await stop?.(ran);
    const hz = 100; // USER_HZ
    return { rate: JOBS / (ms / 1000), cpu: (((c1.busy - c0.busy) / hz) * 1e6) / JOBS, node: (u.user + u.system) / JOBS, wal: b / JOBS };
  });
}

const names = Object.keys(WAYS);
const results = Object.fromEntries(names.map((w) => [w, []]));
for (let r = 0; r < ROUNDS; r++)
  for (let k = 0; k < names.length; k++) {
    const way = names[(k + r) % names.length];
    results[way].push(await drain(way));
    console.error(`round ${r + 1}/${ROUNDS}: ${way} done`);
  }
const machine = await inSchema('row_ceiling_machine', ({ admin }) => describeServer(admin));
console.log(
  `${machine}\n\n${JOBS} jobs, ${ROUNDS} interleaved rounds; raw loops on ${CONNECTIONS} connections, batch ${BATCH}; the engine at concurrency ${WORK.concurrency}, batch ${BATCH}\n`,
);
table(
  ['way', 'drained jobs/s', 'machine CPU µs per job', 'of which this process', 'WAL bytes per job'],
  Object.entries(results).map(([way, rs]) => [
    way,
    spread(
      rs.map((x) => x.rate),
      0,
    ),
    spread(
      rs.map((x) => x.cpu),
      1,
    ),
    spread(
      rs.map((x) => x.node),
      1,
    ),
    spread(
      rs.map((x) => x.wal),
      0,
    ),
  ]),
);
