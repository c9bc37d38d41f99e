import { PgQueue } from '../../lib/core/pg-queue.js';
import { LATEST_VERSION } from '../../lib/core/migrate.js';
import { dropSchema, recordingLogger, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

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
});
