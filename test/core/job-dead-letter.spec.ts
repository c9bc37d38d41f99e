// A job's own deadLetter (a send option) is checked as a queue's is: it must name a queue that exists and is not
// key_strict_fifo. Unchecked, a misspelt one was stored and the job's copy was lost at its last failure. Every way a
// job is made refuses it, naming the field, before anything is written; a good one gets its copy.
import pg from 'pg';
import { InvalidOptionError, PermanentJobError } from '../../lib/core/errors.js';
import { PgQueue, runtimeOf } from '../../lib/core/pg-queue.js';
import { testUrl } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('jobdl');
const q = f.create({ supervise: false });
const Q = 'jdl.q';
const DLQ = 'jdl.dlq';
const FIFO = 'jdl.fifo';
beforeAll(async () => {
  await q.createQueue(DLQ);
  await q.createQueue(FIFO, { policy: 'key_strict_fifo' });
  await q.createQueue(Q, { retryLimit: 0 });
  await q.subscribe('jdl.event', Q);
});
afterAll(() => f.cleanup());

const MISSING = 'jdl.dlq-typo';

async function snapshot(): Promise<Record<string, number>> {
  const [row] = await f.sql<Record<string, number>>(
    `SELECT (SELECT count(*) FROM $schema.jobs)::int AS jobs, (SELECT count(*) FROM $schema.schedules)::int AS schedules,
      (SELECT count(*) FROM $schema.jobs WHERE dead_letter IS NOT NULL)::int AS with_dead_letter`,
  );
  return row!;
}

const calls: [string, (deadLetter: string) => Promise<unknown>, string][] = [
  ['send', (dl) => q.send(Q, {}, { deadLetter: dl }), 'options.deadLetter'],
  ['enqueue', (dl) => q.enqueue(Q, {}, { deadLetter: dl }), 'options.deadLetter'],
  ['sendAfter', (dl) => q.sendAfter(Q, {}, { deadLetter: dl }, 60), 'options.deadLetter'],
  ['sendThrottled', (dl) => q.sendThrottled(Q, {}, { deadLetter: dl }, 60, 'k'), 'options.deadLetter'],
  ['sendDebounced', (dl) => q.sendDebounced(Q, {}, { deadLetter: dl }, 60, 'k'), 'options.deadLetter'],
  ['insert', (dl) => q.insert(Q, [{ data: 1 }, { data: 2, deadLetter: dl }]), 'jobs[1].deadLetter'],
  [
    'flow',
    (dl) =>
      q.flow([
        { name: Q, ref: 'parent' },
        { name: DLQ, ref: 'other' },
        { name: Q, ref: 'child', dependsOn: ['parent'], deadLetter: dl },
      ]),
    'jobs[2].deadLetter',
  ],
  ['schedule', (dl) => q.schedule(Q, '0 * * * *', {}, { deadLetter: dl }), 'options.deadLetter'],
  ['publish', (dl) => q.publish('jdl.event', {}, { deadLetter: dl }), 'options.deadLetter'],
  ['upsert', (dl) => q.upsert(Q, {}, { singletonKey: 'u', deadLetter: dl }), 'options.deadLetter'],
];

describe("a job's own deadLetter", () => {
  it.each(calls)('%s refuses one that names no queue, naming the field, and writes nothing', async (_call, call, field) => {
    const before = await snapshot();
    const err = await call(MISSING).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err).toMatchObject({ field, value: MISSING });
    expect((err as Error).message).toBe(
      `${field} must be an existing queue (it receives a copy of the job after its last failure), got "${MISSING}"`,
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each(calls)('%s refuses a key_strict_fifo queue', async (_call, call, field) => {
    const before = await snapshot();
    const err = await call(FIFO).catch((e: unknown) => e);
    expect(err).toMatchObject({ field, value: FIFO });
    expect((err as Error).message).toContain('a queue whose policy is not key_strict_fifo');
    expect(await snapshot()).toEqual(before);
  });

  it('update refuses one that names no queue, and leaves the job as it was', async () => {
    const id = (await q.send(Q, {}, { deadLetter: DLQ }))!;
    await expect(q.update(Q, undefined, { id, deadLetter: MISSING })).rejects.toMatchObject({ field: 'options.deadLetter' });
    expect((await q.getJobById(Q, id))!.deadLetter).toBe(DLQ);
    await q.deleteJob(Q, id);
  });

  it('names the queue first when the queue sent to does not exist either', async () => {
    await expect(q.send('jdl.nowhere', {}, { deadLetter: MISSING })).rejects.toMatchObject({ code: 'QUEUE_NOT_FOUND' });
  });

  it('a queue that exists is taken, and receives the copy at the last failure', async () => {
    const id = (await q.send(Q, { n: 1 }, { deadLetter: DLQ }))!;
    expect((await q.getJobById(Q, id))!.deadLetter).toBe(DLQ);
    await q.fetch(Q);
    await q.fail(Q, id, new PermanentJobError('no'));
    const [copy] = await f.sql<{ data: unknown }>(`SELECT data FROM $schema.jobs WHERE queue = $1 AND source_id = $2`, [DLQ, id]);
    expect(copy).toEqual({ data: { n: 1 } });
  });

  it('is read once per engine and queue: later sends that name it, and sends that name none, send the insert alone', async () => {
    // a pool handed in, whose statements the test sees (the engine sends them through pool.query)
    const pool = new pg.Pool({ connectionString: testUrl(), max: 2 });
    const sent: string[] = [];
    const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
    pool.query = ((config: pg.QueryConfig) => {
      sent.push(config.text);
      return query(config);
    }) as typeof pool.query;
    const engine = new PgQueue({ pool, schema: f.schema, supervise: false, workers: false, logger: f.logger });
    try {
      await engine.send(Q, {}); // reads the profile of the queue sent to
      const { statements } = runtimeOf(engine);
      const count = () => ({
        profiles: sent.filter((t) => t === statements.getClaimProfile).length,
        inserts: sent.filter((t) => t.trimStart().startsWith(`INSERT INTO "${f.schema}".jobs`)).length,
      });
      sent.length = 0;
      for (let i = 0; i < 5; i++) await engine.send(Q, {}, { deadLetter: DLQ });
      expect(count()).toEqual({ profiles: 1, inserts: 5 });
      sent.length = 0;
      for (let i = 0; i < 5; i++) await engine.send(Q, {}, { deadLetter: DLQ });
      for (let i = 0; i < 5; i++) await engine.send(Q, {});
      expect(count()).toEqual({ profiles: 0, inserts: 10 });
    } finally {
      await engine.close();
      await pool.end();
    }
    await q.deleteQueuedJobs(Q);
  });
});
