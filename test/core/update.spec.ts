import { InvalidOptionError, QueueNotFoundError } from '../../lib/core/errors.js';
import { defineJob } from '../../lib/core/job-definition.js';
import { testPool, until } from '../helpers/db.js';
import { engineStatements, queueFixture } from '../helpers/queue.js';
import { claimArgs } from '../../lib/core/sql/index.js';
import { asleepSessions, listen, untilAsleep } from '../helpers/wake.js';

const f = queueFixture('update');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

/** The engine's claim of one job of the queue on a connection of its own, its transaction left open. */
async function holdClaim() {
  const pool = testPool(1);
  const claim = await pool.connect();
  await claim.query('BEGIN');
  const st = await engineStatements(q, name);
  const request = { queue: name, limit: 1, workerId: 'held-claim', minPriority: null, maxPriority: null, asyncCommit: false };
  const rows = (await claim.query<{ id: string }>(st.claimJobs, claimArgs(request))).rows;
  const done = async () => {
    claim.release();
    await pool.end();
  };
  return { claim, claimed: rows.map((r) => String(r.id)), done };
}

/** Until an update of this schema waits on a row lock (a claim another connection holds). */
async function untilUpdateWaits(): Promise<void> {
  const waiting = `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH target AS%' AND query LIKE $1`;
  await until(async () => (await f.sql(waiting, [`%"${f.schema}"%`])).length > 0, 'the update waits on the row lock');
}

let name = 'u';
let queues = 0;
beforeEach(async () => {
  // A queue per test, so what one test leaves waiting is never changed by the next.
  name = `u${++queues}`;
  await q.createQueue(name, { retryLimit: 2, retryDelay: 5, expireInSeconds: 60, retentionSeconds: 3600 });
});

interface Stored {
  state: string;
  data: unknown;
  priority: number;
  retry_limit: number;
  retry_delay: number;
  retry_backoff: boolean;
  retry_delay_max: number | null;
  expire_seconds: number;
  heartbeat_seconds: number | null;
  delete_after_seconds: number;
  dead_letter: string | null;
  singleton_key: string | null;
  /** Seconds from the database's now to start_after (null: infinity). */
  start_in: number | null;
  /** start_after itself, as text: to the microsecond, where a Date keeps milliseconds. */
  start_at: string;
  /** keep_until − start_after, in seconds (null: either is infinity). */
  retention: number | null;
  fifo_wait: number;
}

async function stored(id: string): Promise<Stored> {
  const [row] = await f.sql<Stored>(
    `SELECT state::text, data, priority, retry_limit, retry_delay, retry_backoff, retry_delay_max, expire_seconds,
      heartbeat_seconds, delete_after_seconds, dead_letter, singleton_key, fifo_wait,
      CASE WHEN start_after = 'infinity' THEN NULL ELSE extract(epoch FROM start_after - now())::float8 END AS start_in,
      start_after::text AS start_at,
      CASE WHEN keep_until = 'infinity' OR start_after = 'infinity' THEN NULL
        ELSE extract(epoch FROM keep_until - start_after)::float8 END AS retention
    FROM $schema.jobs WHERE id = $1`,
    [id],
  );
  return row!;
}

const send = async (data: unknown, options: Record<string, unknown> = {}) => (await q.send(name, data, options))!;

