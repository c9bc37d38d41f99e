// An option is never accepted and ignored, at every entry point: an unknown name (pg-boss's names get what to write
// instead), an option an argument already gives (options.data, options.startAfter beside sendAfter's start, a key
// beside sendThrottled's key argument), or one given where it would do nothing (a job's own db in insert and flow,
// poolSize beside a pool) is an InvalidOptionError naming the field, and nothing is written.
import pg from 'pg';
import { InvalidOptionError } from '../../lib/core/errors.js';
import { defineJob } from '../../lib/core/job-definition.js';
import { PgQueue } from '../../lib/core/pg-queue.js';
import type { WorkOptions } from '../../lib/core/types.js';
import { testUrl } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('ignored');
const q = f.create({ supervise: false });
const Q = 'io.q';
beforeAll(async () => {
  await q.createQueue(Q);
  await q.subscribe('io.event', Q);
});
afterAll(() => f.cleanup());

const noop = () => undefined;
/** Work options with a key the type does not have, as a JavaScript caller (or a cast) may give them. */
const unknownWork = (options: object) => options as WorkOptions;

interface Case {
  what: string;
  call: () => unknown;
  field: string;
  /** Fragments of the message besides the field: what is accepted, or what to write instead. */
  says: string[];
}

const cases: Case[] = [
  // work(): unknown keys, pg-boss's names among them
  {
    what: "work() with pg-boss 12's localConcurrency",
    call: () => q.work(Q, unknownWork({ localConcurrency: 4 }), noop),
    field: 'options.localConcurrency',
    says: ["pg-boss 12's localConcurrency is concurrency here"],
  },
  {
    what: "work() with pg-boss's teamSize",
    call: () => q.work(Q, unknownWork({ teamSize: 4 }), noop),
    field: 'options.teamSize',
    says: ['is concurrency here'],
  },
  {
    what: "work() with pg-boss's teamConcurrency",
    call: () => q.work(Q, unknownWork({ teamConcurrency: 4 }), noop),
    field: 'options.teamConcurrency',
    says: ['is concurrency here'],
  },
  {
    what: "work() with pg-boss's newJobCheckInterval",
    call: () => q.work(Q, unknownWork({ newJobCheckInterval: 500 }), noop),
    field: 'options.newJobCheckInterval',
    says: ['is pollingIntervalSeconds here, in seconds'],
  },
  {
    what: "work() with pg-boss's newJobCheckIntervalSeconds",
    call: () => q.work(Q, unknownWork({ newJobCheckIntervalSeconds: 1 }), noop),
    field: 'options.newJobCheckIntervalSeconds',
    says: ['is pollingIntervalSeconds here'],
  },
  {
    what: "work() with pg-boss's transactionTimeoutSeconds",
    call: () => q.work(Q, unknownWork({ transactionTimeoutSeconds: 5 }), noop),
    field: 'options.transactionTimeoutSeconds',
    says: ['no counterpart'],
  },
  {
    what: 'work() with a misspelt option',
    call: () => q.work(Q, unknownWork({ concurency: 4 }), noop),
    field: 'options.concurency',
    says: ['did you mean concurrency?', 'got 4'],
  },
  // fetch()
  {
    what: "fetch() with pg-boss's orderByCreatedOn",
    call: () => q.fetch(Q, { orderByCreatedOn: false } as never),
    field: 'options.orderByCreatedOn',
    says: ['priority: false'],
  },
  {
    what: 'fetch() with a db that is no client',
    call: () => q.fetch(Q, { db: {} }),
    field: 'options.db',
    says: ['a Drizzle database or transaction, or a pg Client'],
  },
  // the payload is an argument of every send
  {
    what: 'send() with options.data',
    call: () => q.send(Q, { a: 1 }, { data: { a: 2 } } as never),
    field: 'options.data',
    says: ["the payload is the call's data argument"],
  },
  {
    what: 'enqueue() with options.data',
    call: () => q.enqueue(Q, { a: 1 }, { data: { a: 2 } } as never),
    field: 'options.data',
    says: ['data argument'],
  },
  {
    what: 'sendAfter() with options.data',
    call: () => q.sendAfter(Q, { a: 1 }, { data: { a: 2 } } as never, 5),
    field: 'options.data',
    says: ['data argument'],
  },
  {
    what: 'sendThrottled() with options.data',
    call: () => q.sendThrottled(Q, { a: 1 }, { data: { a: 2 } } as never, 60),
    field: 'options.data',
    says: ['data argument'],
  },
  {
    what: 'sendDebounced() with options.data',
    call: () => q.sendDebounced(Q, { a: 1 }, { data: { a: 2 } } as never, 60),
    field: 'options.data',
    says: ['data argument'],
  },
  {
    what: 'publish() with options.data',
    call: () => q.publish('io.event', { a: 1 }, { data: { a: 2 } } as never),
    field: 'options.data',
    says: ['data argument'],
  },
  {
    what: 'schedule() with options.data',
    call: () => q.schedule(Q, '* * * * *', { a: 1 }, { data: { a: 2 } } as never),
    field: 'options.data',
    says: ["schedule()'s third argument"],
  },
  // what a positional argument gives, given in the options too
  {
    what: 'sendAfter() with options.startAfter',
    call: () => q.sendAfter(Q, {}, { startAfter: 60 }, 5),
    field: 'options.startAfter',
    says: ["sendAfter's startAfter argument is the start", 'got 60'],
  },
  {
    what: 'sendThrottled() with options.singletonKey beside its key',
    call: () => q.sendThrottled(Q, {}, { singletonKey: 'a' }, 60, 'b'),
    field: 'options.singletonKey',
    says: ['the key argument is the throttle key', 'got "a"'],
  },
  {
    what: 'sendThrottled() with the same key twice',
    call: () => q.sendThrottled(Q, {}, { singletonKey: 'a' }, 60, 'a'),
    field: 'options.singletonKey',
    says: ['left out when the key argument is given'],
  },
  {
    what: 'sendDebounced() with options.singletonKey beside its key',
    call: () => q.sendDebounced(Q, {}, { singletonKey: 'a' }, 60, 'b'),
    field: 'options.singletonKey',
    says: ['the key argument is the throttle key'],
  },
  // insert() and flow(): the connection is the call's
  {
    what: 'insert() with a db on one job',
    call: () => q.insert(Q, [{ data: 1 }, { data: 2, db: {} } as never]),
    field: 'jobs[1].db',
    says: ['insert(name, jobs, { db })'],
  },
  {
    what: "insert() with pg-boss's returnId",
    call: () => q.insert(Q, [{ data: 1 }], { returnId: true } as never),
    field: 'options.returnId',
    says: ['always answers the ids'],
  },
  {
    what: 'flow() with a db on one job',
    call: () => q.flow([{ name: Q, ref: 'a' }, { name: Q, ref: 'b', dependsOn: ['a'], db: {} } as never]),
    field: 'jobs[1].db',
    says: ['flow(jobs, { db })'],
  },
  {
    what: "flow() with pg-boss's options object",
    call: () => q.flow([{ name: Q, ref: 'a', options: { retryLimit: 1 } } as never]),
    field: 'jobs[0].options',
    says: ['sit on the job itself'],
  },
  {
    what: 'flow() with a misspelt call option',
    call: () => q.flow([{ name: Q, ref: 'a' }], { dbb: {} } as never),
    field: 'options.dbb',
    says: ['did you mean db?'],
  },
  // queue options at each entry point
  {
    what: 'createQueue() with a worker option',
    call: () => q.createQueue('io.never', { concurrency: 2 } as never),
    field: 'options.concurrency',
    says: ['known options (policy,'],
  },
  {
    what: 'ensureQueue() with a misspelt option',
    call: () => q.ensureQueue('io.never', { retryLimt: 2 } as never),
    field: 'options.retryLimt',
    says: ['did you mean retryLimit?'],
  },
  {
    what: 'updateQueue() with an unknown option',
    call: () => q.updateQueue(Q, { name: 'x' } as never),
    field: 'options.name',
    says: ['known options'],
  },
  {
    what: 'defineJob() with a worker option',
    call: () => defineJob('io.never', { concurrency: 2 } as never),
    field: 'options.concurrency',
    says: ['@QueueHandler(job, { concurrency })'],
  },
  // module options beside a pool handed in
  {
    what: 'poolSize beside a pool',
    call: () => new PgQueue({ pool: f.pool, schema: f.schema, poolSize: 2 }),
    field: 'poolSize',
    says: ['the pool handed in keeps its own size'],
  },
  {
    what: 'preparedStatements: true beside a pool',
    call: () => new PgQueue({ pool: f.pool, schema: f.schema, preparedStatements: true }),
    field: 'preparedStatements',
    says: ['false or left out with pool'],
  },
];

