import { InvalidOptionError } from '../../../lib/core/errors.js';
import { markWaitingJobs } from '../../../schema/migrations/0002_fifo_wait.js';
import { until } from '../../helpers/db.js';
import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_fifo');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
async function fifo(options = {}): Promise<string> {
  const name = `fifo.${++n}`;
  await q.createQueue(name, { policy: 'key_strict_fifo', retryLimit: 2, ...options });
  return name;
}
const ids = async (name: string, options = {}) => (await q.fetch(name, { batchSize: 10, ...options })).map((j) => j.id);
const backdate = (id: string) => f.sql(`UPDATE $schema.jobs SET start_after = now() - interval '1 second' WHERE id = $1`, [id]);

describe('policy key_strict_fifo', () => {
  it('every job needs a singletonKey', async () => {
    const name = await fifo();
    await expect(q.send(name, {})).rejects.toThrow(InvalidOptionError);
    await expect(q.send(name, {})).rejects.toThrow('options.singletonKey must be a key on every job of key_strict_fifo queue');
    await expect(q.insert(name, [{ singletonKey: 'a' }, {}])).rejects.toThrow('jobs[1].singletonKey');
    expect(await f.sql(`SELECT 1 FROM $schema.jobs WHERE queue = $1`, [name])).toEqual([]);
  });

  it('per key, jobs run strictly in FIFO order; other keys are not held back', async () => {
    const name = await fifo();
    const [a1, a2, b1] = await q.insert(name, [{ singletonKey: 'a' }, { singletonKey: 'a' }, { singletonKey: 'b' }]);
    expect((await ids(name)).sort()).toEqual([a1, b1].sort());
    expect(await ids(name)).toEqual([]);
    await q.complete(name, a1!);
    expect(await ids(name)).toEqual([a2]);
  });

  it('a job in retry holds its successors back, and keeps the head', async () => {
    const name = await fifo({ retryDelay: 3600 });
    const [a1, a2, b1] = await q.insert(name, [{ singletonKey: 'a' }, { singletonKey: 'a' }, { singletonKey: 'b' }]);
    await ids(name);
    await q.fail(name, a1!);
    expect((await q.getJobById(name, a1!))!.state).toBe('retry');
    await q.complete(name, b1!);
    expect(await ids(name)).toEqual([]);
    await backdate(a1!);
    expect(await ids(name)).toEqual([a1]);
    await q.complete(name, a1!);
    expect(await ids(name)).toEqual([a2]);
  });

  it('a job failed for good blocks its key until it is deleted or retried; getBlockedKeys lists it', async () => {
    const name = await fifo({ retryLimit: 0 });
    const [a1, a2, b1] = await q.insert(name, [{ singletonKey: 'a' }, { singletonKey: 'a' }, { singletonKey: 'b' }]);
    await ids(name);
    await q.fail(name, a1!);
    expect(await q.getBlockedKeys(name)).toEqual(['a']);
    await q.complete(name, b1!);
    expect(await ids(name)).toEqual([]);
    await q.retry(name, a1!);
    expect(await q.getBlockedKeys(name)).toEqual([]);
    expect(await ids(name)).toEqual([a1]);
    await q.fail(name, a1!);
    expect(await q.getBlockedKeys(name)).toEqual(['a']);
    await q.deleteJob(name, a1!);
    expect(await ids(name)).toEqual([a2]);
  });

  it('a deferred job is skipped when choosing the head; the later job that ran ahead keeps the head through its retry', async () => {
    const name = await fifo({ retryDelay: 3600 });
    const a1 = (await q.send(name, { first: true }, { singletonKey: 'a', startAfter: 3600 }))!;
    const a2 = (await q.send(name, { second: true }, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([a2]);
    await q.fail(name, a2);
    await backdate(a1);
    expect(await ids(name)).toEqual([]);
    await backdate(a2);
    expect(await ids(name)).toEqual([a2]);
    await q.complete(name, a2);
    expect(await ids(name)).toEqual([a1]);
  });

  it('priority orders heads across keys but never reorders within a key', async () => {
    const name = await fifo();
    const [a1, , b1] = await q.insert(name, [
      { singletonKey: 'a', priority: 0 },
      { singletonKey: 'a', priority: 10 },
      { singletonKey: 'b', priority: 5 },
    ]);
    expect(await ids(name, { batchSize: 1 })).toEqual([b1]);
    expect(await ids(name, { batchSize: 1 })).toEqual([a1]);
  });

  it('minPriority and maxPriority apply to the head and cannot skip it', async () => {
    const name = await fifo();
    const [a1] = await q.insert(name, [
      { singletonKey: 'a', priority: 0 },
      { singletonKey: 'a', priority: 10 },
    ]);
    expect(await ids(name, { minPriority: 5 })).toEqual([]);
    expect(await ids(name, { maxPriority: 5 })).toEqual([a1]);
  });

  it('two workers racing on one key: one claims its head, the other gets an empty fetch, never an error', async () => {
    const name = await fifo();
    const claimers = Array.from({ length: 6 }, () => f.create({ supervise: false, poolSize: 2 }));
    for (let round = 0; round < 8; round++) {
      const [head] = await q.insert(name, [{ singletonKey: 'hot' }, { singletonKey: 'hot' }]);
      const won = (await Promise.all(claimers.map((c) => c.fetch(name, { batchSize: 2 })))).flat();
      expect(won.map((j) => j.id)).toEqual([head]);
      await q.complete(name, head!);
      await q.deleteJob(
        name,
        (await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state = 'created'`, [name])).map((r) => r.id),
      );
    }
  });

  it('getBlockedKeys refuses a queue of another policy', async () => {
    await q.createQueue('fifo.not');
    await expect(q.getBlockedKeys('fifo.not')).rejects.toThrow('name must be a key_strict_fifo queue');
  });
});

describe('key_strict_fifo: one blocking job per key', () => {
  it('resuming a cancelled job while another job of its key waits in retry is refused, so the key never blocks itself', async () => {
    const name = await fifo({ retryDelay: 0 });
    const [a, b] = await q.insert(name, [{ singletonKey: 'k' }, { singletonKey: 'k' }]);
    expect(await ids(name)).toEqual([a]);
    await q.fail(name, a!);
    await q.cancel(name, a!);
    expect(await ids(name)).toEqual([b]);
    await q.fail(name, b!);
    const err = await q.resume(name, a!).catch((e) => e);
    expect(err.code).toBe('KEY_TAKEN');
    expect((await q.getJobById(name, a!))!.state).toBe('cancelled');
    expect(await ids(name)).toEqual([b]);
  });

  it('a key_strict_fifo queue cannot be a dead-letter queue (copies may carry no key)', async () => {
    const name = await fifo();
    await expect(q.createQueue('fifo.source', { deadLetter: name })).rejects.toThrow(
      'options.deadLetter must be a queue whose policy is not key_strict_fifo',
    );
  });
});

/**
 * The claim walks only the jobs not marked as waiting behind an earlier job of their key (fifo_wait, migration 2).
 * What must hold whatever happens: a job marked waiting has a job it waits behind (one holding its key, or one
 * queued before it that may run no later), so the marks never hide a key's head.
 */
const hiddenWithoutReason = (name: string) =>
  f.sql<{ id: string }>(
    `SELECT j.id::text FROM $schema.jobs j
     WHERE j.queue = $1 AND j.fifo_wait > 0 AND NOT EXISTS (
       SELECT 1 FROM $schema.jobs w
       WHERE w.queue = j.queue AND w.singleton_key = j.singleton_key AND w.id <> j.id
         AND (w.state IN ('retry', 'active', 'failed')
           OR (w.state = 'created' AND w.id < j.id AND w.start_after <= greatest(j.start_after, now()))))`,
    [name],
  );
const marks = async (name: string) =>
  Object.fromEntries(
    (await f.sql<{ id: string; fifo_wait: number }>(`SELECT id::text, fifo_wait FROM $schema.jobs WHERE queue = $1`, [name])).map((r) => [
      r.id,
      r.fifo_wait,
    ]),
  );
/** Each key's head by the rules alone (no marks): what a fetch of any size must return, in any order. */
const headsByRule = async (name: string) =>
  (
    await f.sql<{ id: string }>(
      `SELECT j.id::text FROM $schema.jobs j
       WHERE j.queue = $1 AND j.state < 'active' AND j.start_after <= now()
         AND NOT EXISTS (SELECT 1 FROM $schema.jobs b WHERE b.queue = j.queue AND b.singleton_key = j.singleton_key AND b.id <> j.id
           AND b.state IN ('retry', 'active', 'failed'))
         AND (j.state = 'retry' OR NOT EXISTS (SELECT 1 FROM $schema.jobs e WHERE e.queue = j.queue AND e.singleton_key = j.singleton_key
           AND e.id < j.id AND e.state = 'created' AND e.start_after <= now()))`,
      [name],
    )
  ).map((r) => r.id);

describe('key_strict_fifo: the claim walks only jobs that may be their key head', () => {
  it('a backlog sent at once leaves one job per key to walk; completing it lets the next lead', async () => {
    const name = await fifo();
    const [a1, a2, a3, b1, b2] = await q.insert(name, [
      { singletonKey: 'a' },
      { singletonKey: 'a' },
      { singletonKey: 'a' },
      { singletonKey: 'b' },
      { singletonKey: 'b' },
    ]);
    expect(await marks(name)).toEqual({ [a1!]: 0, [a2!]: 1, [a3!]: 1, [b1!]: 0, [b2!]: 1 });
    expect((await ids(name)).sort()).toEqual([a1, b1].sort());
    await q.complete(name, a1!);
    expect((await marks(name))[a2!]).toBe(0);
    expect(await ids(name)).toEqual([a2]);
    expect(await hiddenWithoutReason(name)).toEqual([]);
  });

  it('jobs of one key sent interleaved with others in one insert wait behind the earlier one of their key', async () => {
    const name = await fifo();
    const [a1, b1, a2, b2] = await q.insert(name, [
      { singletonKey: 'a' },
      { singletonKey: 'b' },
      { singletonKey: 'a' },
      { singletonKey: 'b' },
    ]);
    expect(await marks(name)).toEqual({ [a1!]: 0, [b1!]: 0, [a2!]: 1, [b2!]: 1 });
  });

  it('a job sent behind a stored job is marked at once, and leads when that job completes', async () => {
    const name = await fifo();
    const a1 = (await q.send(name, {}, { singletonKey: 'a' }))!;
    const a2 = (await q.send(name, {}, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([a1]);
    const a3 = (await q.send(name, {}, { singletonKey: 'a' }))!;
    expect(await marks(name)).toEqual({ [a1]: 0, [a2]: 2, [a3]: 2 });
    await q.complete(name, a1);
    expect(await marks(name)).toMatchObject({ [a2]: 0, [a3]: 2 });
    expect(await ids(name)).toEqual([a2]);
    expect(await hiddenWithoutReason(name)).toEqual([]);
  });

  it('a job sent in a transaction whose key head completes before the commit may lead once committed', async () => {
    const name = await fifo();
    const a1 = (await q.send(name, {}, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([a1]);
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN');
      const a2 = (await q.send(name, {}, { singletonKey: 'a', db: client }))!;
      // a1 completes, unaware of a2 (not committed yet): nothing to let lead
      await q.complete(name, a1);
      await client.query('COMMIT');
      // at its commit a2 found nothing to wait behind
      expect(await marks(name)).toMatchObject({ [a2]: 0 });
      expect(await ids(name)).toEqual([a2]);
    } finally {
      client.release();
    }
  });

  it('a job sent in a transaction whose key head is still active at the commit stays hidden until it completes', async () => {
    const name = await fifo();
    const a1 = (await q.send(name, {}, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([a1]);
    const client = await f.pool.connect();
    let a2: string;
    try {
      await client.query('BEGIN');
      a2 = (await q.send(name, {}, { singletonKey: 'a', db: client }))!;
      const a3 = (await q.send(name, {}, { singletonKey: 'a', db: client }))!;
      await client.query('COMMIT');
      // a3 waits behind a2, sent by the same transaction
      expect(await marks(name)).toEqual({ [a1]: 0, [a2]: 2, [a3]: 1 });
    } finally {
      client.release();
    }
    await q.complete(name, a1);
    expect(await ids(name)).toEqual([a2]);
    expect(await hiddenWithoutReason(name)).toEqual([]);
  });

  it('a job sent in a REPEATABLE READ transaction stays hidden only behind a job unchanged since its snapshot', async () => {
    const name = await fifo();
    const a1 = (await q.send(name, {}, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([a1]);
    const client = await f.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const a2 = (await q.send(name, {}, { singletonKey: 'a', db: client }))!;
      await client.query('COMMIT');
      // a1 did not change: a2 waits behind it
      expect((await marks(name))[a2]).toBe(2);
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const a3 = (await q.send(name, {}, { singletonKey: 'a', db: client }))!;
      // a1 completes after the snapshot, unaware of a3; a2 takes the head
      await q.complete(name, a1);
      expect(await ids(name)).toEqual([a2]);
      await q.complete(name, a2);
      await client.query('COMMIT');
      // at its commit a3 could not lock a job it saw ahead of it (they changed since): it may lead
      expect((await marks(name))[a3]).toBe(0);
      expect(await ids(name)).toEqual([a3]);
    } finally {
      client.release();
    }
  });

  it('a job that a dedupe key refuses hides nothing behind it', async () => {
    const name = await fifo();
    await q.send(name, {}, { singletonKey: 'z', dedupeKey: 'd' });
    const inserted = await q.insert(name, [{ singletonKey: 'a', dedupeKey: 'd' }, { singletonKey: 'a' }]);
    expect(inserted).toHaveLength(1);
    expect((await marks(name))[inserted[0]!]).toBe(0);
    expect((await ids(name)).sort()).toContain(inserted[0]);
  });

  it('a deferred job hides nothing sent before it is due, and waits behind the jobs due before it', async () => {
    const name = await fifo();
    const [late, now1, now2] = await q.insert(name, [
      { singletonKey: 'a', startAfter: 3600 },
      { singletonKey: 'a' },
      { singletonKey: 'a' },
    ]);
    expect(await marks(name)).toEqual({ [late!]: 0, [now1!]: 0, [now2!]: 1 });
    const later = (await q.send(name, {}, { singletonKey: 'a', startAfter: 7200 }))!;
    expect((await marks(name))[later]).toBe(2);
    expect(await ids(name)).toEqual([now1]);
    await q.complete(name, now1!);
    expect(await ids(name)).toEqual([now2]);
    await q.complete(name, now2!);
    expect(await ids(name)).toEqual([]);
    // time passes: the first deferred job is due; the one due later still waits behind it
    await backdate(late!);
    expect(await ids(name)).toEqual([late]);
    await q.complete(name, late!);
    expect((await marks(name))[later]).toBe(0);
    expect(await hiddenWithoutReason(name)).toEqual([]);
  });

  it('a job that waits for parents (flow) is never hidden, and runs in its turn once released', async () => {
    const name = await fifo();
    const refs = await q.flow([
      { name, ref: 'p', singletonKey: 'a' },
      { name, ref: 'c', singletonKey: 'a', dependsOn: ['p'] },
      { name, ref: 'd', singletonKey: 'a' },
    ]);
    expect(await marks(name)).toEqual({ [refs.p!]: 0, [refs.c!]: 0, [refs.d!]: 1 });
    expect(await ids(name)).toEqual([refs.p]);
    await q.complete(name, refs.p!);
    expect(await ids(name)).toEqual([refs.c]);
    await q.complete(name, refs.c!);
    expect(await ids(name)).toEqual([refs.d]);
  });

  it('sending, claiming, completing, failing, cancelling, resuming, retrying, deleting and handing back in any order never hides a key head (seeded random walk)', async () => {
    const name = await fifo({ retryLimit: 1, retryDelay: 0 });
    let seed = 20261129;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pick = async (states: string[]) => {
      const rows = await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state::text = ANY($2) ORDER BY id`, [
        name,
        states,
      ]);
      return rows.length === 0 ? null : rows[rnd(rows.length)]!.id;
    };
    const keys = ['a', 'b', 'c'];
    for (let step = 0; step < 150; step++) {
      const op = rnd(11);
      if (op <= 2) {
        const jobs = Array.from({ length: 1 + rnd(3) }, () => ({
          singletonKey: keys[rnd(keys.length)]!,
          ...(rnd(4) === 0 ? { startAfter: 3600 } : {}),
        }));
        await q.insert(name, jobs);
      } else if (op === 3) {
        const expected = await headsByRule(name);
        const got = await ids(name, { batchSize: 100 });
        expect(got.sort()).toEqual(expected.sort());
      } else if (op === 4) {
        const id = await pick(['active']);
        if (id) await q.complete(name, id);
      } else if (op === 5) {
        const id = await pick(['active']);
        if (id) await q.fail(name, id);
      } else if (op === 6) {
        const id = await pick(['created', 'retry', 'active']);
        if (id) await q.cancel(name, id);
      } else if (op === 7) {
        const id = await pick(['cancelled']);
        if (id) await q.resume(name, id).catch((err) => expect(err.code).toBe('KEY_TAKEN'));
        const failed = await pick(['failed']);
        if (failed) await q.retry(name, failed);
      } else if (op === 8) {
        const id = await pick(['created', 'retry', 'active', 'failed', 'completed']);
        if (id) await q.deleteJob(name, id);
      } else if (op === 9) {
        // a worker hands a job back to the queue (shutdown), as releaseJobs does
        const id = await pick(['active']);
        if (id) {
          await f.sql(
            `UPDATE $schema.jobs SET state = CASE WHEN retry_count = 0 THEN 'created' ELSE 'retry' END::$schema.job_state,
               worker_id = NULL, started_on = NULL, lease_until = NULL, heartbeat_until = NULL
             WHERE queue = $1 AND id = $2 AND state = 'active'`,
            [name, id],
          );
        }
      } else {
        // time passes for one deferred job
        const id = (
          await f.sql<{ id: string }>(
            `SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state = 'created' AND start_after > now() ORDER BY id`,
            [name],
          )
        )[0]?.id;
        if (id) await backdate(id);
      }
      expect(await hiddenWithoutReason(name)).toEqual([]);
    }
  });

  it('two transactions taking away the two jobs a waiting job could wait behind never leave it hidden', async () => {
    const name = await fifo();
    const r = (await q.send(name, {}, { singletonKey: 'a', startAfter: 3600 }))!;
    const w = (await q.send(name, {}, { singletonKey: 'a' }))!;
    expect(await ids(name)).toEqual([w]);
    const j = (await q.send(name, {}, { singletonKey: 'a' }))!;
    // r comes due while w runs: j waits behind both now, and two transactions take them away at once
    await backdate(r);
    const [a, b] = [await f.pool.connect(), await f.pool.connect()];
    try {
      await a.query('BEGIN');
      await a.query(`UPDATE "${f.schema}".jobs SET state = 'completed', completed_on = now() WHERE queue = $1 AND id = $2`, [name, w]);
      const [{ pid }] = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
      await b.query('BEGIN');
      // j now waits behind r only, which a counts on (locked): b's cancel of r waits for a's commit
      const cancelling = b.query(`UPDATE "${f.schema}".jobs SET state = 'cancelled', completed_on = now() WHERE queue = $1 AND id = $2`, [
        name,
        r,
      ]);
      await until(
        async () =>
          (
            await f.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid])
          )[0]!.n > 0,
        'the cancel waits for the completing transaction',
      );
      await a.query('COMMIT');
      await cancelling;
      await b.query('COMMIT');
    } finally {
      a.release();
      b.release();
    }
    expect(await hiddenWithoutReason(name)).toEqual([]);
    expect(await ids(name)).toEqual([j]);
  });

  it('senders and claimers racing on a few keys: every job runs, in order per key, none is left hidden', async () => {
    const name = await fifo({ retryLimit: 0 });
    const senders = Array.from({ length: 3 }, () => f.create({ supervise: false, poolSize: 2 }));
    const claimers = Array.from({ length: 3 }, () => f.create({ supervise: false, poolSize: 2 }));
    const keys = ['a', 'b', 'c'];
    const sent: string[] = [];
    const started: { id: string; key: string }[] = [];
    let sending = true;
    const completedOf = async (key: string) =>
      (
        await f.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = $1 AND singleton_key = $2 AND state = 'completed'`,
          [name, key],
        )
      )[0]!.n;
    // one sender per key, so that a key's jobs commit in the order of their ids (the order FIFO means)
    const send = async (s: typeof q, i: number) => {
      const key = keys[i]!;
      for (let n = 0; n < 30; n++) {
        if (n % 3 === 0) {
          // in a transaction that commits only once a job of the key has completed (when one does soon): the key's
          // head then leaves while these jobs are not visible to the transaction that completes it
          const before = await completedOf(key);
          const client = await f.pool.connect();
          try {
            await client.query('BEGIN');
            sent.push((await s.send(name, {}, { singletonKey: key, db: client }))!);
            await until(async () => (await completedOf(key)) > before, 'a job of the key completes', 300).catch(() => undefined);
            sent.push((await s.send(name, {}, { singletonKey: key, db: client }))!);
            await client.query('COMMIT');
          } finally {
            client.release();
          }
        } else {
          sent.push((await s.send(name, {}, { singletonKey: key }))!);
        }
      }
    };
    let stop = false;
    const claim = async (c: typeof q) => {
      while (!stop) {
        const jobs = await c.fetch(name, { batchSize: 3 });
        for (const j of jobs) started.push({ id: j.id, key: j.singletonKey! });
        await Promise.all(jobs.map((j) => c.complete(name, j.id)));
        if (jobs.length === 0 && !sending) {
          const [left] = await f.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = $1 AND state <> 'completed'`,
            [name],
          );
          if (left!.n === 0) return;
        }
      }
    };
    let outcome: 'done' | Error | null = null;
    void Promise.all(claimers.map(claim)).then(
      () => (outcome = 'done'),
      (err: Error) => (outcome = err),
    );
    await Promise.all(senders.map(send));
    sending = false;
    try {
      // a job left hidden would never run: the claimers would never finish
      await until(() => outcome, 'every job sent runs', 20_000);
    } finally {
      stop = true;
    }
    if (outcome !== 'done') throw outcome;
    expect(started.map((s) => s.id).sort()).toEqual([...sent].sort());
    for (const key of keys) {
      const order = started.filter((s) => s.key === key).map((s) => BigInt(s.id));
      expect(order).toEqual([...order].sort((x, y) => (x < y ? -1 : 1)));
    }
  });

  it('migration 2 marks the jobs queued before it', async () => {
    const name = await fifo();
    await f.sql(`ALTER TABLE $schema.jobs DISABLE TRIGGER jobs_fifo_mark_wait`);
    try {
      await f.sql(
        `INSERT INTO $schema.jobs (queue, policy, singleton_key, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
         SELECT $1, 'key_strict_fifo', k, 0, 0, false, 60, 60, now() + interval '1 day' FROM unnest(ARRAY['a', 'a', 'b', 'a']) k`,
        [name],
      );
    } finally {
      await f.sql(`ALTER TABLE $schema.jobs ENABLE TRIGGER jobs_fifo_mark_wait`);
    }
    const [a1, a2, b1, a3] = (await f.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = $1 ORDER BY id`, [name])).map(
      (r) => r.id,
    );
    expect(Object.values(await marks(name))).toEqual([0, 0, 0, 0]);
    await f.sql(markWaitingJobs(`"${f.schema}"`));
    expect(await marks(name)).toEqual({ [a1!]: 0, [a2!]: 1, [b1!]: 0, [a3!]: 1 });
  });
});

describe('key_strict_fifo safety net (maintenance)', () => {
  it('a key whose queued jobs are all marked waiting, with nothing ahead, is unstuck by the next maintenance pass', async () => {
    const name = await fifo();
    const [head, second] = await q.insert(name, [{ singletonKey: 'stuck' }, { singletonKey: 'stuck' }]);
    const [other] = await q.insert(name, [{ singletonKey: 'fine' }]);
    // What a lost race would leave: the key's first job marked as waiting behind nothing.
    await f.sql(`UPDATE $schema.jobs SET fifo_wait = 1 WHERE id = $1`, [head]);
    expect(await ids(name)).toEqual([other]);
    const pass = await q.maintain({ force: true });
    expect(pass.unstuck).toBe(1);
    expect(await ids(name)).toEqual([head]);
    expect((await q.maintain({ force: true })).unstuck).toBe(0); // the key is healthy now; its second job still waits
    const rows = await f.sql<{ id: string; fifo_wait: number }>(`SELECT id::text, fifo_wait FROM $schema.jobs WHERE id = $1`, [second]);
    expect(rows).toEqual([{ id: second, fifo_wait: 1 }]);
  });
});
