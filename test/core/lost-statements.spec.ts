// A statement the engine prepared, lost on a direct connection: a transactional handler's DEALLOCATE ALL removes
// the statements prepared on the connection it holds, which goes back to the pool. The engine's next named
// statement there fails (26000) before it runs: it is sent again unnamed, nothing is named from then on, a pooler
// warning says so once, and the LISTEN connection is checked again and stays, as it still hears the pool.
import { loopRegistryOf, runtimeOf } from '../../lib/core/pg-queue.js';
import type { QueueWarning } from '../../lib/core/events.js';
import { stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('lost');
afterAll(() => f.cleanup());

describe('a prepared statement lost on a direct connection', () => {
  it('is sent again unnamed, naming stops, said once, and LISTEN stays', async () => {
    const q = f.create({ supervise: false, poolSize: 2 });
    const warnings: QueueWarning[] = [];
    q.on('warning', (w) => warnings.push(w));
    await q.createQueue('lost.tx');
    expect(runtimeOf(q).namesStatements).toBe(true);
    let dropped = 0;
    await q.work('lost.tx', { transactional: true, pollingIntervalSeconds: 60, concurrency: 1 }, async (job) => {
      if ((job.data as { drop?: boolean }).drop) {
        await job.db!.query('DEALLOCATE ALL');
        dropped++;
      }
    });
    const registry = loopRegistryOf(q);
    // the engine's own pool, its settings in place: LISTEN needs no check
    expect(registry.hearingCheck).toBe('unchecked');
    // the two connections of the pool each hold a transactional handler that drops their prepared statements
    for (let i = 0; i < 4; i++) await q.send('lost.tx', { drop: true });
    await until(() => dropped === 4, 'the handlers that drop the prepared statements');
    // the claims that follow are named: one meets a connection that lost them
    const lost = () => warnings.filter((w) => w.type === 'pooler');
    for (let i = 0; i < 20 && lost().length === 0; i++) {
      await q.send('lost.tx', { i });
      await until(async () => (await stateCounts(f.pool, f.schema, 'lost.tx')).completed === 5 + i, `job ${i} completed`);
    }
    expect(lost()).toEqual([
      expect.objectContaining({
        listen: 'pool',
        message: expect.stringMatching(/^a statement the engine had prepared was lost \(prepared statement/),
      }),
    ]);
    expect(runtimeOf(q).namesStatements).toBe(false);
    // LISTEN is checked again, hears, and stays: a job sent now is claimed by its NOTIFY (the loop polls once a minute)
    await until(() => registry.hearingCheck === 'heard', 'the hearing check after the loss');
    expect(registry.listening).toBe(true);
    const before = (await stateCounts(f.pool, f.schema, 'lost.tx')).completed!;
    await q.send('lost.tx', { last: true });
    await until(
      async () => (await stateCounts(f.pool, f.schema, 'lost.tx')).completed === before + 1,
      'the last job, woken by NOTIFY',
      10_000,
    );
    expect(lost()).toHaveLength(1);
    await q.close();
  });

  it('lost before any loop runs: the LISTEN opened later is checked, hears, and stays', async () => {
    const q = f.create({ supervise: false, schema: `${f.schema}_early` });
    try {
      await q.createQueue('lost.early');
      // as StatementNames reports a 26000 from the pool (here before any loop, as a send at the app's start would)
      runtimeOf(q).lostPreparedStatement(Object.assign(new Error('prepared statement "pgq_0" does not exist'), { code: '26000' }));
      expect(runtimeOf(q).namesStatements).toBe(false);
      await q.work('lost.early', { pollingIntervalSeconds: 60 }, async () => undefined);
      await until(() => loopRegistryOf(q).hearingCheck === 'heard', 'the hearing check of the LISTEN opened after the loss');
      expect(loopRegistryOf(q).listening).toBe(true);
    } finally {
      await q.close();
      await f.sql(`DROP SCHEMA IF EXISTS "${f.schema}_early" CASCADE`);
    }
  });
});
