import { PgQueue } from '../../lib/core/pg-queue.js';
import { quotedSchema } from '../../lib/core/config.js';
import { LATEST_VERSION, migrate } from '../../lib/core/migrate.js';
import { dropSchema, recordingLogger, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const logger = recordingLogger();

const admin = testPool();
const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(admin, s);
  await admin.end();
});

describe('migrations', () => {
  it('five instances starting at once on an empty database install one schema, without error', async () => {
    const schema = uniqueSchema('race');
    schemas.push(schema);
    const instances = Array.from({ length: 5 }, () => new PgQueue({ connectionString: testUrl(), schema, logger }));
    const results = await Promise.allSettled(instances.map((q) => q.start()));
    await Promise.all(instances.map((q) => q.close()));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);

    const installed = instances.filter((q) => q.migration!.from === 0 && q.migration!.to === LATEST_VERSION);
    expect(installed).toHaveLength(1);
    expect(instances.filter((q) => q.migration!.from === LATEST_VERSION)).toHaveLength(4);
    const { rows } = await admin.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
  });

  it('a second start finds the version recorded and changes nothing', async () => {
    const schema = uniqueSchema('again');
    schemas.push(schema);
    const first = new PgQueue({ connectionString: testUrl(), schema, logger });
    await first.start();
    await first.createQueue('kept');
    await first.close();
    const second = new PgQueue({ connectionString: testUrl(), schema, logger });
    await second.start();
    expect(second.migration).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
    expect(await second.getQueue('kept')).not.toBeNull();
    await second.close();
  });

  it('with migrate: false nothing is installed, and a start on a schema older than the code is refused', async () => {
    const schema = uniqueSchema('nomig');
    const q = new PgQueue({ connectionString: testUrl(), schema, migrate: false, logger });
    await expect(q.start()).rejects.toMatchObject({
      code: 'SCHEMA_OUTDATED',
      message: expect.stringContaining(`schema ${schema} is at version 0 and this code needs version ${LATEST_VERSION}`),
    });
    await q.close();
    const { rows } = await admin.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]);
    expect(rows).toHaveLength(0);

    // installed by someone else, then one version taken back: refused; at the newest version: it starts
    const installer = new PgQueue({ connectionString: testUrl(), schema, logger });
    await installer.start();
    await installer.close();
    await admin.query(`DELETE FROM "${schema}".migrations WHERE version = $1`, [LATEST_VERSION]);
    const behind = new PgQueue({ connectionString: testUrl(), schema, migrate: false, logger });
    await expect(behind.start()).rejects.toMatchObject({ code: 'SCHEMA_OUTDATED' });
    await behind.close();
    await admin.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, 'back')`, [LATEST_VERSION]);
    const current = new PgQueue({ connectionString: testUrl(), schema, migrate: false, logger });
    await current.start();
    expect(await current.send('anything.missing', {}).catch((e: Error) => e.name)).toBe('QueueNotFoundError');
    await current.close();
    await dropSchema(admin, schema);
  });

  describe('a lock another session holds', () => {
    /** A schema installed and then taken back to the version before the newest, whose upgrade indexes job_deps. */
    async function oneBehind(): Promise<string> {
      const schema = uniqueSchema('locked');
      schemas.push(schema);
      const installer = new PgQueue({ connectionString: testUrl(), schema, logger });
      await installer.start();
      await installer.close();
      await admin.query(`DROP TABLE "${schema}".subscriptions; DROP INDEX "${schema}".job_deps_child_idx`);
      await admin.query(`DELETE FROM "${schema}".migrations WHERE version = $1`, [LATEST_VERSION]);
      return schema;
    }

    /** A transaction that holds what a flow insert holds on job_deps (ROW EXCLUSIVE), which CREATE INDEX waits for. */
    async function holdJobDeps(schema: string) {
      const client = await admin.connect();
      await client.query('BEGIN');
      await client.query(`LOCK TABLE "${schema}".job_deps IN ROW EXCLUSIVE MODE`);
      return {
        end: async () => {
          await client.query('COMMIT');
          client.release();
        },
      };
    }

    const versionOf = async (schema: string) =>
      (await admin.query<{ v: number }>(`SELECT max(version)::int AS v FROM "${schema}".migrations`)).rows[0]!.v;

    it('the migration gives the lock up, warns, and tries again until it is free', async () => {
      const schema = await oneBehind();
      const holder = await holdJobDeps(schema);
      const log = recordingLogger();
      const done = migrate(admin, schema, quotedSchema(schema), log, { lockTimeoutMs: 100, attempts: 1000, retryDelayMs: 50 });
      await until(() => log.lines.filter((l) => l.level === 'warn').length >= 2, 'two tries gave the lock up');
      expect(log.lines.find((l) => l.level === 'warn')!.message).toMatch(
        new RegExp(
          `^schema ${schema}: the migration waited more than 100 ms for a lock another session holds on its tables and was rolled back; try 2 of 1000 in 50 ms$`,
        ),
      );
      // between tries it holds nothing: the holder's session goes on, and nothing of the upgrade is there yet
      await admin.query(`INSERT INTO "${schema}".job_deps SELECT * FROM "${schema}".job_deps WHERE false`);
      expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
      await holder.end();
      expect(await done).toEqual({ from: LATEST_VERSION - 1, to: LATEST_VERSION });
      expect(await versionOf(schema)).toBe(LATEST_VERSION);
    });

    it('after the last try the start fails with MIGRATION_LOCK_TIMEOUT, and nothing is changed', async () => {
      const schema = await oneBehind();
      const holder = await holdJobDeps(schema);
      try {
        const log = recordingLogger();
        await expect(
          migrate(admin, schema, quotedSchema(schema), log, { lockTimeoutMs: 100, attempts: 2, retryDelayMs: 10 }),
        ).rejects.toMatchObject({
          name: 'QueueError',
          code: 'MIGRATION_LOCK_TIMEOUT',
          message: expect.stringContaining(
            `schema ${schema}: the migration waited more than 100 ms for a lock another session holds on its tables, 2 times; nothing was changed.`,
          ),
        });
        expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
        expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
        expect((await admin.query(`SELECT to_regclass('"${schema}".subscriptions') AS t`)).rows[0].t).toBeNull();
      } finally {
        await holder.end();
      }
    });
  });
});
