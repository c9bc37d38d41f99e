// Comparing builds of the engine (bench/drain-cpu.mjs, bench/wake-chain.mjs): each run in a child process and a
// schema of its own, the builds interleaved, each round in the other order so that a run's place in the round
// favours no build.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** The builds' dist folders named by `--dist a,b` (default: this checkout's dist). */
export function distsOf(arg) {
  return String(arg ?? 'dist')
    .split(',')
    .map((d) => resolve(process.cwd(), d.trim()));
}

/**
 * Runs `script` once per build and round, as a child that finds `{ dist, ...payload }` in the environment variable
 * `envVar` and prints one JSON line last. Returns each build's parsed lines, in round order.
 */
export function runInterleaved({ script, envVar, dists, rounds, payload }) {
  const results = new Map(dists.map((d) => [d, []]));
  for (let round = 0; round < rounds; round++) {
    for (const dist of round % 2 === 0 ? dists : [...dists].reverse()) {
      const run = spawnSync(process.execPath, [script], {
        env: { ...process.env, [envVar]: JSON.stringify({ dist, ...payload }) },
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(`the run of ${dist} failed:\n${run.stderr}`);
      results.get(dist).push(JSON.parse(run.stdout.trim().split('\n').pop()));
      process.stderr.write(`round ${round + 1}/${rounds}: ${dist} done\n`);
    }
  }
  return results;
}

/**
 * A child's engine from build `dist`, on a schema of its own; `end()` closes it and drops the schema. A build named
 * `dist+pgbouncer` connects its pool through the PgBouncer that startPoolerFor() started, and its LISTEN straight to
 * `url` (the `listen` option).
 */
export async function childEngine(build, url, prefix) {
  // a folder may hold a '+' of its own: only the known suffix is a variant
  const pooled = build.endsWith('+pgbouncer');
  const dist = pooled ? build.slice(0, -'+pgbouncer'.length) : build;
  const through = pooled ? process.env.PGQUEUE_BENCH_PGBOUNCER_URL : null;
  if (pooled && !through) throw new Error('a +pgbouncer build runs under startPoolerFor()');
  const { PgQueue } = await import(`${dist}/lib/core/index.js`);
  const schema = `${prefix}_${process.pid}`;
  const q = new PgQueue({
    connectionString: through ?? url,
    ...(through ? { listen: { connectionString: url } } : {}),
    schema,
    supervise: false,
    logger: { log() {}, warn() {}, error: (m) => console.error(m) },
  });
  const end = async () => {
    await q.close();
    await dropChildSchema(url, schema);
  };
  return { q, end };
}

/** Drops a child's schema (`schema`: a name the child made from its pid, never user input) on its own connection. */
export async function dropChildSchema(url, schema) {
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}

/**
 * When a build of `builds` is named `…+pgbouncer`: starts a PgBouncer in transaction mode in front of `url`
 * (test/helpers/pgbouncer.js) and tells the children where it is. Returns a stop function (a no-op otherwise).
 */
export async function startPoolerFor(builds, url) {
  if (!builds.some((b) => b.endsWith('+pgbouncer'))) return async () => undefined;
  const { startPgBouncer } = await import('../../test/helpers/pgbouncer.js');
  const bouncer = await startPgBouncer(url);
  process.env.PGQUEUE_BENCH_PGBOUNCER_URL = bouncer.url;
  return () => bouncer.stop();
}
