import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('backoff');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

/** The delay a fail gave a job's next attempt (seconds, database clock): at least `min`, at most `max`. */
interface Delay {
  min: number;
  max: number;
}

/**
 * Claims the job, fails it, and measures the delay the fail gave its next attempt. The fail sets start_after to its
 * transaction's now() plus the delay, and that now() lies between the statement timestamps read just before and just
 * after the fail: the delay is at least start_after minus the later, at most start_after minus the earlier. A loaded
 * machine only widens that span; it never moves the delay outside it.
 */
async function failAndMeasure(queue: string, id: string, error: unknown = new Error('boom')): Promise<Delay> {
  // Time is moved by backdating the row, not by sleeping: the retry becomes runnable at once.
  await f.sql(`UPDATE $schema.jobs SET start_after = now() WHERE id = $1`, [id]);
  const [job] = await q.fetch(queue);
  expect(job!.id).toBe(id);
  // as text: microseconds, where a Date would keep milliseconds
  const [before] = await f.sql<{ at: string }>(`SELECT statement_timestamp()::text AS at`);
  await q.fail(queue, id, error);
  const [row] = await f.sql<Delay>(
    `SELECT extract(epoch FROM start_after - statement_timestamp())::float8 AS min,
       extract(epoch FROM start_after - $2::timestamptz)::float8 AS max
     FROM $schema.jobs WHERE id = $1`,
    [id, before!.at],
  );
  return row!;
}

/** Asserts that the measured delay `d` allows a delay within [low, high]: fails if the delay lies outside. */
function expectWithin(d: Delay, low: number, high: number): void {
  expect(d.max).toBeGreaterThanOrEqual(low);
  expect(d.min).toBeLessThanOrEqual(high);
}

describe('retry delays', () => {
  it('a fixed retryDelay is used for every retry', async () => {
    await q.createQueue('fixed', { retryLimit: 3, retryDelay: 20 });
    const id = (await q.send('fixed', {}))!;
    for (let n = 1; n <= 3; n++) {
      expectWithin(await failAndMeasure('fixed', id), 20, 20);
    }
  });

  it('backoff grows as retryDelay × (2ⁿ/2 + 2ⁿ/2 × random()) for the n-th retry, within jitter bounds', async () => {
    await q.createQueue('exp', { retryLimit: 6, retryDelay: 10, retryBackoff: true });
    // Deferred, so that only the job the helper backdates is runnable.
    const ids = await q.insert(
      'exp',
      Array.from({ length: 8 }, () => ({ startAfter: 3600 })),
    );
    const seen: Delay[][] = [];
    for (let n = 1; n <= 6; n++) {
      const delays: Delay[] = [];
      for (const id of ids) delays.push(await failAndMeasure('exp', id));
      for (const d of delays) expectWithin(d, (10 * 2 ** n) / 2, 10 * 2 ** n);
      seen.push(delays);
    }
    // Jitter: eight jobs at the same retry do not all get the same delay.
    expect(new Set(seen[5]!.map((d) => Math.round(d.min))).size).toBeGreaterThan(1);
  });

  it('backoff with no retryDelay starts from 1 s: about 1 s, 2 s, 4 s', async () => {
    await q.createQueue('exp-from-zero', { retryLimit: 3, retryBackoff: true });
    const id = (await q.send('exp-from-zero', {}))!;
    for (const [low, high] of [
      [1, 2],
      [2, 4],
      [4, 8],
    ]) {
      expectWithin(await failAndMeasure('exp-from-zero', id), low!, high!);
    }
  });

  it('a job given a fresh budget by retry() backs off from its first delay again', async () => {
    await q.createQueue('exp-retried', { retryLimit: 2, retryBackoff: true });
    const id = (await q.send('exp-retried', {}))!;
    expectWithin(await failAndMeasure('exp-retried', id), 1, 2);
    expectWithin(await failAndMeasure('exp-retried', id), 2, 4);
    await failAndMeasure('exp-retried', id);
    expect((await q.getJobById('exp-retried', id))!.state).toBe('failed');
    await q.retry('exp-retried', id);
    for (const [low, high] of [
      [1, 2],
      [2, 4],
    ]) {
      expectWithin(await failAndMeasure('exp-retried', id), low!, high!);
    }
  });

  it('retryDelayMax caps a backed-off delay', async () => {
    await q.createQueue('capped', { retryLimit: 8, retryDelay: 10, retryBackoff: true, retryDelayMax: 45 });
    const id = (await q.send('capped', {}))!;
    const delays: Delay[] = [];
    for (let n = 1; n <= 8; n++) delays.push(await failAndMeasure('capped', id));
    for (const d of delays) expect(d.min).toBeLessThanOrEqual(45);
    // from the 4th retry on, 10 × 2⁴/2 = 80 s and more: the cap itself
    for (const d of delays.slice(3)) expectWithin(d, 45, 45);
  });

  it('retryAfterSeconds on the error is honoured to the second, over backoff', async () => {
    await q.createQueue('after', { retryLimit: 2, retryDelay: 100, retryBackoff: true });
    const id = (await q.send('after', {}))!;
    expectWithin(await failAndMeasure('after', id, Object.assign(new Error('429'), { retryAfterSeconds: 3 })), 3, 3);
  });
});
