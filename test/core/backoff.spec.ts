import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('backoff');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

/** Claims the job, fails it, and returns the delay the fail gave its next attempt, in seconds (database clock). */
async function failAndMeasure(queue: string, id: string, error: unknown = new Error('boom')): Promise<number> {
  // Time is moved by backdating the row, not by sleeping: the retry becomes runnable at once.
  await f.sql(`UPDATE $schema.jobs SET start_after = now() WHERE id = $1`, [id]);
  const [job] = await q.fetch(queue);
  expect(job!.id).toBe(id);
  await q.fail(queue, id, error);
  const [row] = await f.sql<{ delay: number }>(
    `SELECT extract(epoch FROM start_after - statement_timestamp())::float8 AS delay FROM $schema.jobs WHERE id = $1`,
    [id],
  );
  return row!.delay;
}

describe('retry delays', () => {
  it('a fixed retryDelay is used for every retry', async () => {
    await q.createQueue('fixed', { retryLimit: 3, retryDelay: 20 });
    const id = (await q.send('fixed', {}))!;
    for (let n = 1; n <= 3; n++) {
      const d = await failAndMeasure('fixed', id);
      expect(d).toBeGreaterThan(19);
      expect(d).toBeLessThanOrEqual(20);
    }
  });

  it('backoff grows as retryDelay × (2ⁿ/2 + 2ⁿ/2 × random()) for the n-th retry, within jitter bounds', async () => {
    await q.createQueue('exp', { retryLimit: 6, retryDelay: 10, retryBackoff: true });
    // Deferred, so that only the job the helper backdates is runnable.
    const ids = await q.insert(
      'exp',
      Array.from({ length: 8 }, () => ({ startAfter: 3600 })),
    );
    const seen: number[][] = [];
    for (let n = 1; n <= 6; n++) {
      const delays: number[] = [];
      for (const id of ids) delays.push(await failAndMeasure('exp', id));
      const low = (10 * 2 ** n) / 2;
      const high = 10 * 2 ** n;
      for (const d of delays) {
        expect(d).toBeGreaterThanOrEqual(low - 1);
        expect(d).toBeLessThanOrEqual(high);
      }
      seen.push(delays);
    }
    // Jitter: eight jobs at the same retry do not all get the same delay.
    expect(new Set(seen[5]!.map((d) => Math.round(d))).size).toBeGreaterThan(1);
  });

  it('backoff with no retryDelay starts from 1 s: about 1 s, 2 s, 4 s', async () => {
    await q.createQueue('exp-from-zero', { retryLimit: 3, retryBackoff: true });
    const id = (await q.send('exp-from-zero', {}))!;
    for (const [low, high] of [
      [1, 2],
      [2, 4],
      [4, 8],
    ]) {
      const d = await failAndMeasure('exp-from-zero', id);
      expect(d).toBeGreaterThanOrEqual(low! - 0.1);
      expect(d).toBeLessThanOrEqual(high!);
    }
  });

  it('a job given a fresh budget by retry() backs off from its first delay again', async () => {
    await q.createQueue('exp-retried', { retryLimit: 2, retryBackoff: true });
    const id = (await q.send('exp-retried', {}))!;
    expect(await failAndMeasure('exp-retried', id)).toBeLessThanOrEqual(2);
    expect(await failAndMeasure('exp-retried', id)).toBeGreaterThanOrEqual(2 - 0.1);
    await failAndMeasure('exp-retried', id);
    expect((await q.getJobById('exp-retried', id))!.state).toBe('failed');
    await q.retry('exp-retried', id);
    for (const [low, high] of [
      [1, 2],
      [2, 4],
    ]) {
      const d = await failAndMeasure('exp-retried', id);
      expect(d).toBeGreaterThanOrEqual(low! - 0.1);
      expect(d).toBeLessThanOrEqual(high!);
    }
  });

  it('retryDelayMax caps a backed-off delay', async () => {
    await q.createQueue('capped', { retryLimit: 8, retryDelay: 10, retryBackoff: true, retryDelayMax: 45 });
    const id = (await q.send('capped', {}))!;
    const delays: number[] = [];
    for (let n = 1; n <= 8; n++) delays.push(await failAndMeasure('capped', id));
    expect(Math.max(...delays)).toBeLessThanOrEqual(45);
    expect(delays.slice(3).every((d) => d > 44)).toBe(true);
  });

  it('retryAfterSeconds on the error is honoured to the second, over backoff', async () => {
    await q.createQueue('after', { retryLimit: 2, retryDelay: 100, retryBackoff: true });
    const id = (await q.send('after', {}))!;
    const d = await failAndMeasure('after', id, Object.assign(new Error('429'), { retryAfterSeconds: 3 }));
    expect(d).toBeGreaterThan(2);
    expect(d).toBeLessThanOrEqual(3);
  });
});
