// The README's quick start, built as a new user would: every code block the README marks with
// `<!-- file: <path> -->` is written to that path of a new app, which installs the packed package, compiles with
// the README's tsconfig and runs on a database of its own. Then it is used as the README says: a signup sends the
// typed job, the interceptor logs it, /health answers, and the dashboard opens to the admin token only.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testPool, testUrl, until } from '../helpers/db.js';
import { freePort } from '../helpers/embedded-postgres.js';
import { compileApp, makeApp, repoRoot, runApp, unpackedPackage, type RunningApp } from '../helpers/packed-app.js';

/** The README's file blocks: path → text. */
export function readmeFiles(readme: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const m of readme.matchAll(/<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)```/g)) files[m[1]!] = m[2]!;
  return files;
}

const admin = testPool(1);
const database = `readme_${randomBytes(4).toString('hex')}`;
let pkg: { dir: string; cleanup(): void } | undefined;
let app: string | undefined;
let run: RunningApp | undefined;

afterAll(async () => {
  await run?.stop();
  if (app) rmSync(app, { recursive: true, force: true });
  pkg?.cleanup();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

describe('the README', () => {
  it('builds and runs the quick start app from its own blocks', async () => {
    const files = readmeFiles(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
    expect(Object.keys(files).sort()).toEqual(['src/app.module.ts', 'src/email.ts', 'src/main.ts', 'tsconfig.json']);
    pkg = unpackedPackage();
    app = makeApp(pkg.dir, { type: 'module', compilerOptions: {} }, files);
    compileApp(app);

    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(testUrl());
    url.pathname = `/${database}`;
    const port = await freePort();
    run = runApp(app, 'dist/main.js', { DATABASE_URL: url.toString(), PORT: String(port), ADMIN_TOKEN: 's3cret' });
    const base = `http://127.0.0.1:${port}`;
    const health = await until(
      async () => {
        const res = await fetch(`${base}/health`);
        return res.status === 200 ? ((await res.json()) as { status: string }) : null;
      },
      `the app answers /health (output: ${run.output()})`,
      30_000,
    );
    expect(health.status).toBe('ok');

    const signup = await fetch(`${base}/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"u1"}' });
    expect(signup.status).toBe(201);
    const { jobId } = (await signup.json()) as { jobId: string };
    // the interceptor's line, as the README says
    await until(() => new RegExp(`welcome-email ${jobId} took \\d+ ms`).test(run!.output()), 'the interceptor logs the job');
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT state::text, output FROM pgqueue.jobs WHERE id = $1', [jobId]);
      expect(rows).toEqual([{ state: 'completed', output: { sent: 'u1' } }]);
    } finally {
      await db.end();
    }

    expect((await fetch(`${base}/queues`)).status).toBe(403);
    expect((await fetch(`${base}/queues`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(403);
    const page = await fetch(`${base}/queues`, { headers: { authorization: 'Bearer s3cret' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);

    // SIGTERM drains and ends the process (enableShutdownHooks)
    await run.stop();
    expect(run.output()).not.toMatch(/ERROR/);
  }, 180_000);
});
