import { PermanentJobError } from '../../lib/core/errors.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('settle');
const q = f.create();
beforeAll(async () => {
  await q.createQueue('s', { retryLimit: 1, retryDelay: 30 });
});
afterAll(() => f.cleanup());

async function claimOne(): Promise<string> {
  const [job] = await q.fetch('s');
  if (!job) throw new Error('nothing to claim');
  return job.id;
}

describe('complete', () => {
  it('completes an active job with its output and sets when it may be deleted', async () => {
    await q.send('s', { a: 1 });
    const id = await claimOne();
    expect(await q.complete('s', id, { ok: true })).toEqual({ requested: 1, updated: 1, ids: [id] });
    const job = (await q.getJobById('s', id))!;
    expect(job).toMatchObject({ state: 'completed', output: { ok: true } });
    expect(job.keepUntil.getTime() - job.completedOn!.getTime()).toBe(7 * 24 * 3600 * 1000);
  });

  it('does not complete a job that is not active', async () => {
    const id = (await q.send('s', {}))!;
    expect((await q.complete('s', id)).updated).toBe(0);
    expect((await q.getJobById('s', id))!.state).toBe('created');
    await q.deleteJob('s', id);
  });

  it('with { id, retryCount } it completes only that attempt', async () => {
    await q.send('s', {});
    const id = await claimOne();
    expect((await q.complete('s', { id, retryCount: 1 }, 'stale')).updated).toBe(0);
    expect((await q.complete('s', { id, retryCount: 0 }, 'current')).updated).toBe(1);
    expect((await q.getJobById('s', id))!.output).toBe('current');
  });
});

describe('fail', () => {
  it('puts the job back in retry after retryDelay while retries remain, then fails it for good', async () => {
    await q.send('s', {});
    const id = await claimOne();
    const [{ now }] = (await f.sql<{ now: Date }>('SELECT now()')) as [{ now: Date }];
    await q.fail('s', id, new Error('first'));
    let job = (await q.getJobById('s', id))!;
    expect(job).toMatchObject({ state: 'retry', retryCount: 1 });
    expect(job.startAfter.getTime() - now.getTime()).toBeGreaterThanOrEqual(30_000);
    expect(job.output).toMatchObject({ error: { name: 'Error', message: 'first' } });

    await f.sql(`UPDATE $schema.jobs SET start_after = now() WHERE id = $1`, [id]);
    expect(await claimOne()).toBe(id);
    await q.fail('s', id, 'second, a string');
    job = (await q.getJobById('s', id))!;
    expect(job).toMatchObject({ state: 'failed', retryCount: 1 });
    expect(job.completedOn).toBeInstanceOf(Date);
    const output = job.output as { error: { message: string }; errors: { message: string }[] };
    expect(output.error.message).toBe('second, a string');
    expect(output.errors.map((e) => e.message)).toEqual(['first', 'second, a string']);
  });

  it('a PermanentJobError fails at once, with no retry', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.fail('s', id, new PermanentJobError('bad input'));
    expect(await q.getJobById('s', id)).toMatchObject({ state: 'failed', retryCount: 0 });
  });

  it('an error with retryAfterSeconds is retried after exactly that delay', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.fail('s', id, Object.assign(new Error('429'), { retryAfterSeconds: 7 }));
    const [row] = await f.sql<{ delay: number }>(
      `SELECT extract(epoch FROM start_after - now())::float8 AS delay FROM $schema.jobs WHERE id = $1`,
      [id],
    );
    expect(row!.delay).toBeGreaterThan(6);
    expect(row!.delay).toBeLessThanOrEqual(7);
  });
});

describe('job control', () => {
  it('cancel stops a job, resume brings it back, deleteJob removes it', async () => {
    const id = (await q.send('s', { c: 1 }))!;
    expect((await q.cancel('s', id)).updated).toBe(1);
    expect((await q.getJobById('s', id))!.state).toBe('cancelled');
    expect(await q.fetch('s')).toEqual([]);
    expect((await q.cancel('s', id)).updated).toBe(0);
    expect((await q.resume('s', [id])).updated).toBe(1);
    expect(await q.getJobById('s', id)).toMatchObject({ state: 'created', completedOn: null });
    expect((await q.deleteJob('s', id)).updated).toBe(1);
    expect(await q.getJobById('s', id)).toBeNull();
  });

  it('cancelling an active job makes its holder unable to complete it', async () => {
    await q.send('s', {});
    const id = await claimOne();
    await q.cancel('s', id);
    expect((await q.complete('s', id)).updated).toBe(0);
    expect((await q.getJobById('s', id))!.state).toBe('cancelled');
  });

  it('getJobById returns null for an unknown id or another queue', async () => {
    await q.createQueue('other');
    const id = (await q.send('s', {}))!;
    expect(await q.getJobById('s', '999999999')).toBeNull();
    expect(await q.getJobById('other', id)).toBeNull();
  });
});
