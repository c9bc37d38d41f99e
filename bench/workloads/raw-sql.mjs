// The physical limit of the design on this machine: no library and no handler. A table of its own with a
// partial index on runnable rows; bulk insert with unnest, one statement per chunk; drain by claiming
// with one UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) RETURNING and completing with one
// UPDATE … WHERE id = ANY($1), on `--connections` connections claiming `--batch` rows at a time.
import pg from 'pg';
import { runChild } from '../harness/driver.mjs';

const SETUP = `
CREATE TABLE raw_jobs (
  id bigserial PRIMARY KEY,
  queue text NOT NULL,
  state smallint NOT NULL DEFAULT 0, -- 0 ready, 1 active, 2 completed
  data jsonb,
  created_on timestamptz NOT NULL DEFAULT now(),
  started_on timestamptz,
  completed_on timestamptz
);
CREATE INDEX raw_jobs_ready ON raw_jobs (queue, id) WHERE state = 0;`;

const INSERT = { name: 'raw_insert', text: 'INSERT INTO raw_jobs (queue, data) SELECT $1, d FROM unnest($2::jsonb[]) d' };
// The subquery is the fence: it picks and locks at most $2 rows once, and the UPDATE changes exactly those.
const CLAIM = {
  name: 'raw_claim',
  text: `UPDATE raw_jobs j SET state = 1, started_on = now()
FROM (SELECT id FROM raw_jobs WHERE queue = $1 AND state = 0 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) next
WHERE j.id = next.id
RETURNING j.id, j.data`,
};
const COMPLETE = {
  name: 'raw_complete',
  text: 'UPDATE raw_jobs SET state = 2, completed_on = now() WHERE id = ANY($1::bigint[]) AND state = 1',
};

await runChild({
  name: 'raw-sql',
  async open(ctx) {
    const batch = Number(ctx.args.batch ?? 100);
    const connections = Number(ctx.args.connections ?? 1);
    const pool = new pg.Pool({ connectionString: ctx.url, max: connections + 1 });
    return {
      async setup() {
        await pool.query(SETUP);
      },
      async insert(datas) {
        await pool.query({ ...INSERT, values: [ctx.queue, datas.map((d) => JSON.stringify(d))] });
      },
      async send(data) {
        await pool.query({ ...INSERT, values: [ctx.queue, [JSON.stringify(data)]] });
      },
      async work() {
        throw new Error('raw-sql has no worker; it drains with drainer()');
      },
      async drainer() {
        const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
        return async () => {
          try {
            await Promise.all(
              clients.map(async (client) => {
                for (;;) {
                  const { rows } = await client.query({ ...CLAIM, values: [ctx.queue, batch] });
                  if (rows.length === 0) return;
                  await client.query({ ...COMPLETE, values: [rows.map((r) => r.id)] });
                }
              }),
            );
          } finally {
            for (const c of clients) c.release();
          }
        };
      },
      async pending() {
        const { rows } = await pool.query('SELECT count(*)::int AS n FROM raw_jobs WHERE queue = $1 AND state <> 2', [ctx.queue]);
        return rows[0].n;
      },
      async completed() {
        const { rows } = await pool.query('SELECT count(*)::int AS n FROM raw_jobs WHERE queue = $1 AND state = 2', [ctx.queue]);
        return { n: rows[0].n, how: 'in state 2 (completed)' };
      },
      close: () => pool.end(),
    };
  },
});