describe('update', () => {
  it('by id: changes the payload and only the options given; the others stay', async () => {
    const id = await send({ v: 1 }, { priority: 3, startAfter: 600, retryLimit: 4 });
    const before = await stored(id);
    await q.ensureQueue('dlq');
    expect(await q.update(name, { v: 2 }, { id, retryDelay: 9, deadLetter: 'dlq' })).toEqual({ jobs: [id], updated: 1 });
    const after = await stored(id);
    expect(after).toMatchObject({ data: { v: 2 }, retry_delay: 9, dead_letter: 'dlq', priority: 3, retry_limit: 4 });
    // start_after itself, not start_in: start_in is read against each read's own now(), which moves on between them
    expect(after.start_at).toBe(before.start_at);
    expect(after.expire_seconds).toBe(before.expire_seconds);
  });

  it('a group changes as a whole; null clears it', async () => {
    const id = await send({}, { group: { id: 'a', tier: 'gold' } });
    const group = async () =>
      (
        await f.sql<{ group_id: string | null; group_tier: string | null }>('SELECT group_id, group_tier FROM $schema.jobs WHERE id = $1', [
          id,
        ])
      )[0];
    await q.update(name, undefined, { id, group: { id: 'b' } });
    expect(await group()).toEqual({ group_id: 'b', group_tier: null });
    await q.update(name, undefined, { id, priority: 1 });
    expect(await group()).toEqual({ group_id: 'b', group_tier: null });
    await q.update(name, undefined, { id, group: null } as never);
    expect(await group()).toEqual({ group_id: null, group_tier: null });
  });

  it('a queue made with notify: false is not woken', async () => {
    await q.createQueue(`${name}.quiet`, { notify: false });
    const quiet = `${name}.quiet`;
    const id = (await q.send(quiet, {}, { startAfter: 3600 }))!;
    const heard = await listen(q.config.channel);
    try {
      await q.update(quiet, undefined, { id, startAfter: 0 });
      await q.update(name, undefined, { id: await send({}, { startAfter: 3600 }), startAfter: 0 });
      // the NOTIFY for the second queue comes after any for the first: once it is heard, the first's would have been
      await until(() => heard.heard.includes(name), 'the wake-up of the queue that notifies');
      expect(heard.heard).not.toContain(quiet);
    } finally {
      await heard.stop();
    }
  });

  it('data undefined keeps the payload; null clears it', async () => {
    const id = await send({ v: 1 });
    await q.update(name, undefined, { id, priority: 7 });
    expect(await stored(id)).toMatchObject({ data: { v: 1 }, priority: 7 });
    await q.update(name, null, { id });
    expect((await stored(id)).data).toBeNull();
  });

  it('every changeable option is stored as send() stores it', async () => {
    await q.createQueue(`${name}.hb`, { heartbeatSeconds: 30, retryDelayMax: 100 });
    const id = (await q.send(`${name}.hb`, {}, { heartbeatSeconds: 5, retryDelayMax: 10 }))!;
    await q.update(`${name}.hb`, undefined, {
      id,
      priority: -2,
      startAfter: 120,
      retryLimit: 6,
      retryDelay: 2,
      retryBackoff: true,
      expireInSeconds: 30,
      deleteAfterSeconds: 99,
      retentionSeconds: 500,
    });
    const s = await stored(id);
    expect(s).toMatchObject({ priority: -2, retry_limit: 6, retry_delay: 2, retry_backoff: true, expire_seconds: 30 });
    expect(s).toMatchObject({ delete_after_seconds: 99, heartbeat_seconds: 5, retry_delay_max: 10 });
    expect(s.start_in).toBeGreaterThan(110);
    expect(s.start_in).toBeLessThanOrEqual(120);
    expect(s.retention).toBeCloseTo(500, 0);
    // null: the queue's setting, as send() takes it
    await q.update(`${name}.hb`, undefined, { id, heartbeatSeconds: null, retryDelayMax: null });
    expect(await stored(id)).toMatchObject({ heartbeat_seconds: 30, retry_delay_max: 100 });
    // a date moves the start, and the retention the job waits goes with it
    const at = new Date(Date.now() + 3_600_000);
    await q.update(`${name}.hb`, undefined, { id, startAfter: at.toISOString() });
    const moved = await stored(id);
    expect(moved.start_in).toBeGreaterThan(3_500);
    expect(moved.retention).toBeCloseTo(500, 0);
  });

  it('by singletonKey: newest (the default), oldest, or all of the key; other keys stay', async () => {
    const a = await send({ n: 'a' }, { singletonKey: 'k' });
    const b = await send({ n: 'b' }, { singletonKey: 'k' });
    const c = await send({ n: 'c' }, { singletonKey: 'k' });
    const other = await send({ n: 'x' }, { singletonKey: 'other' });
    expect(await q.update(name, { n: 'newest' }, { singletonKey: 'k' })).toEqual({ jobs: [c], updated: 1 });
    expect(await q.update(name, { n: 'oldest' }, { singletonKey: 'k', match: 'oldest' })).toEqual({ jobs: [a], updated: 1 });
    expect((await stored(b)).data).toEqual({ n: 'b' });
    const all = await q.update(name, undefined, { singletonKey: 'k', match: 'all', priority: 5 });
    expect(all.updated).toBe(3);
    expect([...all.jobs].sort()).toEqual([a, b, c].sort());
    expect((await stored(other)).priority).toBe(0);
    expect(await q.update(name, {}, { singletonKey: 'none' })).toEqual({ jobs: [], updated: 0 });
  });

  it('a job that started is not changed; newest then takes the newest job of the key that still waits', async () => {
    const older = await send({ v: 1 }, { singletonKey: 'k' });
    const started = await send({ v: 1 }, { singletonKey: 'k', priority: 10 });
    const [job] = await q.fetch(name);
    expect(job!.id).toBe(started);
    expect(await q.update(name, { v: 2 }, { id: started })).toEqual({ jobs: [], updated: 0 });
    expect(await stored(started)).toMatchObject({ state: 'active', data: { v: 1 } });
    expect(await q.update(name, { v: 2 }, { singletonKey: 'k' })).toEqual({ jobs: [older], updated: 1 });
    await q.complete(name, started);
    expect((await q.update(name, { v: 3 }, { id: started })).updated).toBe(0);
    await q.cancel(name, older);
    expect((await q.update(name, { v: 3 }, { id: older })).updated).toBe(0);
  });

  it('a job waiting for its retry is changed, its retry budget counted from where it stands', async () => {
    const id = await send({ v: 1 });
    await q.fetch(name);
    await q.fail(name, id, new Error('first'));
    expect((await stored(id)).state).toBe('retry');
    expect(await q.update(name, { v: 2 }, { id, retryLimit: 5, startAfter: 0 })).toEqual({ jobs: [id], updated: 1 });
    expect(await stored(id)).toMatchObject({ state: 'retry', data: { v: 2 }, retry_limit: 5 });
    const [again] = await q.fetch(name);
    expect(again).toMatchObject({ id, data: { v: 2 }, retryCount: 1 });
  });

  it('an update that waits on the row lock of a claim finds the job started and changes nothing', async () => {
    const id = await send({ v: 1 }, { priority: 1 });
    // the engine's own claim, its transaction held open: the update must wait for it, then see the job active
    const { claim, claimed, done } = await holdClaim();
    try {
      expect(claimed).toEqual([id]);
      const update = q.update(name, { v: 2 }, { id, priority: 9 });
      await untilUpdateWaits();
      await claim.query('COMMIT');
      expect(await update).toEqual({ jobs: [], updated: 0 });
      expect(await stored(id)).toMatchObject({ state: 'active', data: { v: 1 }, priority: 1 });
    } finally {
      await done();
    }
  });

  it("newest, waiting on the claim of the key's newest job, changes the next newest that still waits", async () => {
    const older = await send({ v: 1 }, { singletonKey: 'k' });
    const newest = await send({ v: 1 }, { singletonKey: 'k', priority: 1 });
    const { claim, claimed, done } = await holdClaim();
    try {
      expect(claimed).toEqual([newest]);
      const update = q.update(name, { v: 2 }, { singletonKey: 'k' });
      await untilUpdateWaits();
      await claim.query('COMMIT');
      expect(await update).toEqual({ jobs: [older], updated: 1 });
      expect((await stored(newest)).data).toEqual({ v: 1 });
      expect((await stored(older)).data).toEqual({ v: 2 });
    } finally {
      await done();
    }
  });

  it('racing claims: a job is changed before its claim (and claimed changed) or not at all', async () => {
    const n = 40;
    const ids = await q.insert(
      name,
      Array.from({ length: n }, (_, i) => ({ data: { v: 1, i } })),
    );
    const other = f.create({ supervise: false });
    const outcomes = await Promise.all(
      ids.map(async (id) => {
        const [fetched, changed] = await Promise.all([other.fetch(name), q.update(name, { v: 2 }, { id })]);
        return { id, fetched: fetched[0], changed: changed.updated === 1 };
      }),
    );
    for (const { id, changed } of outcomes) {
      const s = await stored(id);
      expect(s.data).toMatchObject({ v: changed ? 2 : 1 });
    }
    for (const { fetched } of outcomes) {
      if (!fetched) continue;
      // the payload the worker got is the one stored: an update never lands after its claim
      expect((await stored(fetched.id)).data).toEqual(fetched.data);
    }
    expect(outcomes.some((o) => o.changed)).toBe(true);
  });

  /** A job due in an hour, and a worker (polling once a minute) asleep until then; `ran` gets what it runs. */
  async function sleepingWorker() {
    const id = await send({ v: 1 }, { startAfter: 3600 });
    const w = f.create({ supervise: false });
    const before = await asleepSessions(f);
    const ran: unknown[] = [];
    await w.work(name, { pollingIntervalSeconds: 60 }, async (job) => {
      ran.push(job.data);
    });
    await untilAsleep(f, before, 'the worker sleeps until the job is due in an hour');
    return { id, w, ran };
  }

  it('a job moved to start now wakes an idle worker at once', async () => {
    const { id, w, ran } = await sleepingWorker();
    expect(await q.update(name, { v: 2 }, { id, startAfter: 0 })).toEqual({ jobs: [id], updated: 1 });
    // the loop polls once a minute: only the wake-up runs the job within the deadline
    await until(() => ran.length === 1, 'the job ran', 10_000);
    expect(ran).toEqual([{ v: 2 }]);
    await w.close();
  });

  it("a job moved to start sooner brings a sleeping worker's timer forward", async () => {
    const { id, w, ran } = await sleepingWorker();
    await q.update(name, undefined, { id, startAfter: 1 });
    await until(() => ran.length === 1, 'the job ran about a second later', 10_000);
    await w.close();
  });

  it('a flow child waiting for its parents keeps waiting: startAfter and retentionSeconds are refused', async () => {
    const ids = await q.flow([
      { name, ref: 'parent', data: {} },
      { name, ref: 'child', data: { v: 1 }, dependsOn: ['parent'], singletonKey: 'child' },
    ]);
    const child = ids.child!;
    await expect(q.update(name, { v: 2 }, { id: child, startAfter: 0 })).rejects.toThrow(
      /options\.startAfter must be left out for a job that waits for its flow parents \(job \d+\).*got 0/,
    );
    await expect(q.update(name, undefined, { singletonKey: 'child', retentionSeconds: 60 })).rejects.toBeInstanceOf(InvalidOptionError);
    expect(await stored(child)).toMatchObject({ data: { v: 1 }, start_in: null });
    // other changes are made, and it still waits
    expect((await q.update(name, { v: 2 }, { id: child, priority: 4 })).updated).toBe(1);
    expect(await stored(child)).toMatchObject({ data: { v: 2 }, priority: 4, start_in: null });
    const [parent] = await q.fetch(name);
    expect(parent!.id).toBe(ids.parent);
    expect(await q.fetch(name)).toEqual([]);
  });

  it('key_strict_fifo: a head moved later lets the next job of its key lead; moved back, it leads again', async () => {
    await q.createQueue(`${name}.fifo`, { policy: 'key_strict_fifo' });
    const fifo = `${name}.fifo`;
    const first = (await q.send(fifo, { n: 1 }, { singletonKey: 'k' }))!;
    const second = (await q.send(fifo, { n: 2 }, { singletonKey: 'k' }))!;
    expect((await stored(second)).fifo_wait).toBeGreaterThan(0);
    const heard = await listen(q.config.channel);
    try {
      await q.update(fifo, undefined, { id: first, startAfter: 3600 });
      // the key's next job may run now: the queue's workers are woken for now, not only for the head's new time
      await until(() => heard.heard.includes(fifo), 'a wake-up for now of the fifo queue');
    } finally {
      await heard.stop();
    }
    expect((await stored(second)).fifo_wait).toBe(0);
    await q.update(fifo, undefined, { id: first, startAfter: 0 });
    const [head] = await q.fetch(fifo);
    expect(head!.id).toBe(first);
    expect(await q.fetch(fifo)).toEqual([]);
    await q.complete(fifo, first);
    expect((await q.fetch(fifo)).map((j) => j.id)).toEqual([second]);
  });

  it('a queue with a partition of its own', async () => {
    await q.createQueue(`${name}.part`, { partition: true });
    const part = `${name}.part`;
    const id = (await q.send(part, { v: 1 }, { singletonKey: 'k' }))!;
    expect(await q.update(part, { v: 2 }, { singletonKey: 'k', match: 'all' })).toEqual({ jobs: [id], updated: 1 });
    expect((await q.getJobById(part, id))!.data).toEqual({ v: 2 });
    expect(await q.upsert(part, { v: 3 }, { singletonKey: 'k2' })).toMatchObject({ updated: 0, inserted: 1 });
  });

  it('the object form', async () => {
    const id = await send({ v: 1 });
    expect(await q.update({ name, data: { v: 2 }, options: { id } })).toEqual({ jobs: [id], updated: 1 });
    expect((await stored(id)).data).toEqual({ v: 2 });
  });

  it("in the caller's transaction: the change shows only once it commits", async () => {
    const id = await send({ v: 1 });
    const pool = testPool(1);
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      expect((await q.update(name, { v: 2 }, { id, db: tx })).updated).toBe(1);
      expect((await stored(id)).data).toEqual({ v: 1 });
      await tx.query('ROLLBACK');
      expect((await stored(id)).data).toEqual({ v: 1 });
    } finally {
      tx.release();
      await pool.end();
    }
  });

  it('a declared job: the payload passes its schema', async () => {
    const job = defineJob<{ v: number }>(name, {
      schema: {
        parse: (d: unknown) => {
          if (typeof (d as { v?: unknown }).v !== 'number') throw new Error('v must be a number');
          return d as { v: number };
        },
      },
    });
    const id = await send({ v: 1 });
    await expect(q.update(job, { v: 'x' } as never, { id })).rejects.toThrow(/v must be a number/);
    expect((await q.update(job, { v: 5 }, { id })).updated).toBe(1);
  });
});

