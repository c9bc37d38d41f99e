// perJobResults: a batch handler that resolves with pg-boss's array of { id, status, output }, one per job.
import { InvalidOptionError } from '../../lib/core/errors.js';
import type { BatchJob, JobResult } from '../../lib/core/types.js';
import { stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('perjob');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

const fast = { pollingIntervalSeconds: 0.1 };

/** Waits until no job of `queue` is waiting to run or running. */
const settled = (queue: string) =>
  until(async () => {
    const counts = await stateCounts(f.pool, f.schema, queue);
    return !counts.created && !counts.active;
  }, `the batch of ${queue} settled`);

describe('perJobResults', () => {
  it('settles each job by its result: completed with its output, failed and retried, dead-lettered at once', async () => {
    const q = f.create();
    await q.createQueue('pj.dlq');
    await q.createQueue('pj.each', { retryLimit: 2, retryDelay: 3600, deadLetter: 'pj.dlq' });
    const [ok, flaky, fatal, plain] = await q.insert(
      'pj.each',
      ['ok', 'flaky', 'fatal', 'plain'].map((data) => ({ data })),
    );
    await q.work('pj.each', { batch: true, perJobResults: true, batchSize: 10, ...fast }, async (jobs: BatchJob<string>[]) =>
      jobs.map((job): JobResult => {
        if (job.data === 'ok') return { id: job.id, status: 'completed', output: { resized: job.data } };
        if (job.data === 'flaky') return { id: job.id, status: 'failed', output: new Error('upstream timed out') };
        if (job.data === 'fatal') return { id: job.id, status: 'deadletter', output: { reason: 'corrupt image', code: 'E_CORRUPT' } };
        return { id: job.id, status: 'failed' };
      }),
    );
    await settled('pj.each');
    expect(await q.getJobById('pj.each', ok!)).toMatchObject({ state: 'completed', output: { resized: 'ok' } });
    const retried = (await q.getJobById('pj.each', flaky!))!;
    expect(retried).toMatchObject({ state: 'retry', retryCount: 1 });
    expect(retried.lastError).toMatchObject({ name: 'Error', message: 'upstream timed out', attempt: 1 });
    expect((await q.getJobById('pj.each', plain!))!.lastError).toMatchObject({ message: 'failed by its batch handler' });
    // deadletter: failed for good with retries left, and copied to the dead-letter queue with its failure in
    // `output` (where pg-boss puts it) as well as in `sourceOutput`
    const dead = (await q.getJobById('pj.each', fatal!))!;
    expect(dead).toMatchObject({ state: 'failed', retryCount: 0 });
    expect(dead.lastError).toMatchObject({ reason: 'corrupt image', code: 'E_CORRUPT', attempt: 1 });
    const copies = (await q.findJobs('pj.dlq')).jobs;
    expect(copies).toHaveLength(1);
    const copy = (await q.getJobById('pj.dlq', copies[0]!.id))!;
    expect(copy).toMatchObject({ state: 'created', data: 'fatal', sourceName: 'pj.each', sourceId: fatal });
    expect(copy.output).toEqual(dead.output);
    expect(copy.sourceOutput).toEqual(dead.output);
    expect((copy.output as { error: { reason: string } }).error.reason).toBe('corrupt image');
  });

  it('a job the array leaves out, or gives a status it does not know, fails; a result for no job of the batch is logged', async () => {
    const q = f.create();
    await q.createQueue('pj.gaps', { retryLimit: 0 });
    const [named, omitted, odd] = await q.insert(
      'pj.gaps',
      ['named', 'omitted', 'odd'].map((data) => ({ data })),
    );
    await q.work('pj.gaps', { batch: true, perJobResults: true, ...fast }, async (jobs: BatchJob<string>[]) => {
      const by = (d: string) => jobs.find((j) => j.data === d)!;
      return [
        { id: by('named').id, status: 'completed', output: 1 },
        { id: by('odd').id, status: 'done' as JobResult['status'] },
        { id: 'no-such-job', status: 'completed' },
      ];
    });
    await settled('pj.gaps');
    expect(await q.getJobById('pj.gaps', named!)).toMatchObject({ state: 'completed', output: 1 });
    expect((await q.getJobById('pj.gaps', omitted!))!).toMatchObject({
      state: 'failed',
      lastError: {
        code: 'BATCH_RESULT_MISSING',
        message: `the batch handler's array of results named no result for job ${omitted}: a job the results leave out fails (it is retried while retries remain)`,
      },
    });
    expect((await q.getJobById('pj.gaps', odd!))!).toMatchObject({
      state: 'failed',
      lastError: {
        code: 'BATCH_RESULT_INVALID',
        message: `the batch handler's result for job ${odd} has status "done"; a status is one of completed, failed, deadletter`,
      },
    });
    const warning = f.logger.lines.find((l) => l.level === 'warn' && l.message.includes('queue "pj.gaps" returned'));
    expect(warning?.message).toContain('returned 1 result(s) that name no job of its batch of 3 ("no-such-job")');
  });

  it('anything but an array fails the whole batch, retried; a later entry for the same job wins', async () => {
    const q = f.create();
    await q.createQueue('pj.shape', { retryLimit: 1, retryDelay: 0 });
    const ids = await q.insert('pj.shape', [{ data: 1 }, { data: 2 }]);
    let calls = 0;
    await q.work('pj.shape', { batch: true, perJobResults: true, ...fast }, async (jobs: BatchJob<number>[]) => {
      calls += 1;
      if (calls === 1) return { completed: jobs.map((j) => j.id) } as unknown as JobResult[];
      return jobs.flatMap((j): JobResult[] => [
        { id: j.id, status: 'failed' },
        { id: j.id, status: 'completed', output: `second try of ${j.data}` },
      ]);
    });
    await until(async () => (await stateCounts(f.pool, f.schema, 'pj.shape')).completed === 2, 'both completed on the retry');
    for (const [i, id] of ids.entries()) {
      const job = (await q.getJobById('pj.shape', id))!;
      expect(job).toMatchObject({ retryCount: 1, output: `second try of ${i + 1}` });
      expect(job.lastError).toMatchObject({
        code: 'BATCH_RESULT_INVALID',
        message:
          'the batch handler resolved with object; with perJobResults it must resolve with an array of { id, status, output }, one per job',
      });
    }
  });

  it('refuses perJobResults without batch, naming the option', async () => {
    const q = f.create();
    await q.createQueue('pj.single');
    const err = await q.work('pj.single', { perJobResults: true }, () => undefined).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.message).toContain('options.perJobResults');
    expect(err.message).toContain('without batch: true');
    const wrong = await q.work('pj.single', { batch: true, perJobResults: 'yes' as unknown as boolean }, () => []).catch((e) => e);
    expect(wrong).toBeInstanceOf(InvalidOptionError);
    expect(wrong.message).toContain('options.perJobResults');
  });
});
