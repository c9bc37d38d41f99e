// docs/performance.md, "What bounds a drain": where a drain of kept jobs spends the machine, from a loop with no
// library on a narrow table up to the engine, and Graphile Worker beside them. Each round drains `--jobs` jobs five
// ways, in turn (the order turns each round), each on a fresh backlog in a schema of its own:
//
//   raw, narrow row          bench/workloads/raw-sql.mjs's table (7 columns, one partial index) and its two
//                            statements, an UPDATE that claims with FOR UPDATE SKIP LOCKED and one that completes by
//                            id, with the queue and the batch written into the text instead of passed as parameters,
//                            on plain connections as there;
//   raw, pgqueue's row       two such statements on pgqueue's jobs table (its columns, its indexes): the claim walks
//                            the ready index in claim order and updates the rows it locked by address, as the engine's
//                            does; both set the columns a claim and a completion set there and nothing else (no
//                            fence, no probe), and the claim returns only the ids and the data;
//   raw, engine's statements the engine's own claim and completion (claimJobs, completeLeafJobs: fenced, probed, with
//                            the columns a worker reads) in the same loop, and no worker around them;
//   engine                   a pgqueue worker with the bench's work options (PGQUEUE.work in bench/settings.mjs, the
//                            batch `--batch`), on an engine that runs no maintenance passes (bench/design/common.mjs;
//                            the bench's drain runs them);
//   Graphile Worker          Graphile Worker with the bench's settings for it (GRAPHILE in bench/settings.mjs), in a
//                            schema of its own: the peer the drain's targets name (it deletes each job as it
//                            completes).
//
// The raw loops run on `--connections` connections (2), each claiming `--batch` rows (200) and completing them
// before it claims again, as the bench's raw-SQL rows do. The two loops on pgqueue's table run on connections with
// the engine's session settings (runtime/db.ts: generic plans, no sequential or bitmap scans), as the engine's own do:
// on a plain connection the planner may read a freshly filled table whole for each claim.
//
// What the clock covers: from the start of the loops, or of the worker, until the database says every job is done.
// As in the bench's drain, the pgqueue engine is started before it and Graphile Worker's runner inside it (its pool,
// its check of its migrations). The first two ways' statements commit as the server's synchronous_commit says, while
// the engine's claims, in the third way and the worker, do not wait for the WAL flush (asyncCommit): against them,
// the first two ways are, if anything, understated. Before the rounds, each way drains a backlog of a tenth of
// `--jobs` once, not counted, so that no way is the first to run in this process and on the server's caches. A drain
// that has not ended after 10 minutes stops the script.
//
//   node bench/design/row-ceiling.mjs [--rounds 4] [--jobs 60000] [--connections 2] [--batch 200]
//
// Prints per way, medians (min–max) of the rounds: drained jobs/s; the machine's CPU per job (every process,
// /proc/stat, Linux only: "—" elsewhere) and, of it, this process's (the loop's or the worker's, process.cpuUsage);
// the WAL per job (pg_current_wal_lsn, from after a CHECKPOINT).
import { Logger, makeWorkerUtils, run as runGraphile } from 'graphile-worker';
import pg from 'pg';
import { machineBusy, machineTicks } from '../harness/util.mjs';
import { GRAPHILE, PGQUEUE } from '../settings.mjs';
import { describeServer, inSchema, intArg, spread, sql, table, url } from './common.mjs';

const ROUNDS = intArg('rounds', 4);
const JOBS = intArg('jobs', 60_000);
const CONNECTIONS = intArg('connections', 2);
const BATCH = intArg('batch', 200);
const WORK = { ...PGQUEUE.work, batchSize: BATCH };
/** How long one drain may take before the script gives up on it. */
const DEADLINE_MS = 10 * 60_000;

/**
 * Claims and completes on `CONNECTIONS` connections from `connect` until a claim comes back empty on each. `complete`
 * is a statement whose only parameter is the claimed ids, or a function of the claimed rows that returns one with its
 * values. Returns the drain, to be run once.
 */
async function rawLoop(connect, claim, complete) {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => connect()));
  const completion =
    typeof complete === 'function' ? complete : (rows) => ({ ...complete, values: [`{${rows.map((r) => r.id).join(',')}}`] });
  return () =>
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

/** A connection as the bench's raw-SQL loop has one: no session settings of the engine's. Closed with its schema. */
function plain(opened) {
  return async () => {
    const c = new pg.Client(url);
    await c.connect();
    opened.push(c);
    return c;
  };
}