describe('update: bad input is refused with a typed error naming the field, the range and the value', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['neither id nor key', {}, /^options\.id must be given, or options\.singletonKey .*got undefined/],
    ['both id and key', { id: '1', singletonKey: 'k' }, /^options must be given either id or singletonKey, not both/],
    ['an id that is not one', { id: 12 }, /^options\.id must be a job id \(a string of digits, 1 to 9223372036854775807\), got 12/],
    ['an id out of range', { id: '9223372036854775808' }, /^options\.id must be a job id/],
    ['an unknown match', { singletonKey: 'k', match: 'first' }, /^options\.match must be one of "newest", "oldest", "all", got "first"/],
    ['match with an id', { id: '1', match: 'all' }, /^options\.match must be left out with options\.id/],
    ['a dedupeKey', { id: '1', dedupeKey: 'd' }, /^options\.dedupeKey must be left out: a stored job keeps its dedupeKey, got "d"/],
    [
      'a group without an id',
      { id: '1', group: { tier: 't' } },
      /^options\.group\.id must be a string of 1 to 255 characters, got undefined/,
    ],
    ['data in the options', { id: '1', data: {} }, /^options\.data must be left out: the payload is the data argument/],
    ['an unknown option', { id: '1', throttle: 5 }, /^options\.throttle must be one of the known options/],
    ['a priority out of range', { id: '1', priority: 1.5 }, /^options\.priority must be an integer >= -2147483648, got 1\.5/],
    ['a bad startAfter', { id: '1', startAfter: 'soon' }, /^options\.startAfter must be a Date, an ISO-8601 .*got "soon"/],
    ['a bad retryLimit', { id: '1', retryLimit: -1 }, /^options\.retryLimit must be an integer from 0 to 1000000, got -1/],
    ['a bad expireInSeconds', { id: '1', expireInSeconds: 0 }, /^options\.expireInSeconds must be an integer from 1 to 86400, got 0/],
    ['a bad deadLetter', { id: '1', deadLetter: 'a b' }, /^options\.deadLetter must be a string of 1 to 100 characters/],
    ['a bad db', { id: '1', db: 5 }, /^options\.db must be a Drizzle database or transaction/],
  ])('%s', async (_what, options, message) => {
    const err = await q.update(name, {}, options as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as Error).message).toMatch(message);
  });

  it('an unknown queue: QueueNotFoundError', async () => {
    await expect(q.update('no-such-queue', {}, { id: '1' })).rejects.toBeInstanceOf(QueueNotFoundError);
    await expect(q.upsert('no-such-queue', {}, { singletonKey: 'k' })).rejects.toBeInstanceOf(QueueNotFoundError);
  });

  it('upsert takes an id or a singletonKey, not both, not neither', async () => {
    await expect(q.upsert(name, {}, { id: '1', singletonKey: 'k' })).rejects.toThrow(/^options must be given either id or singletonKey/);
    await expect(q.upsert(name, {}, {})).rejects.toThrow(/^options\.id must be given, or options\.singletonKey/);
    await expect(q.upsert(name, {}, { id: 'a1b2' })).rejects.toThrow(/^options\.id must be a job id/);
  });

  it('the object form with more arguments', async () => {
    await expect(q.update({ name, options: { id: '1' } } as never, {} as never)).rejects.toThrow(
      /^update\(\) must be called with one object/,
    );
  });
});

