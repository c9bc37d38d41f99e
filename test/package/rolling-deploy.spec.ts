// A rolling deploy: the instances of the previous release keep sending and working while the first instance of this
// one migrates the schema they share, and one more instance of the previous release starts after the migration (a
// restart in the middle of the deploy). The previous release is the commit before the newest migration, built from
// git (test/helpers/previous-build.ts). Every job sent by either version is completed, by either, and neither reports
// an error. docs/operations.md ("Upgrades": the compatibility window) says what a migration may do for this to hold.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PgQueue, runtimeOf } from '../../lib/core/pg-queue.js';
import { LATEST_VERSION } from '../../lib/core/runtime/migrate.js';
import { dropSchema, recordingLogger, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { buildAt, commitBeforeNewestMigration } from '../helpers/previous-build.js';

const previous = commitBeforeNewestMigration();
if ('missing' in previous) console.warn(`[tests] the rolling-deploy test is skipped: ${previous.missing}`);
const withHistory = 'commit' in previous ? describe : describe.skip;

interface Report {
  type: string;
  tag: string;
  sent: number;
  handled: number;
  errors: string[];
  warnings: string[];
}

/** An instance of the previous build, forked, with the last thing it reported. */
class PreviousInstance {
  last: Report | null = null;
  private readonly seen = new Map<string, Report>();
  private readonly child: ChildProcess;

  constructor(dist: string, schema: string, tag: string) {
    this.child = fork(fileURLToPath(new URL('../helpers/previous-instance.mjs', import.meta.url)), [], {
      env: { ...process.env, PGQUEUE_DIST: dist, PGQUEUE_SCHEMA: schema, PGQUEUE_URL: testUrl(), PGQUEUE_TAG: tag },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m: Report) => {
      this.last = m;
      this.seen.set(m.type, m);
    });
  }

  /** Waits until it has reported `type` (ready, stopped-sending, closed). */
  reported(type: string, timeoutMs = 30_000): Promise<Report> {
    return until(() => this.seen.get(type), `the previous build's instance to report ${type}`, timeoutMs, 10);
  }

  tell(message: string): void {
    this.child.send(message);
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

withHistory('a rolling deploy across the newest migration', () => {
  const pool = testPool();
  const schema = uniqueSchema('rolling');
  let build: { dist: string; cleanup(): void } | null = null;
  const instances: PreviousInstance[] = [];

  afterAll(async () => {
    for (const instance of instances) instance.kill();
    await dropSchema(pool, schema);
    await pool.end();
    build?.cleanup();
  });

  it('keeps every instance of both versions sending and working, with no job lost and no error', async () => {
    build = buildAt((previous as { commit: string }).commit);
    const schemaVersion = async () =>
      (await pool.query<{ v: number }>(`SELECT max(version)::int AS v FROM "${schema}".migrations`)).rows[0]!.v;

    // the previous release runs alone: it installs the schema as it knows it
    const first = new PreviousInstance(build.dist, schema, 'previous-1');
    instances.push(first);
    await first.reported('ready', 60_000);
    const before = await schemaVersion();
    expect(before).toBe(LATEST_VERSION - 1);
    await until(() => (first.last?.handled ?? 0) >= 20, 'the previous release working its own jobs');

    // the first instance of this release migrates the schema under it
    const logger = recordingLogger();
    const current = new PgQueue({ connectionString: testUrl(), schema, poolSize: 3, logger });
    const errors: string[] = [];
    current.on('error', (err) => errors.push(`${err.context}: ${err.message}`));
    try {
      await current.createQueue('shared');
      expect(runtimeOf(current).migration).toEqual({ from: before, to: LATEST_VERSION });
      const handledBy = new Map<string, number>();
      await current.work('shared', { concurrency: 4, pollingIntervalSeconds: 0.1 }, async (job) => {
        const from = (job.data as { from: string }).from;
        handledBy.set(from, (handledBy.get(from) ?? 0) + 1);
      });
      // an instance of the previous release that starts now finds a schema newer than it knows
      const restarted = new PreviousInstance(build.dist, schema, 'previous-2');
      instances.push(restarted);
      await restarted.reported('ready', 60_000);
      let sentHere = 0;
      const handledAtMigration = first.last!.handled;
      // both versions send and work side by side until each instance has handled jobs after the migration; an
      // error reported by either version ends the test at once, naming it
      const deadline = Date.now() + 30_000;
      const reported = () => [first, restarted].flatMap((i) => (i.last?.errors ?? []).map((e) => `${i.last!.tag}: ${e}`)).concat(errors);
      while (
        (first.last?.handled ?? 0) < handledAtMigration + 20 ||
        (restarted.last?.handled ?? 0) < 20 ||
        [...handledBy.values()].reduce((a, b) => a + b, 0) < 20
      ) {
        if (reported().length > 0 || Date.now() > deadline)
          throw new Error(`both versions did not keep working after the migration; errors: ${JSON.stringify(reported().slice(0, 5))}`);
        await current.send('shared', { from: 'current', n: sentHere });
        sentHere++;
      }
      // jobs sent by the previous release were worked by this one, and this one's by the previous release
      await until(() => (handledBy.get('previous-1') ?? 0) > 0, 'this release working a job the previous one sent');
      for (const instance of [first, restarted]) instance.tell('stop-sending');
      const sent = (await Promise.all([first, restarted].map((i) => i.reported('stopped-sending')))).reduce((a, r) => a + r.sent, sentHere);
      await until(
        async () => (await stateCounts(pool, schema, 'shared')).completed === sent,
        `all ${sent} jobs sent by both versions completed`,
        30_000,
      );
      expect(await stateCounts(pool, schema, 'shared')).toEqual({ completed: sent });
      for (const instance of [first, restarted]) instance.tell('close');
      const closed = await Promise.all([first, restarted].map((i) => i.reported('closed')));
      expect(closed.map((r) => [r.tag, r.errors])).toEqual([
        ['previous-1', []],
        ['previous-2', []],
      ]);
      // the restarted instance was told the schema is newer than it knows, as a warning
      expect(closed[1]!.warnings.join('\n')).toMatch(
        new RegExp(`version ${LATEST_VERSION}, newer than this code \\(${LATEST_VERSION - 1}\\)`),
      );
    } finally {
      await current.close();
    }
    expect(errors).toEqual([]);
    expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  }, 240_000);
});
