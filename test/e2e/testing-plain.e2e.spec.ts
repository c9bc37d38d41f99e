// drain() on a plain PgQueue whose loops run on their own (no Nest, no held loops): it wakes the loops itself, waits
// for the queue to run dry, reports what was left when it times out, and borrows loops held by stopWorking.
import { PgQueue } from 'nestjs-pgqueue';
import { drain, WaitTimeoutError } from 'nestjs-pgqueue/testing';
import { deferred, dropSchema, recordingLogger, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

const schema = uniqueSchema('e2e_testing_plain');
const pool = testPool(1);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

describe('drain() with loops that run on their own', () => {
  const plain = new PgQueue({ connectionString: testUrl(), schema, supervise: false, useListenNotify: false, logger: recordingLogger() });
  const ran: string[] = [];
  const gate = deferred();
  beforeAll(async () => {
    await plain.createQueue('t.plain');
    await plain.createQueue('t.gated');
    // without LISTEN and with an hour-long poll, the loops sleep after their first empty claim: only a wake-up
    // brings them back
    await plain.work('t.plain', { pollingIntervalSeconds: 3600 }, async (job) => void ran.push(job.id));
    await plain.work('t.gated', { pollingIntervalSeconds: 3600 }, async () => gate.promise);
  });
  afterAll(async () => {
    gate.resolve();
    await plain.close();
  });

  it('wakes the loops itself, and waits for the queue to run dry', async () => {
    const id = (await plain.send('t.plain', {}))!;
    const result = await drain(plain, 't.plain', { timeoutMs: 10_000 });
    expect(result.completed).toEqual([id]);
    expect(ran).toEqual([id]);
    expect(plain.workerCount).toBe(2);
  });

  it('throws WaitTimeoutError, saying what was left, when the queue has not run dry in time', async () => {
    const id = (await plain.send('t.gated', {}))!;
    const thrown = await drain(plain, 't.gated', { timeoutMs: 1000 }).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(WaitTimeoutError);
    expect((thrown as WaitTimeoutError).message).toBe(
      'drain("t.gated") timed out after 1000 ms: 0 job(s) due and not started, 1 active (0 completed and 0 failed meanwhile)',
    );
    gate.resolve();
    expect((await drain(plain, 't.gated', { timeoutMs: 10_000 })).completed).toEqual([id]);
  });

  // Held again in the foreground, the loops would wait for this handler up to shutdownTimeoutMs (60 s): the test's
  // own timeout (20 s) fails first. The drain's error comes at once, while the handler is still held.
  it('throws its WaitTimeoutError while a handler still runs, not once the loops have been held again', async () => {
    await plain.stopWorking('t.gated');
    const held = deferred();
    const gated = new PgQueue({
      connectionString: testUrl(),
      schema,
      supervise: false,
      shutdownTimeoutMs: 60_000,
      logger: recordingLogger(),
    });
    let handlerDone = false;
    try {
      await gated.createQueue('t.hung');
      await gated.work('t.hung', { pollingIntervalSeconds: 0.1 }, async () => {
        await held.promise;
        handlerDone = true;
      });
      await gated.stopWorking('t.hung');
      await gated.send('t.hung', {});
      const thrown = await drain(gated, 't.hung', { timeoutMs: 500 }).catch((err: unknown) => err);
      expect(thrown).toBeInstanceOf(WaitTimeoutError);
      expect(handlerDone).toBe(false);
    } finally {
      held.resolve();
      await gated.close();
      await plain.startWorking('t.gated');
    }
  }, 20_000);

  it('starts loops held by stopWorking for the drain, and holds them again after', async () => {
    await plain.stopWorking('t.plain');
    const id = (await plain.send('t.plain', {}))!;
    expect((await drain(plain, 't.plain')).completed).toEqual([id]);
    expect(plain.workerCount).toBe(1);
    await plain.startWorking('t.plain');
    expect(plain.workerCount).toBe(2);
  });
});