describe('upsert', () => {
  it('inserts as send() would when no job of the key waits, then updates it', async () => {
    const first = await q.upsert(name, { v: 1 }, { singletonKey: 'k', priority: 2, dedupeKey: 'd' });
    expect(first).toMatchObject({ updated: 0, inserted: 1 });
    const [id] = first.jobs;
    expect(await stored(id!)).toMatchObject({ data: { v: 1 }, priority: 2, singleton_key: 'k' });
    expect(await q.upsert(name, { v: 2 }, { singletonKey: 'k', dedupeKey: 'other' })).toEqual({ jobs: [id], updated: 1, inserted: 0 });
    const [row] = await f.sql<{ dedupe_key: string }>('SELECT dedupe_key FROM $schema.jobs WHERE id = $1', [id]);
    expect(row!.dedupe_key).toBe('d'); // an updated job keeps its keys
    expect(await stored(id!)).toMatchObject({ data: { v: 2 }, priority: 2 });
    // once it started, the next upsert sends a new job
    await q.fetch(name);
    const next = await q.upsert(name, { v: 3 }, { singletonKey: 'k' });
    expect(next).toMatchObject({ updated: 0, inserted: 1 });
    expect(next.jobs[0]).not.toBe(id);
  });

  it("the queue's policy still applies to the insert", async () => {
    await q.createQueue(`${name}.single`, { policy: 'singleton' });
    const single = `${name}.single`;
    await q.send(single, {}, { singletonKey: 'k' });
    await q.fetch(single); // active: holds the key
    // nothing waits, and the singleton policy allows one queued job beside the active one
    expect(await q.upsert(single, { v: 1 }, { singletonKey: 'k' })).toMatchObject({ updated: 0, inserted: 1 });
    expect(await q.upsert(single, { v: 2 }, { singletonKey: 'k' })).toMatchObject({ updated: 1, inserted: 0 });
  });

  it('nothing is inserted when the queue refuses the job, or another job holds its dedupeKey', async () => {
    await q.createQueue(`${name}.short`, { policy: 'short' });
    const short = `${name}.short`;
    await q.send(short, {}, { singletonKey: 'k', startAfter: 600 });
    // short: one created job per key, which upsert updates rather than sending a second that the policy would refuse
    expect(await q.upsert(short, { v: 1 }, { singletonKey: 'k' })).toMatchObject({ updated: 1, inserted: 0 });
    const holder = await send({}, { singletonKey: 'other', dedupeKey: 'd' });
    expect(await q.upsert(name, { v: 1 }, { singletonKey: 'k', dedupeKey: 'd' })).toEqual({ jobs: [], updated: 0, inserted: 0 });
    expect(await f.sql("SELECT 1 FROM $schema.jobs WHERE queue = $1 AND singleton_key = 'k'", [name])).toHaveLength(0);
    expect((await stored(holder)).data).toEqual({});
  });

  it('concurrent upserts of one key make one job: one inserts, the others update it', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => q.upsert(name, { i }, { singletonKey: 'race' })));
    expect(results.reduce((s, r) => s + r.inserted, 0)).toBe(1);
    expect(results.reduce((s, r) => s + r.updated, 0)).toBe(7);
    const rows = await f.sql<{ id: string }>("SELECT id::text FROM $schema.jobs WHERE queue = $1 AND singleton_key = 'race'", [name]);
    expect(rows).toHaveLength(1);
    const { i } = (await stored(rows[0]!.id)).data as { i: number };
    expect(results.find((r) => r.inserted === 1)!.jobs).toEqual([rows[0]!.id]);
    expect(i).toBeGreaterThanOrEqual(0);
  });

  it('refuses a db outside a transaction, and a transaction that is not READ COMMITTED, before writing anything', async () => {
    const pool = testPool(2);
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const client = await pool.connect();
    try {
      for (const db of [pool, drizzle(pool), client]) {
        const err = await q.upsert(name, { v: 1 }, { singletonKey: 'notx', db }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InvalidOptionError);
        expect((err as Error).message).toMatch(/^options\.db must be a transaction/);
      }
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const err = await q.upsert(name, { v: 1 }, { singletonKey: 'notx', db: client }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect((err as Error).message).toMatch(/READ COMMITTED.*repeatable read/);
      await client.query('COMMIT');
      expect(await f.sql("SELECT 1 FROM $schema.jobs WHERE queue = $1 AND singleton_key = 'notx'", [name])).toHaveLength(0);
    } finally {
      client.release();
      await pool.end();
    }
  });

  it("in the caller's transaction: the lock and the insert are the caller's, undone by its rollback", async () => {
    const pool = testPool(1);
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      const r = await q.upsert(name, { v: 1 }, { singletonKey: 'tx', db: tx });
      expect(r).toMatchObject({ updated: 0, inserted: 1 });
      expect(await q.upsert(name, { v: 2 }, { singletonKey: 'tx', db: tx })).toEqual({ jobs: r.jobs, updated: 1, inserted: 0 });
      await tx.query('ROLLBACK');
      expect(await f.sql("SELECT 1 FROM $schema.jobs WHERE queue = $1 AND singleton_key = 'tx'", [name])).toHaveLength(0);
    } finally {
      tx.release();
      await pool.end();
    }
  });

  it('by id: updates the job while it waits, leaves it once started, and inserts a job of that id when the queue has none', async () => {
    const id = (await q.send(name, { v: 1 }))!;
    expect(await q.upsert(name, { v: 2 }, { id, priority: 5 })).toEqual({ jobs: [id], updated: 1, inserted: 0 });
    expect(await q.getJobById(name, id)).toMatchObject({ data: { v: 2 }, priority: 5, state: 'created' });
    // started: left alone, and nothing is inserted in its place (its id is taken)
    await q.fetch(name);
    expect(await q.upsert(name, { v: 3 }, { id })).toEqual({ jobs: [], updated: 0, inserted: 0 });
    expect((await q.getJobById(name, id))!.data).toEqual({ v: 2 });
    // gone (deleted): a job of that id is inserted, under the options given
    await q.deleteJob(name, id);
    expect(await q.upsert(name, { v: 4 }, { id, retryLimit: 7 })).toEqual({ jobs: [id], updated: 0, inserted: 1 });
    expect(await q.getJobById(name, id)).toMatchObject({ id, data: { v: 4 }, retryLimit: 7, state: 'created' });
    // and it is that job the next upsert by id updates, and a worker completes
    expect(await q.upsert(name, { v: 5 }, { id })).toEqual({ jobs: [id], updated: 1, inserted: 0 });
    const [fetched] = await q.fetch(name);
    expect(fetched).toMatchObject({ id, data: { v: 5 } });
    await q.complete(name, id);
    expect((await q.getJobById(name, id))!.state).toBe('completed');
  });

  it('by id: refuses an id the sequence has not handed out, and a key_strict_fifo queue, naming options.id; nothing is written', async () => {
    const [last] = await f.sql<{ last: string }>('SELECT last_value::text AS last FROM $schema.jobs_id_seq');
    const ahead = String(BigInt(last!.last) + 1000n);
    const err = await q.upsert(name, { v: 1 }, { id: ahead }).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.message).toContain('options.id must be an id up to');
    expect(await q.getJobById(name, ahead)).toBeNull();
    const fifo = `${name}.fifo`;
    await q.createQueue(fifo, { policy: 'key_strict_fifo' });
    const refused = await q.upsert(fifo, { v: 1 }, { id: '1' }).catch((e) => e);
    expect(refused).toBeInstanceOf(InvalidOptionError);
    expect(refused.message).toContain('key_strict_fifo');
  });

  it('by id: an id held by a send not yet committed inserts nothing, and the upsert answers that nothing was inserted', async () => {
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      const held = (await q.send(name, { v: 'theirs' }, { db: client }))!;
      // the upsert cannot see the job, re-keys its own to the id, and waits on the unique index for the other's end
      const upsert = q.upsert(name, { v: 'mine' }, { id: held });
      await until(
        async () =>
          (
            await f.sql(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%SET id = %' AND query LIKE $1`, [
              `%"${f.schema}"%`,
            ])
          ).length > 0,
        'the re-keying waits on the unique index',
      );
      await client.query('COMMIT');
      expect(await upsert).toEqual({ jobs: [], updated: 0, inserted: 0 });
      expect((await q.getJobById(name, held))!.data).toEqual({ v: 'theirs' });
      expect((await q.findJobs(name)).jobs).toHaveLength(1);
    } finally {
      client.release();
    }
  });

  it('by id: concurrent upserts of one id make one job', async () => {
    const id = (await q.send(name, {}))!;
    await q.deleteJob(name, id);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => q.upsert(name, { i }, { id })));
    expect(results.filter((r) => r.inserted === 1)).toHaveLength(1);
    expect(results.filter((r) => r.updated === 1)).toHaveLength(5);
    expect((await q.findJobs(name)).jobs.filter((j) => j.id === id)).toHaveLength(1);
  });

  it('the object form', async () => {
    const r = await q.upsert({ name, data: { v: 1 }, options: { singletonKey: 'o' } });
    expect(r).toMatchObject({ updated: 0, inserted: 1 });
    expect(await q.upsert({ name, data: { v: 2 }, options: { singletonKey: 'o' } })).toEqual({ jobs: r.jobs, updated: 1, inserted: 0 });
  });
});
