import { InvalidOptionError, InvalidPayloadError, PermanentJobError } from '../../lib/core/errors.js';
import type { QueueWarning } from '../../lib/core/events.js';
import type { BatchJob } from '../../lib/core/types.js';
import { deferred, stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('batch');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

const fast = { pollingIntervalSeconds: 0.1 };

describe('batch handlers', () => {
  it('get the jobs of a claim together, up to batchSize; a return completes them all with its output', async () => {
    const q = f.create();
    await q.createQueue('b.all');
    const ids = await q.insert(
      'b.all',
      Array.from({ length: 25 }, (_, i) => ({ data: { n: i } })),
    );
    const sizes: number[] = [];
    const seen: number[] = [];
    await q.work('b.all', { batch: true, batchSize: 10, ...fast }, (jobs: BatchJob<{ n: number }>[]) => {
      sizes.push(jobs.length);
      seen.push(...jobs.map((j) => j.data.n));
      return { batchOf: jobs.length };
    });
    await until(async () => (await stateCounts(f.pool, f.schema, 'b.all')).completed === 25, 'all 25 completed');
    expect(sizes[0]).toBe(10);
    expect(Math.max(...sizes)).toBe(10);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect((await q.getJobById('b.all', ids[0]!))!.output).toEqual({ batchOf: 10 });
    expect((await q.getJobById('b.all', ids[24]!))!.output).toEqual({ batchOf: 5 });
  });

  it('a throw fails every job of the batch, retried while retries remain', async () => {
    const q = f.create();
    await q.createQueue('b.throw', { retryLimit: 1 });
    const ids = await q.insert('b.throw', [{ data: 1 }, { data: 2 }, { data: 3 }]);
    const calls: number[][] = [];
    await q.work('b.throw', { batch: true, ...fast }, (jobs) => {
      calls.push(jobs.map((j) => j.retryCount));
      throw new Error(`batch of ${jobs.length} broke`);
    });
    await until(async () => (await stateCounts(f.pool, f.schema, 'b.throw')).failed === 3, 'all three failed');
    expect(calls).toEqual([
      [0, 0, 0],
      [1, 1, 1],
    ]);
    for (const id of ids) {
      const job = await q.getJobById('b.throw', id);
      expect((job!.output as { errors: { message: string }[] }).errors.map((e) => e.message)).toEqual([
        'batch of 3 broke',
        'batch of 3 broke',
      ]);
    }
  });

  it('a returned Map settles each job: an output completes, an Error fails, a job it leaves out fails', async () => {
    const q = f.create();
    await q.createQueue('b.map', { retryLimit: 1, retryDelay: 3600 });
    const [ok, retried, permanent, unnamed, unstorable] = await q.insert(
      'b.map',
      ['ok', 'retried', 'permanent', 'unnamed', 'unstorable'].map((data) => ({ data })),
    );
    await q.work('b.map', { batch: true, ...fast }, (jobs: BatchJob<string>[]) => {
      const results = new Map<string, unknown>();
      for (const job of jobs) {
        if (job.data === 'ok') results.set(job.id, { done: job.data });
        if (job.data === 'retried') results.set(job.id, new Error('try again later'));
        if (job.data === 'permanent') results.set(job.id, new PermanentJobError('never'));
        if (job.data === 'unstorable') results.set(job.id, { n: 1n });
      }
      return results;
    });
    // completions and failures go out in a statement each
    await until(async () => {
      const counts = await stateCounts(f.pool, f.schema, 'b.map');
      return !counts.created && !counts.active;
    }, 'the batch settled');
    expect(await q.getJobById('b.map', ok!)).toMatchObject({ state: 'completed', output: { done: 'ok' } });
    expect(await q.getJobById('b.map', retried!)).toMatchObject({ state: 'retry', retryCount: 1 });
    expect((await q.getJobById('b.map', retried!))!.lastError).toMatchObject({ message: 'try again later', attempt: 1 });
    expect(await q.getJobById('b.map', permanent!)).toMatchObject({ state: 'failed', retryCount: 0 });
    // left out: failed with a reason, and retried as a throw would be (never completed unsaid)
    const left = (await q.getJobById('b.map', unnamed!))!;
    expect(left).toMatchObject({ state: 'retry', retryCount: 1 });
    expect(left.lastError).toMatchObject({ name: 'QueueError', code: 'BATCH_RESULT_MISSING' });
    expect(left.lastError!.message).toBe(
      `the batch handler's Map named no result for job ${unnamed}: a job the results leave out fails (it is retried while retries remain)`,
    );
    // an output JSON cannot hold fails that job alone
    const bad = (await q.getJobById('b.map', unstorable!))!;
    expect(bad.state).toBe('retry');
    expect(bad.lastError!.message).toContain('a BigInt at n');
  });

  it('job.complete() and job.fail() settle a job before the handler returns; the return settles the rest', async () => {
    const q = f.create();
    await q.createQueue('b.each', { retryLimit: 0 });
    const [early, failing, rest] = await q.insert('b.each', [{ data: 'early' }, { data: 'failing' }, { data: 'rest' }]);
    const release = deferred();
    let twice: unknown;
    await q.work('b.each', { batch: true, ...fast }, async (jobs: BatchJob<string>[]) => {
      const byData = new Map(jobs.map((j) => [j.data, j]));
      await byData.get('early')!.complete({ early: true });
      await byData.get('failing')!.fail(new Error('this one broke'));
      twice = await byData
        .get('early')!
        .complete('again')
        .catch((e) => e);
      await release.promise;
      return 'the rest';
    });
    await until(async () => (await q.getJobById('b.each', failing!))!.state === 'failed', 'failed before the handler returned');
    expect(await q.getJobById('b.each', early!)).toMatchObject({ state: 'completed', output: { early: true } });
    expect(await q.getJobById('b.each', rest!)).toMatchObject({ state: 'active' });
    expect(twice).toMatchObject({ code: 'BATCH_JOB_SETTLED', message: `job ${early} of this batch was settled already` });
    release.resolve();
    await until(async () => (await q.getJobById('b.each', rest!))!.state === 'completed', 'the rest completed');
    expect((await q.getJobById('b.each', rest!))!.output).toBe('the rest');
    expect(await q.getJobById('b.each', early!)).toMatchObject({ state: 'completed', output: { early: true } });
    expect((await q.getJobById('b.each', failing!))!.lastError!.message).toBe('this one broke');
  });

  it('a stale batch result is refused: a cancelled job stays cancelled, a job claimed again stays with its new holder', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('b.stale', { retryLimit: 2 });
    const [cancelled, taken, kept] = await q.insert('b.stale', [{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
    const warnings: QueueWarning[] = [];
    q.on('warning', (w) => warnings.push(w));
    const inHandler = deferred();
    const release = deferred();
    await q.work('b.stale', { batch: true, ...fast }, async (jobs) => {
      inHandler.resolve();
      await release.promise;
      return jobs.map((j) => j.id);
    });
    await inHandler.promise;
    await q.cancel('b.stale', cancelled!);
    // the lease of one job runs out in the database (the worker's own clock has not seen it); another instance
    // reaps it and claims it again
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, [taken]);
    const other = f.create({ supervise: false });
    await other.maintain({ force: true });
    await f.sql(`UPDATE $schema.jobs SET start_after = now() WHERE id = $1`, [taken]);
    const [again] = await other.fetch('b.stale');
    expect(again!.id).toBe(taken);
    release.resolve();
    await until(async () => (await q.getJobById('b.stale', kept!))!.state === 'completed', 'the held job completed');
    expect((await q.getJobById('b.stale', cancelled!))!.state).toBe('cancelled');
    expect(await q.getJobById('b.stale', taken!)).toMatchObject({ state: 'active', retryCount: 1 });
    expect((await q.getJobById('b.stale', kept!))!.output).toEqual([cancelled, taken, kept]);
    await until(() => warnings.filter((w) => w.type === 'stale-result').length >= 1, 'the refusal reported');
    // the new holder's result is the one that counts
    expect((await other.complete('b.stale', { id: taken!, retryCount: again!.retryCount }, 'new holder')).updated).toBe(1);
    expect((await q.getJobById('b.stale', taken!))!.output).toBe('new holder');
  });

  it('each job keeps its own lease: one that runs out fails alone, and the rest complete when the handler returns', async () => {
    const q = f.create();
    await q.createQueue('b.lease', { retryLimit: 1, retryDelay: 3600 });
    const [short] = await q.insert('b.lease', [{ data: 'short', expireInSeconds: 1 }]);
    const [long] = await q.insert('b.lease', [{ data: 'long' }]);
    await q.work('b.lease', { batch: true, ...fast }, async (jobs: BatchJob<string>[]) => {
      const s = jobs.find((j) => j.data === 'short')!;
      // the short job's signal is aborted when its lease runs out; the handler then returns for the batch
      await new Promise((resolve) => s.signal.addEventListener('abort', resolve, { once: true }));
      return 'done';
    });
    await until(async () => (await q.getJobById('b.lease', long!))!.state === 'completed', 'the long job completed', 20_000);
    await until(async () => (await q.getJobById('b.lease', short!))!.state !== 'active', 'the short job settled');
    const expired = (await q.getJobById('b.lease', short!))!;
    expect(expired).toMatchObject({ state: 'retry', retryCount: 1 });
    expect(expired.lastError).toMatchObject({ name: 'LeaseExpiredError' });
    expect((await q.getJobById('b.lease', long!))!.output).toBe('done');
  });

  it('job.heartbeat() keeps each job of a batch alive, fenced to its attempt', async () => {
    const q = f.create();
    await q.createQueue('b.beat', { heartbeatSeconds: 10 });
    const [a, b] = await q.insert('b.beat', [{ data: 1 }, { data: 2 }]);
    const release = deferred();
    const beat = deferred();
    await q.work('b.beat', { batch: true, ...fast }, async (jobs) => {
      await f.sql(`UPDATE $schema.jobs SET heartbeat_until = now() + interval '1 second' WHERE id = ANY($1::bigint[])`, [[a, b]]);
      await jobs.find((j) => j.id === b)!.heartbeat();
      beat.resolve();
      await release.promise;
    });
    await beat.promise;
    const rows = await f.sql<{ id: string; left: number }>(
      `SELECT id::text, extract(epoch FROM heartbeat_until - now())::float8 AS left FROM $schema.jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[a, b]],
    );
    const left = new Map(rows.map((r) => [r.id, r.left]));
    expect(left.get(b!)).toBeGreaterThan(5);
    expect(left.get(a!)).toBeLessThanOrEqual(1);
    release.resolve();
    await until(async () => (await stateCounts(f.pool, f.schema, 'b.beat')).completed === 2, 'both completed');
  });

  it('runs no more batch calls at once than its concurrency', async () => {
    const q = f.create();
    await q.createQueue('b.conc');
    await q.insert(
      'b.conc',
      Array.from({ length: 40 }, () => ({})),
    );
    let running = 0;
    let peak = 0;
    const sizes: number[] = [];
    await q.work('b.conc', { batch: true, batchSize: 4, concurrency: 2, ...fast }, async (jobs) => {
      running++;
      peak = Math.max(peak, running);
      sizes.push(jobs.length);
      await new Promise((resolve) => setImmediate(resolve));
      await f.sql('SELECT pg_sleep(0.02)');
      running--;
    });
    await until(async () => (await stateCounts(f.pool, f.schema, 'b.conc')).completed === 40, 'all 40 completed');
    expect(peak).toBe(2);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(sizes.reduce((n, s) => n + s, 0)).toBe(40);
  });

  it('a call whose jobs are all settled early frees its place: the next batch runs while the handler still does', async () => {
    const q = f.create();
    await q.createQueue('b.early');
    const hang = deferred();
    const calls: string[][] = [];
    await q.work('b.early', { batch: true, batchSize: 2, ...fast }, async (jobs: BatchJob<string>[]) => {
      calls.push(jobs.map((j) => j.data));
      if (jobs.some((j) => j.data === 'first')) {
        for (const j of jobs) await j.complete('early');
        await hang.promise;
      }
      return 'second';
    });
    const [first] = await q.insert('b.early', [{ data: 'first' }]);
    await until(async () => (await q.getJobById('b.early', first!))!.state === 'completed', 'the first completed early');
    const [second] = await q.insert('b.early', [{ data: 'next' }]);
    await until(async () => (await q.getJobById('b.early', second!))!.state === 'completed', 'the next batch ran');
    expect(calls).toEqual([['first'], ['next']]);
    hang.resolve();
  });

  it('job.complete() with an output JSON cannot hold fails that job and rejects with the reason; a Map with stray keys is logged', async () => {
    const q = f.create();
    await q.createQueue('b.bad', { retryLimit: 0 });
    const [bad, good] = await q.insert('b.bad', [{ data: 'bad' }, { data: 'good' }]);
    let refused: unknown;
    await q.work('b.bad', { batch: true, ...fast }, async (jobs: BatchJob<string>[]) => {
      refused = await jobs
        .find((j) => j.data === 'bad')!
        .complete({ n: 1n })
        .catch((e) => e);
      return new Map<unknown, unknown>([
        [jobs.find((j) => j.data === 'good')!.id, 'fine'],
        [Number(jobs[0]!.id), 'a number is no job id'],
      ]);
    });
    await until(async () => (await q.getJobById('b.bad', good!))!.state === 'completed', 'the good one completed');
    expect(refused).toBeInstanceOf(InvalidPayloadError);
    expect((refused as Error).message).toContain('job.complete() output');
    const failed = (await q.getJobById('b.bad', bad!))!;
    expect(failed.state).toBe('failed');
    expect(failed.lastError!.message).toContain('a BigInt at n');
    expect((await q.getJobById('b.bad', good!))!.output).toBe('fine');
    const warning = f.logger.lines.find((l) => l.level === 'warn' && l.message.includes('queue "b.bad" returned'));
    expect(warning?.message).toContain('returned 1 result(s) that name no job of its batch of 2 (number)');
  });

  it('at shutdown a batch that outlives the timeout is handed back, no attempt counted', async () => {
    const q = f.create({ shutdownTimeoutMs: 200 });
    await q.createQueue('b.stop');
    const [done, ...ids] = await q.insert('b.stop', [{ data: 0 }, { data: 1 }, { data: 2 }]);
    const inHandler = deferred();
    const never = deferred();
    await q.work('b.stop', { batch: true, ...fast }, async (jobs) => {
      // one job settled early: shutdown must not wait for the call it came from
      await jobs.find((j) => j.id === done)!.complete('before the hang');
      inHandler.resolve();
      await never.promise;
    });
    await inHandler.promise;
    await q.offWork('b.stop');
    expect(await q.getJobById('b.stop', done!)).toMatchObject({ state: 'completed', output: 'before the hang' });
    for (const id of ids) expect(await q.getJobById('b.stop', id)).toMatchObject({ state: 'created', retryCount: 0 });
    never.resolve();
  });

  it('refuses batch with transactional, naming the option', async () => {
    const q = f.create();
    await q.createQueue('b.tx');
    const err = await q.work('b.tx', { batch: true, transactional: true }, () => undefined).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.message).toContain('options.transactional');
  });
});
