import { PgQueue } from '../../lib/core/pg-queue.js';
import pg from 'pg';
import { quotedSchema } from '../../lib/core/config.js';
import { LATEST_VERSION, migrate } from '../../lib/core/migrate.js';
import * as sql from '../../lib/core/sql/migrate.js';
import { MIGRATIONS } from '../../schema/migrations/index.js';
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
    /** A schema at the version before the newest, installed step by step as migrate() would. */
    async function oneBehind(): Promise<string> {
      const schema = uniqueSchema('locked');
      schemas.push(schema);
      const ident = quotedSchema(schema);
      await admin.query(sql.createSchema(ident));
      await admin.query(sql.createMigrationsTable(ident));
      for (const m of MIGRATIONS.filter((m) => m.version < LATEST_VERSION)) {
        await admin.query(m.up(ident));
        await admin.query(sql.recordMigration(ident), [m.version, m.name]);
      }
      return schema;
    }

    /**
     * A transaction that holds the installer's table, which every try reads first: whatever the newest migration
     * changes, a try waits here. With `advisory`, another session also holds the schema's advisory lock.
     */
    async function hold(schema: string) {
      const client = await admin.connect();
      await client.query('BEGIN');
      await client.query(`LOCK TABLE ${quotedSchema(schema)}.migrations IN ACCESS EXCLUSIVE MODE`);
      return {
        end: async () => {
          await client.query('COMMIT');
          client.release();
        },
      };
    }

    const versionOf = async (schema: string) =>
      (await admin.query<{ v: number }>(`SELECT max(version)::int AS v FROM ${quotedSchema(schema)}.migrations`)).rows[0]!.v;
    /** Lock requests not granted: on the installer's table, and advisory ones (an instance waiting its turn). */
    const waiting = async (schema: string) =>
      (
        await admin.query<{ table: number; advisory: number }>(
          `SELECT count(*) FILTER (WHERE relation = to_regclass($1))::int AS table, count(*) FILTER (WHERE locktype = 'advisory')::int AS advisory
           FROM pg_locks WHERE NOT granted`,
          [`${quotedSchema(schema)}.migrations`],
        )
      ).rows[0]!;
    const warnings = (log: ReturnType<typeof recordingLogger>) => log.lines.filter((l) => l.level === 'warn').map((l) => l.message);

    it('the migration undoes its try, warns, and tries again; an instance beside it waits its turn, in no table queue', async () => {
      const schema = await oneBehind();
      const holder = await hold(schema);
      const [logA, logB] = [recordingLogger(), recordingLogger()];
      const locks = { lockTimeoutMs: 100, attempts: 1000, retryDelayMs: 3000 };
      const first = migrate(admin, schema, quotedSchema(schema), logA, locks);
      await until(() => warnings(logA).length === 1, 'the first try gave the lock up');
      const second = migrate(admin, schema, quotedSchema(schema), logB, locks);
      expect(warnings(logA)[0]).toBe(
        `schema ${schema}: the migration waited more than 100 ms for a lock another session holds on its tables and was undone; try 2 of 1000 in 3000 ms`,
      );
      // in its pause the migration queues for no table; the second instance waits for the advisory lock alone
      await until(async () => (await waiting(schema)).advisory === 1, 'the second instance waits for its turn');
      expect(await waiting(schema)).toEqual({ table: 0, advisory: 1 });
      expect(warnings(logA)).toHaveLength(1);
      await holder.end();
      expect(await first).toEqual({ from: LATEST_VERSION - 1, to: LATEST_VERSION });
      expect(await second).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
      expect(warnings(logB)).toEqual([]);
    });

    it('after the last try it fails with MIGRATION_LOCK_TIMEOUT, and nothing is changed', async () => {
      const schema = await oneBehind();
      const holder = await hold(schema);
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
        expect(warnings(log)).toHaveLength(1);
      } finally {
        await holder.end();
      }
      expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
    });

    it("a role's lock_timeout bounds the tries when stricter, and never the wait for the advisory lock", async () => {
      const schema = await oneBehind();
      const strictUrl = new URL(testUrl());
      strictUrl.searchParams.set('options', '-c lock_timeout=200ms');
      const strict = new pg.Pool({ connectionString: strictUrl.toString() });
      const turn = await admin.connect();
      try {
        await turn.query('BEGIN');
        await turn.query(sql.lockMigrations, [schema]);
        const holder = await hold(schema);
        const log = recordingLogger();
        const done = migrate(strict, schema, quotedSchema(schema), log, { lockTimeoutMs: 5000, attempts: 1000, retryDelayMs: 50 });
        // it has waited for its turn longer than the role allows a lock wait
        await until(
          async () =>
            (
              await admin.query(
                `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND waitstart < clock_timestamp() - interval '600 ms'`,
              )
            ).rowCount === 1,
          'the migration waited its turn past the role lock_timeout',
        );
        await turn.query('COMMIT');
        await until(() => warnings(log).length > 0, 'a try gave the lock up');
        expect(warnings(log)[0]).toMatch(/the migration waited more than 200 ms for a lock/);
        await holder.end();
        expect(await done).toEqual({ from: LATEST_VERSION - 1, to: LATEST_VERSION });
      } finally {
        turn.release();
        await strict.end();
      }
    });

    it('close() during the tries ends them: the start fails with QUEUE_CLOSED and nothing is changed', async () => {
      const schema = await oneBehind();
      const holder = await hold(schema);
      try {
        const log = recordingLogger();
        let stopped = false;
        const done = migrate(
          admin,
          schema,
          quotedSchema(schema),
          log,
          { lockTimeoutMs: 100, attempts: 1000, retryDelayMs: 60_000 },
          () => stopped,
        );
        await until(() => warnings(log).length === 1, 'the first try gave the lock up');
        stopped = true;
        await expect(done).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
      } finally {
        await holder.end();
      }
      expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
    });
  });
});
