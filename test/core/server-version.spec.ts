// The start reads the server's version before it changes anything, in a statement it sends anyway, with `migrate` on
// and off, and goes on here: the tests' PostgreSQL is 15 or later. An older server's refusal is decided without one
// (test/unit/server-version.spec.ts): none runs beside the tests.
import pg from 'pg';
import { PgQueue } from '../../lib/core/pg-queue.js';
import { unsupportedServer } from '../../lib/core/runtime/server-version.js';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

const admin = testPool();
const schema = uniqueSchema('server_version');
const logger = { log() {}, warn() {}, error() {} };
afterAll(async () => {
  await dropSchema(admin, schema);
  await admin.end();
});

/** The statements the engine's connections send, in order: pg's own `Client` seam of the pool, on the real server. */
function recordingPool(): { pool: pg.Pool; sent: string[] } {
  const sent: string[] = [];
  class RecordingClient extends pg.Client {
    override query(...args: unknown[]): any {
      const first = args[0] as string | { text?: string };
      sent.push(typeof first === 'string' ? first : (first.text ?? ''));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
  }
  return { pool: new pg.Pool({ connectionString: testUrl(), max: 2, Client: RecordingClient }), sent };
}

const readsVersion = (text: string) => text.includes("current_setting('server_version_num')");

describe("the server's version, checked at start", () => {
  it('is this PostgreSQL, 15 or later, which the check accepts', async () => {
    const shown = Number((await admin.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]!.server_version_num);
    expect(shown).toBeGreaterThanOrEqual(150000);
    expect(unsupportedServer(shown)).toBeNull();
  });

  it('is read before the migration takes its turn or changes anything, and the engine starts', async () => {
    const { pool, sent } = recordingPool();
    const q = new PgQueue({ pool, schema, supervise: false, logger });
    try {
      await q.start();
      const read = sent.findIndex(readsVersion);
      const firstChange = sent.findIndex((text) => /pg_try_advisory_xact_lock|CREATE/.test(text));
      expect(read).toBeGreaterThanOrEqual(0);
      expect(firstChange).toBeGreaterThan(read);
      expect(q.migration!.to).toBeGreaterThan(0);
    } finally {
      await q.close();
      await pool.end();
    }
  });

  it('is read with migrate: false too, where the start only reads the version installed (of the schema above)', async () => {
    const { pool, sent } = recordingPool();
    const q = new PgQueue({ pool, schema, migrate: false, supervise: false, logger });
    try {
      await q.start();
      expect(readsVersion(sent[0]!)).toBe(true);
      expect(await q.getQueues()).toEqual([]);
    } finally {
      await q.close();
      await pool.end();
    }
  });
});
