// The engine as an earlier commit built it: that commit's lib/ and schema/ taken out of git and compiled with this
// repository's node_modules and TypeScript (the runtime dependencies have not changed since: package.json's
// "dependencies" are compared first). For the rolling-deploy test: the version before the newest migration.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './packed-app.js';

const git = (...args: string[]) =>
  execFileSync('git', ['-C', repoRoot, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The newest migration's file under schema/migrations (its number is the schema's newest version). */
export function newestMigration(): string {
  const files = readdirSync(join(repoRoot, 'schema/migrations')).filter((f) => /^\d{4}_.*\.ts$/.test(f));
  return files.sort().at(-1)!;
}

/**
 * The commit just before the newest migration was added (HEAD while that migration is not committed yet), or why
 * there is none here: not a git checkout, or a shallow one whose history stops after it.
 */
export function commitBeforeNewestMigration(): { commit: string } | { missing: string } {
  try {
    git('rev-parse', '--git-dir');
  } catch {
    return { missing: 'this checkout has no git history' };
  }
  const newest = `schema/migrations/${newestMigration()}`;
  // a migration being written (not committed yet): the release before it is this checkout's HEAD
  try {
    git('cat-file', '-e', `HEAD:${newest}`);
  } catch {
    return { commit: git('rev-parse', 'HEAD') };
  }
  const added = git('log', '--diff-filter=A', '--format=%H', '--', newest).split('\n')[0];
  if (!added) return { missing: `git log does not show when ${newestMigration()} was added (a shallow clone: git fetch --unshallow)` };
  try {
    return { commit: git('rev-parse', `${added}^`) };
  } catch {
    return { missing: `the commit before ${added.slice(0, 7)} is not in this clone (a shallow clone: git fetch --unshallow)` };
  }
}

/** Compiles lib/ and schema/ as they were at `commit` into a temporary folder; `dist` holds the build. */
export function buildAt(commit: string): { dist: string; cleanup(): void } {
  const then = JSON.parse(git('show', `${commit}:package.json`)) as { dependencies: Record<string, string> };
  const now = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  if (JSON.stringify(then.dependencies) !== JSON.stringify(now.dependencies))
    throw new Error(`${commit.slice(0, 7)} has other runtime dependencies than this checkout: it cannot be built with its node_modules`);
  const dir = mkdtempSync(join(tmpdir(), 'pgqueue-previous-'));
  // the tar of lib/ and schema/ passed 1 MB, execFileSync's default buffer, at 5043ebd (ENOBUFS)
  const archive = execFileSync(
    'git',
    ['-C', repoRoot, 'archive', commit, 'lib', 'schema', 'tsconfig.json', 'tsconfig.build.json', 'package.json'],
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  execFileSync('tar', ['x', '-C', dir], { input: archive });
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.build.json')], {
      cwd: dir,
      stdio: 'pipe',
    });
  } catch (err) {
    cleanup();
    throw err;
  }
  return { dist: join(dir, 'dist'), cleanup };
}
