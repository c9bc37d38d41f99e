// The pgqueue command as a user runs it: the built bin (dist/lib/cli/main.js) in a child process, against PostgreSQL,
// each command checked by what it printed, its exit code, and what the database holds after it.
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LATEST_VERSION } from '../../lib/core/runtime/migrate.js';
import { PgQueue } from '../../lib/core/pg-queue.js';
import type { JobWithMetadata } from '../../lib/core/types.js';
import { migrationScript } from '../../lib/core/sql/migrate.js';
import { MIGRATIONS } from '../../schema/migrations/index.js';
import { dropSchema, recordingLogger, stateCounts, testPool, testUrl, uniqueSchema } from '../helpers/db.js';
import { freePort } from '../helpers/embedded-postgres.js';

const main = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL'));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `pgqueue ...args` to its end, with DATABASE_URL as given (unset by default). */
function pgqueue(args: string[], databaseUrl?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [main, ...args],
      { env: databaseUrl ? { ...env, DATABASE_URL: databaseUrl } : env, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') reject(new Error(`pgqueue ${args.join(' ')} did not end: ${err.message}`));
        else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

const admin = testPool();
const schemas: string[] = [];
const engines: PgQueue[] = [];
const logger = recordingLogger();

/** A schema of the test's own, dropped after the file. */
function schemaFor(prefix: string): string {
  const schema = uniqueSchema(`cli_${prefix}`);
  schemas.push(schema);
  return schema;
}

/** An engine on `schema` (installed by it) for the test to set jobs up with; closed after the test. */
async function engine(schema: string): Promise<PgQueue> {
  const q = new PgQueue({ connectionString: testUrl(), schema, supervise: false, poolSize: 3, logger });
  engines.push(q);
  await q.start();
  return q;
}

/** Fails `n` new jobs of `queue` (no retries left), with `message`; returns their ids. */
async function failedJobs(q: PgQueue, queue: string, n: number, message = 'smtp refused'): Promise<string[]> {
  await q.insert(
    queue,
    Array.from({ length: n }, (_, i) => ({ data: { i }, retryLimit: 0 })),
  );
  const ids = (await q.fetch(queue, { batchSize: n })).map((j) => j.id);
  expect(ids).toHaveLength(n);
  await q.fail(queue, ids, new Error(message));
  return ids;
}

const on = (schema: string) => ['--url', testUrl(), '--schema', schema];

afterEach(async () => {
  await Promise.all(engines.splice(0).map((q) => q.close()));
});
afterAll(async () => {
  for (const s of schemas) await dropSchema(admin, s);
  await admin.end();
});

describe('pgqueue migrate', () => {
  it('installs the tables, then finds nothing to do; DATABASE_URL is the default URL', async () => {
    const schema = schemaFor('mig');
    const first = await pgqueue(['migrate', '--schema', schema], testUrl());
    expect(first).toEqual({ code: 0, stdout: `schema "${schema}" migrated from version 0 to ${LATEST_VERSION}\n`, stderr: '' });
    const again = await pgqueue(['migrate', ...on(schema), '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ schema, from: LATEST_VERSION, to: LATEST_VERSION });
    const q = await engine(schema);
    expect(q.migration).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
  });

  it('--print without a database writes the whole script, which applied by hand leaves the engine nothing to do', async () => {
    const schema = schemaFor('print');
    const printed = await pgqueue(['migrate', '--print', '--schema', schema]);
    expect(printed.code).toBe(0);
    expect(printed.stderr).toBe('');
    // the script runs as psql would send it: one simple query, several statements
    await admin.query(printed.stdout);
    const { rows } = await admin.query<{ version: number }>(`SELECT version FROM "${schema}".migrations ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    const q = await engine(schema);
    expect(q.migration).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
    await q.createQueue('printed.works');
    expect(await q.send('printed.works', { ok: true })).toMatch(/^\d+$/);

    // on the installed schema, the script for its version is a comment, and the one from 0 changes nothing
    const nothing = await pgqueue(['migrate', '--print', ...on(schema)]);
    expect(nothing.stdout).toBe(`-- schema "${schema}" is at version ${LATEST_VERSION}: nothing to apply (newest: ${LATEST_VERSION})\n`);
    await expect(admin.query(printed.stdout)).rejects.toThrow(
      `schema ${schema} is at version ${LATEST_VERSION}; this script upgrades it from version 0`,
    );
    expect((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".migrations`)).rows[0].n).toBe(LATEST_VERSION);
  });

  it('--print with a database upgrades from the version it holds; --from writes from the version given', async () => {
    const schema = schemaFor('upgrade');
    const held = LATEST_VERSION - 3;
    // a schema as an older release left it: the first migrations, each recorded
    const older = MIGRATIONS.filter((m) => m.version <= held).map((m) => ({ version: m.version, name: m.name, sql: m.up(`"${schema}"`) }));
    await admin.query(migrationScript(schema, `"${schema}"`, 0, older, '-- an older release'));

    const behind = await pgqueue(['queues', ...on(schema)]);
    expect(behind.code).toBe(1);
    expect(behind.stderr).toBe(
      `pgqueue: schema "${schema}" is at version ${held}, and this pgqueue needs version ${LATEST_VERSION}: upgrade it with \`pgqueue migrate\`\n`,
    );

    const printed = await pgqueue(['migrate', '--print', '--schema', schema], testUrl());
    expect(printed.stdout).toContain(`from version ${held} to ${LATEST_VERSION}`);
    // with --from, DATABASE_URL is not even read: here it names no server
    const closed = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const fromGiven = await pgqueue(['migrate', '--print', '--schema', schema, '--from', String(held)], closed);
    expect(fromGiven).toEqual({ code: 0, stdout: printed.stdout, stderr: '' });
    await admin.query(printed.stdout);
    const q = await engine(schema);
    expect(q.migration).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
  });
});

describe('pgqueue queues', () => {
  it('lists every queue with its counts taken now, or with --cached those of the last count', async () => {
    const schema = schemaFor('queues');
    const q = await engine(schema);
    await q.createQueue('mail.send');
    await q.createQueue('mail.bounce', { policy: 'singleton' });
    await failedJobs(q, 'mail.send', 1);
    await q.insert('mail.send', [{ data: 1 }, { data: 2 }, { data: 3 }, { data: 4 }]);
    await q.fetch('mail.send', { batchSize: 1 });
    await q.pauseQueue('mail.bounce');

    // never counted yet: the cache holds zeros
    const cached = await pgqueue(['queues', ...on(schema), '--cached', '--json']);
    expect(cached.code).toBe(0);
    const before = JSON.parse(cached.stdout) as { name: string; totalCount: number; countedOn: string | null }[];
    expect(before.map((r) => [r.name, r.totalCount, r.countedOn])).toEqual([
      ['mail.bounce', 0, null],
      ['mail.send', 0, null],
    ]);

    const now = await pgqueue(['queues', ...on(schema), '--json']);
    const counted = JSON.parse(now.stdout) as Record<string, unknown>[];
    expect(counted.find((r) => r.name === 'mail.send')).toMatchObject({
      policy: 'standard',
      queuedCount: 3,
      readyCount: 3,
      activeCount: 1,
      failedCount: 1,
      totalCount: 5,
      paused: false,
    });
    expect(counted.find((r) => r.name === 'mail.bounce')).toMatchObject({ policy: 'singleton', totalCount: 0, paused: true });
    expect((await q.getQueue('mail.send'))!.totalCount).toBe(5);

    const table = await pgqueue(['queues', ...on(schema), '--cached']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^queue\s+policy\s+queued\s+ready\s+deferred\s+blocked\s+active\s+failed\s+total\s+oldest ready\s+paused\s+counted$/,
    );
    expect(lines[1]).toMatch(/^mail\.bounce\s+singleton\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+-\s+yes\s+\d{4}-\d\d-\d\d /);
    expect(lines[2]).toMatch(/^mail\.send\s+standard\s+3\s+3\s+0\s+0\s+1\s+1\s+5\s+\S+\s+no\s+\d{4}-\d\d-\d\d /);
    // the command registered nothing that outlives it
    expect((await q.getWorkers()).map((w) => w.pid)).toEqual([process.pid]);
  });

  it('works on a schema newer than the package, with a warning; migrate leaves it as it is', async () => {
    const schema = schemaFor('newer');
    const q = await engine(schema);
    await q.createQueue('from.future');
    await admin.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, 'from_a_later_release')`, [LATEST_VERSION + 1]);
    const warning = `pgqueue: warning: schema ${schema} is at version ${LATEST_VERSION + 1}, newer than this code (${LATEST_VERSION})\n`;
    const listed = await pgqueue(['queues', ...on(schema), '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe(warning);
    expect(JSON.parse(listed.stdout).map((r: { name: string }) => r.name)).toEqual(['from.future']);
    const migrated = await pgqueue(['migrate', ...on(schema)]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toBe(`schema "${schema}" is at version ${LATEST_VERSION + 1}: nothing to do\n`);
    expect(migrated.stderr).toContain(`newer than this code (${LATEST_VERSION})`);
  });

  it('says so when the schema holds no tables (exit 1), and installs nothing', async () => {
    const schema = schemaFor('none');
    const ran = await pgqueue(['queues', ...on(schema)]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      `pgqueue: schema "${schema}" holds no pgqueue tables: install them with \`pgqueue migrate\` (or print their SQL with \`pgqueue migrate --print\`)\n`,
    );
    expect((await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rows).toHaveLength(0);
  });
});

describe('pgqueue jobs', () => {
  it('lists the failed jobs, newest first, with their last error; --limit and --after page through them', async () => {
    const schema = schemaFor('jobs');
    const q = await engine(schema);
    await q.createQueue('img.resize');
    const failed = await failedJobs(q, 'img.resize', 5, 'out of memory\n  at resize');
    await q.send('img.resize', { other: true });

    const table = await pgqueue(['jobs', 'img.resize', '--state', 'failed', ...on(schema)]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s*id\s+state\s+retries\s+created\s+finished\s+last error$/);
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/)[0])).toEqual([...failed].reverse());
    expect(lines[1]).toMatch(
      /failed\s+0\/0\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+out of memory at resize$/,
    );

    const first = await pgqueue(['jobs', 'img.resize', '--state', 'failed', '--limit', '3', '--json', ...on(schema)]);
    const page = JSON.parse(first.stdout) as { jobs: { id: string; state: string; lastError: { message: string } }[]; next: string };
    expect(page.jobs.map((j) => j.id)).toEqual(failed.slice(2).reverse());
    expect(page.jobs.every((j) => j.state === 'failed' && j.lastError.message.startsWith('out of memory'))).toBe(true);
    expect(page.next).toBe(failed[2]);
    const rest = JSON.parse(
      (await pgqueue(['jobs', 'img.resize', '--state', 'failed', '--after', page.next, '--json', ...on(schema)])).stdout,
    );
    expect(rest).toMatchObject({ next: null });
    expect(rest.jobs.map((j: { id: string }) => j.id)).toEqual(failed.slice(0, 2).reverse());

    const all = JSON.parse((await pgqueue(['jobs', 'img.resize', '--json', ...on(schema)])).stdout);
    expect(all.jobs).toHaveLength(6);
  });

  it('an error message holding terminal escapes is shown escaped, not obeyed; --json gives it as it is', async () => {
    const schema = schemaFor('esc');
    const q = await engine(schema);
    await q.createQueue('esc');
    const message = 'pwned\x1b[2J\x1b]52;c;aGk=\x07\rfake \u202etxt.exe';
    const [id] = await failedJobs(q, 'esc', 1, message);

    const table = await pgqueue(['jobs', 'esc', ...on(schema)]);
    expect(table.code).toBe(0);
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal but the line breaks
    expect(table.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
    // the carriage return is a blank, as a line break is: the message goes on one line
    expect(table.stdout).toContain('pwned\\x1b[2J\\x1b]52;c;aGk=\\x07 fake \\u202etxt.exe');
    const json = JSON.parse((await pgqueue(['jobs', 'esc', '--json', ...on(schema)])).stdout) as { jobs: JobWithMetadata[] };
    expect(json.jobs.map((j) => [j.id, j.lastError?.message])).toEqual([[id, message]]);
  });

  it('a reader that stops early (| head) is no failure: the command ends with 0 and says nothing', async () => {
    const schema = schemaFor('head');
    const q = await engine(schema);
    await q.createQueue('big.list');
    await q.insert(
      'big.list',
      Array.from({ length: 3000 }, (_, i) => ({ data: { i, text: 'x'.repeat(500) } })),
    );
    const child = spawn(process.execPath, [main, 'jobs', 'big.list', '--limit', '3000', '--json', ...on(schema)], { env });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // the first chunk read, the reader goes away with megabytes still to write
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('a queue that does not exist: exit 1 and the engine’s message', async () => {
    const schema = schemaFor('nojobs');
    await engine(schema);
    const ran = await pgqueue(['jobs', 'no.such', ...on(schema)]);
    expect(ran).toEqual({ code: 1, stdout: '', stderr: 'pgqueue: queue "no.such" does not exist\n' });
  });
});

describe('pgqueue retry', () => {
  it('--failed puts every failed job back, in batches, and says how many', async () => {
    const schema = schemaFor('retry');
    const q = await engine(schema);
    await q.createQueue('pay.charge');
    await failedJobs(q, 'pay.charge', 1200);
    await q.createQueue('pay.other');
    await failedJobs(q, 'pay.other', 2);

    const ran = await pgqueue(['retry', 'pay.charge', '--failed', ...on(schema)]);
    expect(ran).toEqual({ code: 0, stdout: 'retried 1200 jobs of queue "pay.charge"\n', stderr: '' });
    expect(await stateCounts(admin, schema, 'pay.charge')).toEqual({ retry: 1200 });
    expect(await stateCounts(admin, schema, 'pay.other')).toEqual({ failed: 2 });
  });

  it('--failed --limit retries that many, the newest; --json reports the counts', async () => {
    const schema = schemaFor('limit');
    const q = await engine(schema);
    await q.createQueue('pay.limit');
    const ids = await failedJobs(q, 'pay.limit', 5);
    const ran = await pgqueue(['retry', 'pay.limit', '--failed', '--limit', '3', '--json', ...on(schema)]);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ queue: 'pay.limit', retried: 3, skipped: 0 });
    const { rows } = await admin.query<{ id: string }>(`SELECT id::text FROM "${schema}".jobs WHERE state = 'retry' ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(ids.slice(2));
  });

  it('retries the jobs named by id, all or none: one that is not failed refuses the lot (exit 1)', async () => {
    const schema = schemaFor('ids');
    const q = await engine(schema);
    await q.createQueue('pay.ids');
    const [a, b, c] = await failedJobs(q, 'pay.ids', 3);
    const done = (await q.send('pay.ids', {}))!;
    const refused = await pgqueue(['retry', 'pay.ids', a!, done, ...on(schema)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`pgqueue: job ${done} in queue "pay.ids" is created; this needs a job that is failed\n`);
    expect(await stateCounts(admin, schema, 'pay.ids')).toEqual({ failed: 3, created: 1 });

    const ran = await pgqueue(['retry', 'pay.ids', a!, b!, ...on(schema)]);
    expect(ran).toEqual({ code: 0, stdout: 'retried 2 jobs of queue "pay.ids"\n', stderr: '' });
    const { rows } = await admin.query<{ id: string }>(`SELECT id::text FROM "${schema}".jobs WHERE state = 'failed'`);
    expect(rows.map((r) => r.id)).toEqual([c]);
  });

  it('--failed on a queue that does not exist: exit 1', async () => {
    const schema = schemaFor('retrynone');
    await engine(schema);
    const ran = await pgqueue(['retry', 'no.such', '--failed', ...on(schema)]);
    expect(ran).toEqual({ code: 1, stdout: '', stderr: 'pgqueue: queue "no.such" does not exist\n' });
  });
});

describe('pgqueue pause and resume', () => {
  it("set the queue's paused flag in the database", async () => {
    const schema = schemaFor('pause');
    const q = await engine(schema);
    await q.createQueue('sms.send');
    const paused = async () =>
      (await admin.query(`SELECT paused FROM "${schema}".queues WHERE name = 'sms.send'`)).rows[0].paused as boolean;

    expect(await pgqueue(['pause', 'sms.send', ...on(schema)])).toEqual({ code: 0, stdout: 'queue "sms.send" paused\n', stderr: '' });
    expect(await paused()).toBe(true);
    const resumed = await pgqueue(['resume', 'sms.send', '--json', ...on(schema)]);
    expect(JSON.parse(resumed.stdout)).toEqual({ queue: 'sms.send', paused: false });
    expect(await paused()).toBe(false);

    const missing = await pgqueue(['pause', 'no.such', ...on(schema)]);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'pgqueue: queue "no.such" does not exist\n' });
  });
});

describe('the database out of reach', () => {
  it('no server at the address: one line naming it, exit 3', async () => {
    const url = `postgres://postgres:secret@127.0.0.1:${await freePort()}/postgres`;
    for (const args of [['queues'], ['migrate'], ['migrate', '--print'], ['retry', 'q', '--failed']]) {
      const ran = await pgqueue([...args, '--url', url]);
      expect(ran.code).toBe(3);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(
        /^pgqueue: no PostgreSQL answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\): is it running, and is that its address\?\n$/,
      );
    }
  });

  it('a database that does not exist: one line naming it, exit 3', async () => {
    const url = new URL(testUrl());
    url.pathname = '/pgqueue_cli_no_such_db';
    const ran = await pgqueue(['queues'], url.toString());
    expect(ran.code).toBe(3);
    expect(ran.stderr).toMatch(/^pgqueue: database "pgqueue_cli_no_such_db" does not exist on .*\n$/);
  });
});