const WAYS = {
  async 'raw, narrow row'({ S, admin, opened }, jobs) {
    await admin.query(`CREATE TABLE ${S}.raw_jobs (
      id bigserial PRIMARY KEY, queue text NOT NULL, state smallint NOT NULL DEFAULT 0, data jsonb,
      created_on timestamptz NOT NULL DEFAULT now(), started_on timestamptz, completed_on timestamptz);
    CREATE INDEX raw_jobs_ready ON ${S}.raw_jobs (queue, id) WHERE state = 0`);
    await admin.query(`INSERT INTO ${S}.raw_jobs (queue, data) SELECT 'd', jsonb_build_object('i', g) FROM generate_series(1, ${jobs}) g`);
    const run = await rawLoop(
      plain(opened),
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
  async "raw, pgqueue's row"({ q, S, session }, jobs) {
    await fill(q, jobs);
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
  async "raw, engine's statements"({ q, S, session, statementsFor }, jobs) {
    await fill(q, jobs);
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
  async engine({ q, S }, jobs) {
    await fill(q, jobs);
    const run = async () => {
      let handled = 0;
      let done;
      const all = new Promise((resolve) => (done = resolve));
      const id = await q.work('d', WORK, async () => {
        if (++handled === jobs) done();
      });
      await within(all, () => `engine: ${handled} of ${jobs} jobs handled after ${DEADLINE_MS / 1000} s`);
      return id;
    };
    return { run, left: `SELECT count(*)::int AS n FROM ${S}.jobs WHERE state <> 'completed'`, stop: (id) => q.offWork(id) };
  },
  async 'Graphile Worker'({ schema, admin, cleanups }, jobs) {
    const gw = `${schema}_graphile`;
    cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS "${gw}" CASCADE`));
    const utils = await makeWorkerUtils({ connectionString: url, schema: gw, logger: quietGraphile });
    cleanups.push(() => utils.release());
    await utils.migrate();
    for (let i = 0; i < jobs; i += 1000)
      await utils.addJobs(Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ identifier: 'd', payload: { i: i + k } })));
    const run = async () => {
      let handled = 0;
      let done;
      const all = new Promise((resolve) => (done = resolve));
      const runner = await runGraphile({
        noHandleSignals: true,
        logger: quietGraphile,
        taskList: {
          d: async () => {
            if (++handled === jobs) done();
          },
        },
        preset: { worker: { connectionString: url, schema: gw, ...GRAPHILE.worker } },
      });
      cleanups.push(() => runner.stop());
      await within(all, () => `Graphile Worker: ${handled} of ${jobs} jobs handled after ${DEADLINE_MS / 1000} s`);
    };
    // it deletes a job as it completes: what is left is what is not done
    return { run, left: `SELECT count(*)::int AS n FROM "${gw}"._private_jobs` };
  },
};

/** Graphile Worker's errors and warnings to stderr, its other lines nowhere. */
const quietGraphile = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`[graphile-worker] ${level}: ${message}`);
});

/** `promise`, or an error (`what()`) once DEADLINE_MS have passed. */
async function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), DEADLINE_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function fill(q, jobs) {
  for (let i = 0; i < jobs; i += 1000)
    await q.insert(
      'd',
      Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ data: { i: i + k } })),
    );
}

async function drain(way, jobs) {
  return inSchema('row_ceiling', async (ctx) => {
    const opened = [];
    const cleanups = [];
    try {
      await ctx.q.createQueue('d');
      const { run, left, stop } = await WAYS[way]({ ...ctx, opened, cleanups }, jobs);
      const { admin } = ctx;
      await admin.query('CHECKPOINT');
      const lsn = (await admin.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
      const [m0, u0, t0] = [machineTicks(), process.cpuUsage(), performance.now()];
      const ran = await within(run(), () => `${way}: not drained after ${DEADLINE_MS / 1000} s`);
      // the engine's last completions may still be in flight when its last handler returns
      while ((await admin.query(left)).rows[0].n !== 0) {
        if (performance.now() - t0 > DEADLINE_MS) throw new Error(`${way}: jobs left after ${DEADLINE_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const ms = performance.now() - t0;
      const [busy, u] = [machineBusy(m0, machineTicks()), process.cpuUsage(u0)];
      const { b } = (await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS b', [lsn])).rows[0];
      await stop?.(ran);
      return {
        rate: jobs / (ms / 1000),
        cpu: busy === null ? null : (busy * ms * 1000) / jobs,
        node: (u.user + u.system) / jobs,
        wal: b / jobs,
      };
    } finally {
      for (const c of opened) await c.end().catch(() => undefined);
      // the last first: Graphile Worker's runner, then its utilities, then its schema
      for (const clean of cleanups.reverse()) await clean().catch((err) => console.error(`cleaning up after ${way}: ${err.message}`));
    }
  });
}

const names = Object.keys(WAYS);
for (const way of names) {
  await drain(way, Math.max(1, Math.floor(JOBS / 10)));
  console.error(`warm-up: ${way} done`);
}
const results = Object.fromEntries(names.map((w) => [w, []]));
for (let r = 0; r < ROUNDS; r++)
  for (let k = 0; k < names.length; k++) {
    const way = names[(k + r) % names.length];
    results[way].push(await drain(way, JOBS));
    console.error(`round ${r + 1}/${ROUNDS}: ${way} done`);
  }
const machine = await inSchema('row_ceiling_machine', ({ admin }) => describeServer(admin));
console.log(
  `${machine}\n\n${JOBS} jobs, ${ROUNDS} interleaved rounds after a warm-up; raw loops on ${CONNECTIONS} connections, batch ${BATCH}; the engine at concurrency ${WORK.concurrency}, batch ${BATCH}\n`,
);
const column = (rs, key, digits) =>
  rs.some((x) => x[key] === null)
    ? '—'
    : spread(
        rs.map((x) => x[key]),
        digits,
      );
table(
  ['way', 'drained jobs/s', 'machine CPU µs per job', 'of which this process', 'WAL bytes per job'],
  Object.entries(results).map(([way, rs]) => [
    way,
    column(rs, 'rate', 0),
    column(rs, 'cpu', 1),
    column(rs, 'node', 1),
    column(rs, 'wal', 0),
  ]),
);
