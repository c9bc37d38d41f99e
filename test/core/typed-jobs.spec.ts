// Jobs declared with defineJob() against a real database: the schema checks a payload at the send (nothing is
// written when it refuses) and before the handler runs (a payload it refuses fails the job for good, no retry);
// a payload it cleans is stored and handled as cleaned.
import { InvalidOptionError, InvalidPayloadError } from '../../lib/core/errors.js';
import { defineJob, type JobSchema } from '../../lib/core/job-definition.js';
import type { BatchJob } from '../../lib/core/types.js';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('typed');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

/** A schema as zod's: parse() returns the payload with only its known field, or throws. */
const userSchema: JobSchema<{ userId: string }> = {
  parse(d: unknown) {
    const userId = (d as { userId?: unknown } | null)?.userId;
    if (typeof userId !== 'string') throw new Error(`userId: expected a string, received ${typeof userId}`);
    return { userId };
  },
};

describe('defineJob', () => {
  it('send, enqueue and insert check the payload with the schema; a refusal names the field and writes nothing', async () => {
    const q = f.create({ supervise: false });
    const Welcome = defineJob('typed.welcome', { schema: userSchema });
    await q.createQueue(Welcome.name);
    const id = (await q.send(Welcome, { userId: 'u1', extra: 'dropped' } as { userId: string }))!;
    expect((await q.getJobById(Welcome.name, id))!.data).toEqual({ userId: 'u1' });
    const refused = q.send(Welcome, { userId: 7 } as never);
    await expect(refused).rejects.toBeInstanceOf(InvalidPayloadError);
    await expect(q.send(Welcome, {} as never)).rejects.toMatchObject({
      field: 'data',
      message: 'data must be accepted by the schema of job "typed.welcome", got userId: expected a string, received undefined',
    });
    await expect(q.enqueue(Welcome, null as never)).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await expect(q.insert(Welcome, [{ data: { userId: 'a' } }, { data: { userId: 2 } as never }])).rejects.toMatchObject({
      field: 'jobs[1].data',
    });
    // nothing but the first send was written
    expect((await q.findJobs(Welcome.name)).jobs.map((j) => j.id)).toEqual([id]);
    const ids = await q.insert(Welcome, [{ data: { userId: 'b' } }, { data: { userId: 'c' } }]);
    expect(ids).toHaveLength(2);
  });

  it('a handler of the declared job gets the payload as parsed; one the schema refuses fails for good without running it', async () => {
    const q = f.create({ supervise: false });
    const Welcome = defineJob('typed.work', { schema: userSchema });
    await q.createQueue(Welcome.name, { retryLimit: 3 });
    // sent by plain name, as an older producer would: the schema is not consulted there
    const bad = (await q.send(Welcome.name, { userId: 99 }))!;
    const good = (await q.send(Welcome.name, { userId: 'u2', extra: true }))!;
    const seen: unknown[] = [];
    await q.work(Welcome, { pollingIntervalSeconds: 0.1 }, async (job) => {
      seen.push(job.data);
    });
    await until(async () => (await q.getJobById(Welcome.name, good))?.state === 'completed', 'the good job completes');
    const failed = await until(async () => {
      const j = await q.getJobById(Welcome.name, bad);
      return j?.state === 'failed' ? j : null;
    }, 'the bad job fails');
    expect(failed.retryCount).toBe(0);
    expect(failed.lastError?.message).toContain('the payload is not accepted by the schema of job "typed.work": userId: expected a string');
    expect(seen).toEqual([{ userId: 'u2' }]);
    // the handler keeps its name: the task the cluster registry shows
    await q.work(Welcome, { pollingIntervalSeconds: 0.1 }, async function sendWelcome() {});
    await until(
      async () => (await q.getWorkers()).some((w) => w.loops.some((l) => l.task === 'sendWelcome')),
      "the loop listed under its handler's name",
    );
  });

  it('a batch handler gets the jobs the schema accepts; each refused one fails on its own', async () => {
    const q = f.create({ supervise: false });
    const Welcome = defineJob('typed.batch', { schema: userSchema });
    await q.createQueue(Welcome.name, { retryLimit: 3 });
    const ids = await q.insert(Welcome.name, [{ data: { userId: 'a' } }, { data: { userId: 1 } }, { data: { userId: 'c' } }]);
    const batches: string[][] = [];
    await q.work(Welcome, { batch: true, batchSize: 10, pollingIntervalSeconds: 0.1 }, async (jobs: BatchJob<{ userId: string }>[]) => {
      batches.push(jobs.map((j) => j.data.userId));
    });
    await until(async () => (await q.findJobs(Welcome.name, { state: ['completed', 'failed'] })).jobs.length === 3, 'all three settle');
    const states = await Promise.all(ids.map(async (id) => (await q.getJobById(Welcome.name, id))!.state));
    expect(states).toEqual(['completed', 'failed', 'completed']);
    expect(batches.flat().sort()).toEqual(['a', 'c']);
  });

  it('refuses a bad declaration naming the field', () => {
    expect(() => defineJob('bad name!')).toThrow(InvalidOptionError);
    expect(() => defineJob('ok', { schema: {} as never })).toThrow(/options\.schema must be an object with a parse\(data\) method/);
    const j = defineJob<{ a: number }>('typed.plain', { retryLimit: 5 });
    expect(j).toMatchObject({ name: 'typed.plain', options: { retryLimit: 5 }, schema: null });
    expect(Object.isFrozen(j)).toBe(true);
  });
});
