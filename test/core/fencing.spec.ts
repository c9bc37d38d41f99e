import { testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('fencing');
const stalled = f.create({ supervise: false });
const fresh = f.create({ supervise: false });
afterAll(() => f.cleanup());

describe('fencing', () => {
  it('a worker that stalls past its lease cannot complete, fail or heartbeat the job once another took it over and completed it', async () => {
    await stalled.createQueue('fence', { retryLimit: 3 });
    const id = (await stalled.send('fence', {}))!;
    const [old] = await stalled.fetch('fence');
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    await fresh.maintain({ force: true });
    const [current] = await fresh.fetch('fence');
    expect(current!.id).toBe(id);
    expect(current!.retryCount).toBe(1);
    await fresh.complete('fence', { id, retryCount: 1 }, 'the newer result');

    expect((await stalled.complete('fence', { id, retryCount: old!.retryCount }, 'stale')).updated).toBe(0);
    expect((await stalled.fail('fence', { id, retryCount: old!.retryCount }, new Error('stale'))).updated).toBe(0);
    const [{ before }] = (await f.sql<{ before: Date | null }>('SELECT heartbeat_until AS before FROM $schema.jobs WHERE id = $1', [
      id,
    ])) as [{ before: Date | null }];
    await old!.heartbeat();
    const [{ after }] = (await f.sql<{ after: Date | null }>('SELECT heartbeat_until AS after FROM $schema.jobs WHERE id = $1', [id])) as [
      { after: Date | null },
    ];
    expect(after).toEqual(before);
    expect(await stalled.getJobById('fence', id)).toMatchObject({ state: 'completed', output: 'the newer result', retryCount: 1 });
  });

  it('a claim the server forgot (a crash before its commit reached disk) does not let the old attempt settle the new one', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('fence.forgotten', { heartbeatSeconds: 1 });
    const id = (await q.send('fence.forgotten', {}))!;
    const gates: (() => void)[] = [];
    const started: string[] = [];
    const signals: AbortSignal[] = [];
    await q.work('fence.forgotten', { pollingIntervalSeconds: 0.05, concurrency: 2 }, async (job) => {
      const attempt = `attempt ${started.length + 1}`;
      started.push(attempt);
      signals.push(job.signal);
      await new Promise<void>((resolve) => gates.push(resolve));
      return attempt;
    });
    await until(() => started.length === 1, 'the first attempt runs');
    // What recovery leaves of a claim whose commit was lost: the job as it was before the claim.
    await f.sql(
      `UPDATE $schema.jobs SET state = 'created', claim_count = claim_count - 1, worker_id = NULL, started_on = NULL,
      lease_until = NULL, heartbeat_until = NULL WHERE id = $1`,
      [id],
    );
    // The same worker claims it again: same id, same claim count, same worker id; only started_on differs.
    await until(() => started.length === 2, 'the second attempt runs');
    const [{ claims }] = (await f.sql<{ claims: number }>('SELECT claim_count AS claims FROM $schema.jobs WHERE id = $1', [id])) as [
      { claims: number },
    ];
    expect(claims).toBe(1);
    // the worker's heartbeat tells the first attempt it no longer holds the job, and only the first
    await until(() => signals[0]!.aborted, 'the first attempt told to stop');
    expect(signals[1]!.aborted).toBe(false);
    gates[0]!(); // the first attempt returns while the second still runs: its result must be refused
    await until(() => q.counters.staleResults === 1, 'the first result refused');
    expect(await q.getJobById('fence.forgotten', id)).toMatchObject({ state: 'active', output: null });
    gates[1]!();
    await until(async () => (await q.getJobById('fence.forgotten', id))!.state === 'completed', 'the second attempt completed');
    expect((await q.getJobById('fence.forgotten', id))!.output).toBe('attempt 2');
    await q.stopWorkers();
  });

  it("a job completed in the instant between the reaper's read and its write stays completed", async () => {
    await stalled.createQueue('race');
    const id = (await stalled.send('race', {}))!;
    const [job] = await stalled.fetch('race');
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    // The completion is under way (its row lock is held, not yet committed) when the reaper runs.
    const completer = await f.pool.connect();
    try {
      await completer.query('BEGIN');
      const done = await completer.query(
        `UPDATE "${f.schema}".jobs SET state = 'completed', completed_on = now(), lease_until = NULL, output = '"won"'
         WHERE queue = 'race' AND id = $1 AND state = 'active' AND claim_count = $2`,
        [id, 1],
      );
      expect(done.rowCount).toBe(1);
      expect((await fresh.maintain({ force: true })).reaped).toBe(0);
      await completer.query('COMMIT');
    } finally {
      completer.release();
    }
    expect(job!.id).toBe(id);
    expect(await fresh.getJobById('race', id)).toMatchObject({ state: 'completed', output: 'won', retryCount: 0 });
    expect((await fresh.maintain({ force: true })).reaped).toBe(0);
  });
});

describe('events', () => {
  it("a failure of the loop itself is an 'error' event, a handler's throw never is, and the loop keeps going", async () => {
    // Statements of this instance time out after 200 ms, so a locked table makes its claim fail.
    const q = f.create({
      connectionString: `${testUrl()}${testUrl().includes('?') ? '&' : '?'}options=-c%20statement_timeout%3D200`,
      supervise: false,
    });
    await q.createQueue('events', { retryLimit: 0 });
    const errors: (Error & { context?: string })[] = [];
    q.on('error', (err) => errors.push(err));
    await q.work('events', { pollingIntervalSeconds: 0.05 }, (job) => {
      if ((job.data as { bad?: boolean }).bad) throw new Error('handler failure');
      return 'ok';
    });
    const bad = (await q.send('events', { bad: true }))!;
    await until(async () => (await q.getJobById('events', bad))!.state === 'failed', 'handler failure recorded');
    expect(errors).toEqual([]);

    const locker = await f.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${f.schema}".jobs IN ACCESS EXCLUSIVE MODE`);
      // (the loop's read of when the next job is due may time out first)
      await until(() => errors.some((e) => e.context?.includes('claiming jobs of queue "events"')), "an 'error' event from the claim");
      await locker.query('COMMIT');
    } finally {
      locker.release();
    }
    expect(errors.every((e) => /of queue "events"/.test(e.context ?? ''))).toBe(true);
    const good = (await q.send('events', {}))!;
    await until(async () => (await q.getJobById('events', good))!.state === 'completed', 'the loop recovered');
    await q.offWork('events');
  });
});
