// A user's app built against the package as `npm pack` ships it: the tarball unpacked into the app's
// node_modules/nestjs-pgqueue, the package's dependencies and peers linked from this repository's node_modules
// (the versions its lockfile pins), compiled by TypeScript with the app's own tsconfig and run by Node.
// The test command has just built dist/, so the pack runs with --ignore-scripts.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from './db.js';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Packs the package once into a temporary folder and unpacks it; returns the unpacked folder and a cleanup. */
export function unpackedPackage(): { dir: string; cleanup(): void } {
  const tmp = mkdtempSync(join(tmpdir(), 'pgqueue-tarball-'));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const file = (JSON.parse(out) as { filename: string }[])[0]!.filename;
  execFileSync('tar', ['xzf', join(tmp, file), '-C', tmp]);
  return { dir: join(tmp, 'package'), cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

/** How the app is set up: its package.json's `type`, and its tsconfig's compiler options. */
export interface AppSetup {
  type: 'module' | 'commonjs';
  compilerOptions: Record<string, unknown>;
}

/**
 * Writes an app in a new temporary folder: `files` (paths relative to the app, e.g. `src/main.ts`), a package.json
 * of the given type, a tsconfig.json (unless `files` has one) and node_modules with the unpacked package.
 */
export function makeApp(pkg: string, setup: AppSetup, files: Record<string, string>): string {
  const app = mkdtempSync(join(tmpdir(), 'pgqueue-app-'));
  const modules = join(app, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry === 'nestjs-pgqueue') continue;
    symlinkSync(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  cpSync(pkg, join(modules, 'nestjs-pgqueue'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: setup.type }, null, 2));
  if (!files['tsconfig.json'])
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: setup.compilerOptions, include: ['src'] }, null, 2));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    writeFileSync(join(app, path), text);
  }
  return app;
}

/** Compiles the app with its tsconfig; throws with the compiler's messages when it does not compile. */
export function compileApp(app: string): void {
  try {
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', app], { encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`the app in ${app} does not compile:\n${stdout ?? ''}${stderr ?? ''}`, { cause: err });
  }
}

/** A running app: its process, and everything it printed so far. */
export interface RunningApp {
  child: ChildProcess;
  output(): string;
  /** Waits for the process to exit on its own; resolves with its code. */
  exited(timeoutMs?: number): Promise<number>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | null>;
}

/** Runs `node <entry>` in the app's folder with `env` added to this process's environment. */
export function runApp(app: string, entry: string, env: Record<string, string>): RunningApp {
  const child = spawn(process.execPath, [entry], { cwd: app, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  let code: number | null | undefined;
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve((code = c))));
  return {
    child,
    output: () => text,
    exited: async (timeoutMs = 60_000) => {
      await until(() => code !== undefined, `the app exits (output so far: ${text})`, timeoutMs);
      return code ?? -1;
    },
    stop: async () => {
      if (code === undefined) child.kill('SIGTERM');
      return exit;
    },
  };
}
