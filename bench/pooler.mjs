// Drain through PgBouncer and straight to PostgreSQL: a backlog of `--jobs` jobs worked by 1, 2, 4 and 8 worker
// processes (each `work()` at concurrency 50, batch 200, its pool of `--pool-size` connections), every process
// count and route in turn, interleaved over `--rounds`. Through PgBouncer each instance's pool goes through a
// PgBouncer in transaction mode (started here on a free port, `default_pool_size` `--server-connections`) and its
// LISTEN straight to PostgreSQL (the `listen` option). The clock runs from the processes being told to start until
// the database says every job is completed.
//
//   node bench/pooler.mjs [--jobs 40000] [--rounds 3] [--procs 1,2,4,8] [--pool-size 5] [--server-connections 20]
//
// PostgreSQL: DATABASE_URL (required; PgBouncer runs on this machine: Debian's pgbouncer). Prints a table of
// jobs/s, medians (min–max), and the server connections each route used at most (pg_stat_activity).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPgBouncer } from '../test/helpers/pgbouncer.js';
import { parseArgs, until } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;
const script = fileURLToPath(import.meta.url);

if (process.env.PGQUEUE_POOLER_CHILD) {
  // one worker process: connects, says ready, works on "go", closes on "stop"
  const { schema, connectionString, listen, poolSize } = JSON.parse(process.env.PGQUEUE_POOLER_CHILD);
  const { PgQueue } = await import('../dist/lib/core/index.js');
  const q = new PgQueue({
    connectionString,
    schema,
    poolSize,
    migrate: false,
    supervise: false,
    ...(listen ? { listen: { connectionString: listen } } : {}),
    logger: { log() {}, warn() {}, error: (m) => console.error(`[pooler child] ${m}`) },
  });
  await q.start();
  process.on('message', async (m) => {
    if (m === 'go') await q.work('d', { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 0.5 }, async () => undefined);
    if (m === 'stop') {
      await q.close();
      process.send('closed', () => process.exit(0));
    }
  });
  process.send('ready');
} else {
  if (!url) throw new Error('pooler: set DATABASE_URL');
  const list = (name, fallback) =>
    String(args[name] ?? fallback)
      .split(',')
      .map(Number);
  const jobs = Number(args.jobs ?? 40_000);
  const rounds = Number(args.rounds ?? 3);
  const procsList = list('procs', '1,2,4,8');
  const poolSize = Number(args['pool-size'] ?? 5);
  const serverConnections = Number(args['server-connections'] ?? 20);
  const { PgQueue } = await import('../dist/lib/core/index.js');
  const bouncer = await startPgBouncer(url, { poolSize: serverConnections });
  const admin = new pg.Client(url);
  await admin.connect();
  const results = new Map();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const procs of round % 2 === 0 ? procsList : [...procsList].reverse()) {
        for (const route of round % 2 === 0 ? ['direct', 'pgbouncer'] : ['pgbouncer', 'direct']) {
          const schema = `pooler_${process.pid}_${round}_${procs}_${route}`;
          const owner = new PgQueue({
            connectionString: url,
            schema,
            supervise: false,
            logger: { log() {}, warn() {}, error: console.error },
          });
          await owner.createQueue('d');
          for (let i = 0; i < jobs; i += 5000)
            await owner.insert(
              'd',
              Array.from({ length: Math.min(5000, jobs - i) }, (_, k) => ({ data: { k } })),
            );
          const payload = {
            schema,
            poolSize,
            connectionString: route === 'direct' ? url : bouncer.url,
            listen: route === 'direct' ? null : url,
          };
          const children = Array.from({ length: procs }, () =>
            fork(script, [], { env: { ...process.env, PGQUEUE_POOLER_CHILD: JSON.stringify(payload) } }),
          );
          await Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve))));
          let peak = 0;
          const t0 = performance.now();
          for (const c of children) c.send('go');
          // a drain that does not finish leaves no worker behind
          const killAll = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
          process.once('exit', killAll);
          await until(
            async () => {
              const { rows } = await admin.query(
                `SELECT (SELECT count(*)::int FROM "${schema}".jobs WHERE state <> 'completed') AS left,
                   (SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend') AS backends`,
              );
              peak = Math.max(peak, rows[0].backends);
              return rows[0].left === 0;
            },
            { timeoutMs: 300_000, intervalMs: 20, what: `${jobs} jobs completed (${procs} processes, ${route})` },
          );
          const seconds = (performance.now() - t0) / 1000;
          await Promise.all(children.map((c) => new Promise((resolve) => (c.once('message', resolve), c.send('stop')))));
          process.removeListener('exit', killAll);
          await owner.close();
          await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
          const key = `${procs}|${route}`;
          if (!results.has(key)) results.set(key, { rates: [], peaks: [] });
          results.get(key).rates.push(jobs / seconds);
          results.get(key).peaks.push(peak);
          process.stderr.write(`round ${round + 1}/${rounds}: ${procs} process(es), ${route}: ${Math.round(jobs / seconds)} jobs/s\n`);
        }
      }
    }
  } finally {
    await admin.end();
    await bouncer.stop();
  }
  const spread = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const f = (v) => Math.round(v).toLocaleString('en-US');
    return `${f(s[Math.floor(s.length / 2)])} (${f(s[0])}–${f(s[s.length - 1])})`;
  };
  console.log(
    `${jobs} jobs per drain; each worker process: concurrency 50, batch 200, poolSize ${poolSize}; PgBouncer in transaction mode, default_pool_size ${serverConnections}, LISTEN straight to PostgreSQL; ${rounds} interleaved rounds, medians (min–max)\n`,
  );
  console.log(
    '| worker processes | direct jobs/s | through PgBouncer jobs/s | server connections, direct / through PgBouncer (most seen) |',
  );
  console.log('| ---: | ---: | ---: | ---: |');
  for (const procs of procsList) {
    const d = results.get(`${procs}|direct`);
    const b = results.get(`${procs}|pgbouncer`);
    console.log(`| ${procs} | ${spread(d.rates)} | ${spread(b.rates)} | ${Math.max(...d.peaks)} / ${Math.max(...b.peaks)} |`);
  }
}
