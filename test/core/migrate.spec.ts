import { PgQueue } from '../../lib/core/pg-queue.js';
import pg from 'pg';
import { quotedSchema } from '../../lib/core/config/config.js';
import { LATEST_VERSION, migrate, MIGRATION_LOCKS, type MigrationLocks } from '../../lib/core/runtime/migrate.js';
import * as sql from '../../lib/core/sql/migrate.js';
import { JOBS_FILLFACTOR } from '../../schema/migrations/0015_fillfactor.js';
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

  it('migration 15 gives the jobs partitions made before it, and those made after, room for their updates', async () => {
    const schema = uniqueSchema('fill');
    schemas.push(schema);
    const ident = quotedSchema(schema);
    await admin.query(sql.createSchema(ident));
    await admin.query(sql.createMigrationsTable(ident));
    for (const m of MIGRATIONS.filter((m) => m.version < 15)) {
      await admin.query(m.up(ident));
      await admin.query(sql.recordMigration(ident), [m.version, m.name]);
    }
    await admin.query(`INSERT INTO ${ident}.queues (name, partition) VALUES ('before', true)`);
    await admin.query(`SELECT ${ident}.create_queue_partition('before')`);
    const q = new PgQueue({ connectionString: testUrl(), schema, logger });
    await q.start();
    await q.createQueue('after', { partition: true });
    await q.close();
    const { rows } = await admin.query<{ relname: string; reloptions: string[] | null }>(
      `SELECT c.relname, c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '${ident}.jobs'::regclass`,
    );
    expect(rows.map((r) => r.relname).sort()).toEqual(
      [
        'jobs_default',
        ...(await admin.query(`SELECT ${ident}.queue_partition_name(n) AS p FROM unnest(array['before', 'after']) n`)).rows.map((r) => r.p),
      ].sort(),
    );
    for (const row of rows) {
      expect(row.reloptions).toContain(`fillfactor=${JOBS_FILLFACTOR}`);
      expect(row.reloptions).toContain('autovacuum_vacuum_scale_factor=0.01');
    }
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
     * A transaction of another session: `hold` locks the installer's table, which every try reads first, so
     * whatever the newest migration changes a try waits there; `turn` takes the schema's advisory lock, as a
     * migrating instance does. end() commits it and returns its connection.
     */
    async function session(schema: string, what: 'hold' | 'turn') {
      const client = await admin.connect();
      await client.query('BEGIN');
      if (what === 'hold') await client.query(`LOCK TABLE ${quotedSchema(schema)}.migrations IN ACCESS EXCLUSIVE MODE`);
      else expect((await client.query(sql.tryLockMigrations, [schema])).rows[0].taken).toBe(true);
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      let ended = false;
      return {
        pid,
        end: async () => {
          if (ended) return;
          ended = true;
          await client.query('COMMIT').finally(() => client.release());
        },
      };
    }

    /** A migrate() call that the test can stop (as close() does) and always settles before the schema is dropped. */
    function migration(pool: pg.Pool, schema: string, locks: Partial<MigrationLocks>) {
      const log = recordingLogger();
      let stop = false;
      let looks = 0;
      const done = migrate(pool, schema, quotedSchema(schema), log, { ...MIGRATION_LOCKS, ...locks }, () => {
        looks++;
        return stop;
      });
      done.catch(() => undefined);
      return {
        done,
        /** How often it has looked whether it should stop: once per pause slice, waiting its turn or between tries. */
        looks: () => looks,
        warnings: () => log.lines.filter((l) => l.level === 'warn').map((l) => l.message),
        stop: async () => {
          stop = true;
          await done.catch(() => undefined);
        },
      };
    }

    const versionOf = async (schema: string) =>
      (await admin.query<{ v: number }>(`SELECT max(version)::int AS v FROM ${quotedSchema(schema)}.migrations`)).rows[0]!.v;
    /** Lock requests on the schema's installer table that wait. */
    const queuedOnTable = async (schema: string) =>
      (
        await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = to_regclass($1)`, [
          `${quotedSchema(schema)}.migrations`,
        ])
      ).rows[0]!.n;

    it('the migration undoes its try, warns, and tries again; an instance beside it waits its turn, in no table queue', async () => {
      const schema = await oneBehind();
      const holder = await session(schema, 'hold');
      const locks = { lockTimeoutMs: 100, attempts: 1000, retryDelayMs: 10_000 };
      const first = migration(admin, schema, locks);
      const second = migration(admin, schema, locks);
      try {
        await until(() => first.warnings().length + second.warnings().length === 1, 'the first try gave the lock up');
        // whichever took the turn first pauses; the other asks for the turn again and again, in no table's queue
        const [migrating, waiting] = first.warnings().length === 1 ? [first, second] : [second, first];
        expect(migrating.warnings()[0]).toBe(
          `schema ${schema}: the migration waited more than 100 ms for a lock another session holds on its tables and was undone; try 2 of 1000 in 10000 ms`,
        );
        const before = waiting.looks();
        await until(() => waiting.looks() >= before + 2, 'the other instance asked for its turn twice more');
        expect(await queuedOnTable(schema)).toBe(0);
        expect(migrating.warnings()).toHaveLength(1);
        expect(waiting.warnings()).toEqual([]);
        await holder.end();
        const results = await Promise.all([first.done, second.done]);
        expect(results).toContainEqual({ from: LATEST_VERSION - 1, to: LATEST_VERSION });
        expect(results).toContainEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
      } finally {
        await holder.end();
        await Promise.all([first.stop(), second.stop()]);
      }
    });

    it('after the last try it fails with MIGRATION_LOCK_TIMEOUT, and nothing is changed', async () => {
      const schema = await oneBehind();
      const holder = await session(schema, 'hold');
      const m = migration(admin, schema, { lockTimeoutMs: 100, attempts: 2, retryDelayMs: 10 });
      try {
        await expect(m.done).rejects.toMatchObject({
          name: 'QueueError',
          code: 'MIGRATION_LOCK_TIMEOUT',
          message: expect.stringContaining(
            `schema ${schema}: the migration waited more than 100 ms for a lock another session holds on its tables, 2 times; nothing was changed.`,
          ),
        });
        expect(m.warnings()).toHaveLength(1);
      } finally {
        await holder.end();
        await m.stop();
      }
      expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
    });

    it("a role's shorter statement_timeout shortens each try's lock wait and the pauses, and cuts no wait for the turn", async () => {
      const schema = await oneBehind();
      const strictUrl = new URL(testUrl());
      // a pause of the usual 250 ms would be cancelled: the slices are 100 ms, half the statement_timeout
      strictUrl.searchParams.set('options', '-c lock_timeout=1s -c statement_timeout=200ms');
      const strict = new pg.Pool({ connectionString: strictUrl.toString() });
      const turn = await session(schema, 'turn');
      const holder = await session(schema, 'hold');
      const m = migration(strict, schema, { lockTimeoutMs: 5000, attempts: 1000, retryDelayMs: 50, turnWarningMs: 300 });
      try {
        // it has waited its turn longer than either setting allows: two looks per slice of 100 ms, 1.1 s at least
        await until(() => m.looks() >= 22, 'the migration waited its turn past the role settings');
        // and said so, naming the session that holds the turn
        expect(m.warnings().length).toBeGreaterThanOrEqual(1);
        for (const w of m.warnings())
          expect(w).toMatch(
            new RegExp(
              `^schema ${schema}: waiting \\d+ s for the turn to migrate, held by the session of pid ${turn.pid} \\(pg_stat_activity says what it runs\\)$`,
            ),
          );
        await turn.end();
        const tryWarning = await until(
          () => m.warnings().find((w) => w.includes('the migration waited more than')),
          'a try gave the lock up',
        );
        expect(tryWarning).toMatch(/the migration waited more than 100 ms for a lock/);
        await holder.end();
        expect(await m.done).toEqual({ from: LATEST_VERSION - 1, to: LATEST_VERSION });
      } finally {
        await turn.end();
        await holder.end();
        await m.stop();
        await strict.end();
      }
    });

    it('stopped during the tries or while waiting its turn: QUEUE_CLOSED, and nothing is changed', async () => {
      const schema = await oneBehind();
      const holder = await session(schema, 'hold');
      const locks = { lockTimeoutMs: 100, attempts: 1000, retryDelayMs: 60_000 };
      const pausing = migration(admin, schema, locks);
      const waiting = migration(admin, schema, locks);
      try {
        await until(() => pausing.warnings().length + waiting.warnings().length === 1, 'a try gave the lock up');
        const [inTries, inLine] = pausing.warnings().length === 1 ? [pausing, waiting] : [waiting, pausing];
        await until(() => inLine.looks() >= 2, 'the other waits its turn');
        await inLine.stop();
        await expect(inLine.done).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
        await inTries.stop();
        await expect(inTries.done).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
      } finally {
        await holder.end();
        await Promise.all([pausing.stop(), waiting.stop()]);
      }
      expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
    });

    it("an engine's close() ends its start while it waits for the turn", async () => {
      const schema = await oneBehind();
      const turn = await session(schema, 'turn');
      const q = new PgQueue({ connectionString: testUrl(), schema, logger });
      try {
        const started = q.start();
        started.catch(() => undefined);
        // its connection pauses between two requests for the turn (no other test of this file migrates meanwhile)
        await until(
          async () =>
            (
              await admin.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query = $1`, [
                sql.pauseMigration,
              ])
            ).rowCount! > 0,
          'the engine waits its turn',
        );
        await q.close();
        await expect(started).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
      } finally {
        await turn.end();
        await q.close();
      }
      expect(await versionOf(schema)).toBe(LATEST_VERSION - 1);
    });
  });
});
