// An engine pointed at a database that does not exist fails to start with one line that names it.
import { PgQueue } from '../../lib/core/pg-queue.js';
import { testUrl } from '../helpers/db.js';

describe('starting against a database that does not exist', () => {
  it('rejects with DATABASE_NOT_FOUND naming the database, and the engine can still be closed', async () => {
    const url = new URL(testUrl());
    url.pathname = '/pgqueue_no_such_database';
    const q = new PgQueue({ connectionString: url.toString(), supervise: false, logger: { log() {}, warn() {}, error() {} } });
    await expect(q.start()).rejects.toMatchObject({
      code: 'DATABASE_NOT_FOUND',
      message: expect.stringContaining('database "pgqueue_no_such_database" does not exist'),
    });
    await q.close();
  });
});