async function snapshot(): Promise<Record<string, number>> {
  const [row] = await f.sql<Record<string, number>>(
    `SELECT (SELECT count(*) FROM $schema.jobs)::int AS jobs, (SELECT count(*) FROM $schema.queues)::int AS queues,
      (SELECT count(*) FROM $schema.schedules)::int AS schedules`,
  );
  return row!;
}

describe('an option is never accepted and ignored', () => {
  it.each(cases.map((c) => [c.what, c] as const))('%s: refused naming the field, nothing written', async (_what, c) => {
    const before = await snapshot();
    let thrown: unknown;
    try {
      await c.call();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError);
    expect(thrown).toMatchObject({ field: c.field });
    expect((thrown as Error).message.startsWith(`${c.field} must be `)).toBe(true);
    for (const fragment of c.says) expect((thrown as Error).message).toContain(fragment);
    expect(await snapshot()).toEqual(before);
    expect(q.workerCount).toBe(0);
  });

  it("a job of insert() with a transaction of its own is refused: no job goes in outside the caller's transaction", async () => {
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      const err = await q.insert(Q, [{ data: 'a', db: client } as never]).catch((e: unknown) => e);
      expect(err).toMatchObject({ field: 'jobs[0].db' });
      const flowErr = await q.flow([{ name: Q, ref: 'x', data: 'x', db: client } as never]).catch((e: unknown) => e);
      expect(flowErr).toMatchObject({ field: 'jobs[0].db' });
      // the call's own db puts them in the caller's transaction
      const [id] = await q.insert(Q, [{ data: 'b' }], { db: client });
      await client.query('ROLLBACK');
      expect(await q.getJobById(Q, id!)).toBeNull();
    } finally {
      client.release();
    }
    expect((await snapshot()).jobs).toBe(0);
  });

  it('sendThrottled with a null key throttles by options.singletonKey, as with none', async () => {
    const first = await q.sendThrottled(Q, {}, { singletonKey: 'nk' }, 3600, null);
    expect(first).not.toBeNull();
    expect(await q.sendThrottled(Q, {}, { singletonKey: 'nk' }, 3600, null)).toBeNull();
    expect((await q.getJobById(Q, first!))!.singletonKey).toBe('nk');
    await q.deleteJob(Q, first!);
  });

  it("sendAfter's start is its argument, named as such when it is bad", async () => {
    await expect(q.sendAfter(Q, {}, {}, 1.5)).rejects.toMatchObject({ field: 'startAfter' });
    const id = (await q.sendAfter(Q, {}, { priority: 2 }, 3600))!;
    const job = (await q.getJobById(Q, id))!;
    expect(job.priority).toBe(2);
    expect(job.startAfter!.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    await q.deleteJob(Q, id);
  });

  it('preparedStatements: false beside a pool is accepted, and the engine prepares nothing on that pool', async () => {
    // one connection: every statement of the engine and the check below share its session
    const handed = new pg.Pool({ connectionString: testUrl(), max: 1 });
    const engine = new PgQueue({ pool: handed, schema: f.schema, supervise: false, preparedStatements: false, logger: f.logger });
    try {
      await engine.send(Q, { via: 'handed' });
      await engine.insert(Q, [{ data: 1 }, { data: 2 }]);
      const { rows } = await handed.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'pgq_%'");
      expect(rows[0]!.n).toBe(0);
    } finally {
      await engine.close();
      await handed.end();
    }
    await q.deleteQueuedJobs(Q);
  });
});
