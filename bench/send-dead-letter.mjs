// What a job's own deadLetter costs a send: one job per send(), sequential, plain and with `deadLetter` naming an
// existing queue, in alternating blocks of 100 so that both kinds see the same database; each build in a process
// and a schema of its own, the builds interleaved (harness/builds.mjs). A build that checks the option
// (dead-letter-targets.ts) reads the dead-letter queue's profile once and keeps it: the figures say whether a send
// that names one pays more than that first read, and whether a plain send pays anything.
//
//   node bench/send-dead-letter.mjs [--dist /tmp/before/dist,dist] [--rounds 4] [--sends 2000]
//
// To compare with an earlier commit: git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
// PostgreSQL: DATABASE_URL (required). Prints a table: per build and kind of send, p50 and mean in µs, medians of the
// rounds (min–max).
import { fileURLToPath } from 'node:url';
import { childEngine, distsOf, runInterleaved } from './harness/builds.mjs';
import { median, parseArgs, quantile } from './harness/util.mjs';

const args = parseArgs(process.argv.slice(2));
const url = process.env.DATABASE_URL;
const BLOCK = 100;

if (process.env.PGQUEUE_SEND_DL_CHILD) {
  const { dist, sends } = JSON.parse(process.env.PGQUEUE_SEND_DL_CHILD);
  const { q, end } = await childEngine(dist, url, 'send_dl');
  await q.createQueue('dl.target');
  await q.createQueue('dl.source');
  const kinds = { plain: {}, deadLetter: { deadLetter: 'dl.target' } };
  // warm up both kinds (connections, prepared statements, the kept profiles) before anything is timed
  for (let i = 0; i < 200; i++) await q.send('dl.source', { i }, i % 2 ? kinds.deadLetter : kinds.plain);
  const micros = { plain: [], deadLetter: [] };
  for (let i = 0; i < sends * 2; i++) {
    const kind = Math.floor(i / BLOCK) % 2 ? 'deadLetter' : 'plain';
    const t0 = performance.now();
    await q.send('dl.source', { i }, kinds[kind]);
    micros[kind].push((performance.now() - t0) * 1000);
  }
  await end();
  const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
  console.log(JSON.stringify(Object.fromEntries(Object.entries(micros).map(([k, v]) => [k, { p50: quantile(v, 0.5), mean: mean(v) }]))));
} else {
  if (!url) throw new Error('send-dead-letter: set DATABASE_URL');
  const dists = distsOf(args.dist);
  const rounds = Number(args.rounds ?? 4);
  const sends = Number(args.sends ?? 2000);
  const results = runInterleaved({
    script: fileURLToPath(import.meta.url),
    envVar: 'PGQUEUE_SEND_DL_CHILD',
    dists,
    rounds,
    payload: { sends },
  });
  const cell = (values) => `${median(values).toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
  console.log(`${sends} sends of each kind per run, in alternating blocks of ${BLOCK}; ${rounds} interleaved rounds\n`);
  console.log('| build | plain p50 µs | plain mean µs | deadLetter p50 µs | deadLetter mean µs |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const [dist, runs] of results) {
    const col = (kind, stat) => cell(runs.map((r) => r[kind][stat]));
    console.log(
      `| ${dist} | ${col('plain', 'p50')} | ${col('plain', 'mean')} | ${col('deadLetter', 'p50')} | ${col('deadLetter', 'mean')} |`,
    );
  }
}
