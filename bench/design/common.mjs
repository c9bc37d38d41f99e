// What the scripts of bench/design share: the database they run against, a schema of their own (dropped at the
// end, whatever happens), connections opened as the engine opens its own, timing and a small table.
// Each script reproduces one measurement that docs/design.md cites; run it after `npm run build`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { median, parseArgs, quantile } from '../harness/util.mjs';

if (!existsSync(fileURLToPath(new URL('../../dist/lib/core/index.js', import.meta.url)))) {
  console.error('bench/design runs the built library: run `npm run build` first');
  process.exit(1);
}

const { PgQueue } = await import('../../dist/lib/core/index.js');
const { withEngineSession } = await import('../../dist/lib/core/runtime/db.js');
export const sql = await import('../../dist/lib/core/sql/index.js');

export const args = parseArgs();
export const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export { median, quantile };

/** An integer argument `--name n`, else `fallback`. */
export function intArg(name, fallback) {
  const v = args[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
  return n;
}

const quiet = { log() {}, warn() {}, error: (m) => console.error(m) };

/**
 * Runs `fn(ctx)` with an engine on a schema of its own (`design_<name>_<pid>`), without maintenance passes, and
 * drops the schema afterwards. ctx: `q` the engine, `schema`, `S` the quoted schema, `admin` a plain client,
 * `session()` a new client with the engine's session settings, `statementsFor(queue)` the statements as the
 * engine renders them for that queue's table.
 */
export async function inSchema(name, fn) {
  const schema = `design_${name}_${process.pid}`;
  const S = `"${schema}"`;
  const admin = new pg.Client(url);
  await admin.connect();
  const q = new PgQueue({ connectionString: url, schema, supervise: false, logger: quiet });
  const clients = [];
  try {
    await q.start();
    const session = async () => {
      const c = new pg.Client(withEngineSession(url));
      await c.connect();
      clients.push(c);
      return c;
    };
    const statementsFor = async (queue) => {
      const { rows } = await admin.query(
        `SELECT CASE WHEN partition THEN quote_ident(${S}.queue_partition_name(name)) ELSE 'jobs_default' END AS home FROM ${S}.queues WHERE name = $1`,
        [queue],
      );
      if (rows.length === 0) throw new Error(`no queue ${queue}`);
      return sql.buildStatements(S, `${S}.${rows[0].home}`);
    };
    return await fn({ q, schema, S, admin, session, statementsFor });
  } finally {
    for (const c of clients) await c.end().catch(() => undefined);
    await q.close().catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS ${S} CASCADE`).catch((err) => console.error(`could not drop ${S}: ${err.message}`));
    await admin.end();
  }
}

/** Milliseconds `fn` took (sub-ms resolution). */
export async function timed(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Runs `fn` inside BEGIN … ROLLBACK on `client`, so every repetition sees the same rows; returns its time in ms. */
export async function timedRolledBack(client, fn) {
  await client.query('BEGIN');
  try {
    return await timed(fn);
  } finally {
    await client.query('ROLLBACK');
  }
}

/** The attempts of the `n` newest active jobs of `queue`, as a worker holds them (id, claim count, stamp, holder). */
export async function activeAttempts(admin, S, queue, n) {
  const { rows } = await admin.query(
    `SELECT id::text, claim_count, (extract(epoch FROM started_on) * 1000000)::bigint::text AS stamp, worker_id
     FROM ${S}.jobs WHERE queue = $1 AND state = 'active' ORDER BY id DESC LIMIT $2`,
    [queue, n],
  );
  if (rows.length < n) throw new Error(`${queue}: ${rows.length} active jobs, ${n} wanted`);
  return rows;
}

/** Claims every ready job of `queue` with fetch() (as a caller by hand: one holder for all of them). */
export async function claimAll(q, queue) {
  for (;;) if ((await q.fetch(queue, { batchSize: 1000 })).length === 0) return;
}

/** "median (min–max)" of ms figures. */
export function spread(xs, digits = 2) {
  const f = (x) => x.toFixed(digits);
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

/** Prints a Markdown table. */
export function table(headers, rows) {
  console.log(`| ${headers.join(' | ')} |`);
  console.log(`|${headers.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

/** The machine, for the record: PostgreSQL's version and the settings that move these figures. */
export async function describeServer(admin) {
  const { rows } = await admin.query(
    `SELECT split_part(version(), ' ', 2) AS version, current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync,
       current_setting('shared_buffers') AS buffers`,
  );
  const r = rows[0];
  const os = await import('node:os');
  return `PostgreSQL ${r.version} (synchronous_commit ${r.sync}, fsync ${r.fsync}, shared_buffers ${r.buffers}), Node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`;
}
