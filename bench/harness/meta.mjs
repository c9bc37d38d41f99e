// What a report's header says about its run: the command, the code measured, the date and the machine. Shared
// by bench/run.mjs and bench/cost.mjs so that their headers read alike.
import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printable } from './postgres.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Which pgqueue was measured: the commit, and whether lib/ or schema/ had uncommitted changes. */
export function measuredCode() {
  try {
    const git = (...a) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'lib', 'schema') !== '';
    return `commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ', with uncommitted changes in lib/ or schema/' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/**
 * The command as the user typed it, with the server's URL masked: `npm run <script>` when npm ran that script,
 * else `node <file>`.
 */
export function commandLine(argv, { script, file }) {
  const env = process.env.DATABASE_URL ? `DATABASE_URL=${printable(process.env.DATABASE_URL)} ` : '';
  const quoted = argv.map((a) => (/^[\w,./=-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');
  if (process.env.npm_lifecycle_event === script) return `${env}npm run ${script}${quoted ? ` -- ${quoted}` : ''}`;
  return `${env}node ${file}${quoted ? ` ${quoted}` : ''}`;
}

/** The report's date: minutes, UTC. */
export const reportDate = () => new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

/** The machine's line: cores, CPU, memory, kernel. */
export function machineLine() {
  const cpu = cpus();
  return `${cpu.length} cores, ${cpu[0]?.model?.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB memory, Linux ${release()}`;
}

/** The server's line: version, where it came from, and the settings (from Databases.facts()). */
export function serverLine(facts, server) {
  const settings = Object.entries(facts.settings)
    .map(([k, v]) => `${k} ${v === '' ? "''" : v}`)
    .join(', ');
  return `PostgreSQL ${facts.version} (${server.source}): ${settings}; on loopback`;
}

/** How a report says its repetitions were run. */
export function repetitionsText(reps) {
  return reps > 1
    ? `${reps} repetitions, interleaved (every system once, then again); each figure is the median (min–max) over them`
    : 'One repetition';
}
