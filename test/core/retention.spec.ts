import { queueFixture } from '../helpers/queue.js';

// Retention, against backdated timestamps: no test waits for a clock.
const f = queueFixture('retention');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
/** A queue of this test's own, so a pass's result counts only what the test made. */
async function queue(options = {}): Promise<string> {
  const name = `r${++n}`;
  await q.createQueue(name, options);
  return name;
}

/** Moves a job's keep_until into the past, as if its time had run out. */
const expire = (id: string | string[]) =>
  f.sql(`UPDATE $schema.jobs SET keep_until = now() - interval '1 second' WHERE id = ANY($1::bigint[])`, [[id].flat()]);
const exists = async (id: string) => (await f.sql('SELECT 1 FROM $schema.jobs WHERE id = $1', [id])).length === 1;
const secondsUntil = (d: Date | null | undefined) => (d!.getTime() - Date.now()) / 1000;

async function finish(name: string, outcome: 'complete' | 'fail' | 'cancel', options = {}): Promise<string> {
  const id = (await q.send(name, {}, { retryLimit: 0, ...options }))!;
  if (outcome === 'cancel') {
    await q.cancel(name, id);
    return id;
  }
  const [job] = await q.fetch(name);
  expect(job!.id).toBe(id);
  if (outcome === 'complete') await q.complete(name, id);
  else await q.fail(name, id, new Error('boom'));
  return id;
}

/** One maintenance pass now. */
async function pass() {
  return q.maintain({ force: true });
}

describe('deleting finished jobs', () => {
  it('deletes completed, cancelled and failed jobs past their time, and only those', async () => {
    const name = await queue();
    const done = [await finish(name, 'complete'), await finish(name, 'cancel'), await finish(name, 'fail')];
    const young = await finish(name, 'complete');
    const active = (await q.send(name, {}))!;
    await q.fetch(name);
    const waiting = (await q.send(name, {}))!;
    await expire(done);
    // an active job whose keep_until passed (its retention, counted from when it was sent) is left alone
    await expire(active);
    const result = await pass();
    expect(result).toMatchObject({ deleted: 3, expired: [] });
    for (const id of done) expect(await exists(id)).toBe(false);
    expect(await exists(young)).toBe(true);
    expect((await q.getJobById(name, waiting))!.state).toBe('created');
    expect((await q.getJobById(name, active))!.state).toBe('active');
  });

  it('keeps a job whose deleteAfterSeconds is 0 forever', async () => {
    const name = await queue({ deleteAfterSeconds: 0 });
    const id = await finish(name, 'complete');
    expect((await q.getJobById(name, id))!.keepUntil).toBeNull();
    await pass();
    expect(await exists(id)).toBe(true);
  });

  it('keeps failures for the queue failedDeleteAfterSeconds, completions for their deleteAfterSeconds', async () => {
    const name = await queue({ deleteAfterSeconds: 60, failedDeleteAfterSeconds: 3600 });
    const completed = await finish(name, 'complete');
    const failed = await finish(name, 'fail');
    expect(secondsUntil((await q.getJobById(name, completed))!.keepUntil)).toBeGreaterThan(50);
    expect(secondsUntil((await q.getJobById(name, completed))!.keepUntil)).toBeLessThanOrEqual(60);
    expect(secondsUntil((await q.getJobById(name, failed))!.keepUntil)).toBeGreaterThan(3590);
    expect(secondsUntil((await q.getJobById(name, failed))!.keepUntil)).toBeLessThanOrEqual(3600);
    expect((await q.getQueue(name))!.failedDeleteAfterSeconds).toBe(3600);

    await q.updateQueue(name, { failedDeleteAfterSeconds: 0 });
    const forever = await finish(name, 'fail');
    expect((await q.getJobById(name, forever))!.keepUntil).toBeNull();
  });

  it('a queue keeps failures 30 days by default', async () => {
    const name = await queue();
    expect((await q.getQueue(name))!.failedDeleteAfterSeconds).toBe(30 * 24 * 3600);
    const failed = await finish(name, 'fail');
    expect(secondsUntil((await q.getJobById(name, failed))!.keepUntil) / 86_400).toBeCloseTo(30, 2);
  });

  it('deletes more than one batch in a pass', async () => {
    const name = await queue();
    await q.insert(
      name,
      Array.from({ length: 2_500 }, () => ({})),
    );
    await f.sql(
      `UPDATE $schema.jobs SET state = 'completed', completed_on = now(), keep_until = now() - interval '1 second' WHERE queue = $1`,
      [name],
    );
    expect((await pass()).deleted).toBe(2_500);
    expect(await f.sql('SELECT 1 FROM $schema.jobs WHERE queue = $1', [name])).toEqual([]);
  });

  it('skips a row another transaction holds, and deletes it at a later pass', async () => {
    const name = await queue();
    const id = await finish(name, 'complete');
    await expire(id);
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${f.schema}".jobs WHERE id = $1 FOR UPDATE`, [id]);
      expect((await pass()).deleted).toBe(0);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect((await pass()).deleted).toBe(1);
  });
});

describe('what retention never removes while something depends on it', () => {
  it('a throttled job holds its slot until the slot ends, however short its deleteAfterSeconds', async () => {
    const name = await queue({ deleteAfterSeconds: 1 });
    const id = (await q.sendThrottled(name, {}, null, 3600, 'k'))!;
    const [job] = await q.fetch(name);
    await q.complete(name, job!.id);
    await expire(id);
    await pass();
    expect(await exists(id)).toBe(true);
    expect(await q.sendThrottled(name, {}, null, 3600, 'k')).toBeNull();
    // the slot ends: the row goes
    await f.sql(`UPDATE $schema.jobs SET slot_until = now() - interval '1 second' WHERE id = $1`, [id]);
    expect((await pass()).deleted).toBe(1);
    expect(await exists(id)).toBe(false);
  });

  it('records the end of a throttled job slot', async () => {
    const name = await queue();
    const id = (await q.sendThrottled(name, {}, null, 60, 'k'))!;
    const [row] = await f.sql<{ seconds: number; aligned: boolean }>(
      `SELECT extract(epoch FROM slot_until - singleton_on)::int AS seconds, extract(epoch FROM singleton_on)::bigint % 60 = 0 AS aligned
       FROM $schema.jobs WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ seconds: 60, aligned: true });
  });

  it('a failed key_strict_fifo job stays while jobs of its key wait, and goes once none does', async () => {
    const name = await queue({ policy: 'key_strict_fifo' });
    const failed = await finish(name, 'fail', { singletonKey: 'k' });
    const behind = (await q.send(name, {}, { singletonKey: 'k' }))!;
    await expire(failed);
    await pass();
    expect(await exists(failed)).toBe(true);
    expect(await q.getBlockedKeys(name)).toEqual(['k']);
    await q.deleteJob(name, behind);
    expect((await pass()).deleted).toBe(1);
    expect(await exists(failed)).toBe(false);
  });

  it('a flow parent stays while a child waits or may be resumed, and goes with its links once the child is done', async () => {
    const parentQueue = await queue();
    const childQueue = await queue();
    const ids = await q.flow([
      { name: parentQueue, ref: 'a' },
      { name: childQueue, ref: 'b', dependsOn: ['a'] },
      { name: childQueue, ref: 'c', dependsOn: ['a'] },
    ]);
    await q.cancel(childQueue, ids.c!); // cancelled while it waited: a resume would wait for the parent again
    await q.fetch(parentQueue);
    await q.complete(parentQueue, ids.a!);
    await expire(ids.a!);
    await pass();
    expect(await exists(ids.a!)).toBe(true); // b waits to run

    const [child] = await q.fetch(childQueue);
    expect(child!.id).toBe(ids.b);
    await q.complete(childQueue, ids.b!);
    await pass();
    // c was cancelled before the parent completed; the completion counted it down, so nothing still needs the parent
    expect(await exists(ids.a!)).toBe(false);
    expect(await f.sql('SELECT 1 FROM $schema.job_deps WHERE parent_id = $1', [ids.a])).toEqual([]);
  });

  it('a cancelled child still counting a parent keeps that parent', async () => {
    const p1 = await queue();
    const childQueue = await queue();
    const ids = await q.flow([
      { name: p1, ref: 'a' },
      { name: p1, ref: 'b' },
      { name: childQueue, ref: 'c', dependsOn: ['a', 'b'] },
    ]);
    await q.cancel(childQueue, ids.c!);
    await q.fetch(p1);
    await q.complete(p1, ids.a!);
    // c still counts b; a is done and nothing counts it any more, b has not run
    await expire(ids.a!);
    await pass();
    expect(await exists(ids.a!)).toBe(false);
    await q.cancel(p1, ids.b!);
    await expire(ids.b!);
    await pass();
    // c, cancelled, still counts b among its parents (a resume would wait for it): b stays
    expect(await exists(ids.b!)).toBe(true);
  });
});

describe('expiring jobs that waited past their retention', () => {
  it('fails a job that was never started, says why, and sends it to its dead-letter queue', async () => {
    const dlq = await queue();
    const name = await queue({ deadLetter: dlq });
    const id = (await q.send(name, { a: 1 }))!;
    const young = (await q.send(name, { a: 2 }))!;
    await expire(id);
    const result = await pass();
    expect(result.expired).toEqual([{ id, queue: name }]);
    const job = (await q.getJobById(name, id))!;
    expect(job.state).toBe('failed');
    expect((job.output as { error: { name: string; message: string } }).error).toMatchObject({
      name: 'RetentionExpiredError',
      message: expect.stringContaining('not started before its retention ran out'),
    });
    expect(secondsUntil(job.keepUntil) / 86_400).toBeCloseTo(30, 2);
    const [copy] = await q.fetch(dlq);
    expect(copy).toMatchObject({ data: { a: 1 } });
    expect((await q.getJobById(dlq, copy!.id))!.sourceId).toBe(id);
    expect((await q.getJobById(name, young))!.state).toBe('created');
  });

  it('fails a job waiting to retry past its retention', async () => {
    const name = await queue({ retryLimit: 3, retryDelay: 3600 });
    const id = (await q.send(name, {}))!;
    await q.fetch(name);
    await q.fail(name, id, new Error('first'));
    expect((await q.getJobById(name, id))!.state).toBe('retry');
    await expire(id);
    expect((await pass()).expired).toEqual([{ id, queue: name }]);
    const output = (await q.getJobById(name, id))!.output as { errors: { name: string }[] };
    expect(output.errors.map((e) => e.name)).toEqual(['Error', 'RetentionExpiredError']);
  });

  it('fails the flow children waiting for an expired parent', async () => {
    const parentQueue = await queue();
    const childQueue = await queue();
    const ids = await q.flow([
      { name: parentQueue, ref: 'a' },
      { name: childQueue, ref: 'b', dependsOn: ['a'] },
    ]);
    // a child waiting for its parent is never past its retention: it counts from its release
    expect(await q.getJobById(childQueue, ids.b!)).toMatchObject({ keepUntil: null, startAfter: null });
    await expire(ids.a!);
    await pass();
    expect((await q.getJobById(parentQueue, ids.a!))!.state).toBe('failed');
    expect((await q.getJobById(childQueue, ids.b!))!.state).toBe('failed');
  });

  it('key_strict_fifo: the head of a key expires and blocks its key; the jobs behind it wait for an operator', async () => {
    const name = await queue({ policy: 'key_strict_fifo' });
    const first = (await q.send(name, {}, { singletonKey: 'k' }))!;
    const second = (await q.send(name, {}, { singletonKey: 'k' }))!;
    const other = (await q.send(name, {}, { singletonKey: 'other' }))!;
    await expire([first, second, other]);
    const result = await pass();
    expect(result.expired.map((e) => e.id).sort()).toEqual([first, other].sort());
    expect((await q.getJobById(name, first))!.state).toBe('failed');
    expect((await q.getJobById(name, second))!.state).toBe('created');
    expect(await q.getBlockedKeys(name)).toEqual(['k', 'other']);
    expect((await pass()).expired).toEqual([]);
    expect(await q.fetch(name)).toEqual([]);
  });
});

describe('what the migration sets', () => {
  it('gives every jobs partition, new ones included, autovacuum settings suited to a queue', async () => {
    await queue({ partition: true });
    const rows = await f.sql<{ relname: string; reloptions: string[] | null }>(
      `SELECT c.relname, c.reloptions FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = '$schema.jobs'::regclass`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) expect(row.reloptions).toContain('autovacuum_vacuum_scale_factor=0.01');
  });
});

describe('what review found', () => {
  it('key_strict_fifo: an unmarked later job does not expire ahead of its due head', async () => {
    const name = await queue({ policy: 'key_strict_fifo' });
    const head = (await q.send(name, {}, { singletonKey: 'k', startAfter: 600 }))!;
    const later = (await q.send(name, {}, { singletonKey: 'k' }))!;
    // Sent while the head was deferred, the later job is not marked waiting. Now both are due; only the later one is
    // past its retention, but the head is due and comes first: the claim would take it, and so the later one waits.
    await f.sql(`UPDATE $schema.jobs SET start_after = now() - interval '1 minute', fifo_wait = 0 WHERE id = $1`, [head]);
    await f.sql(`UPDATE $schema.jobs SET keep_until = now() - interval '1 second', fifo_wait = 0 WHERE id = $1`, [later]);
    expect((await pass()).expired).toEqual([]);
    expect((await q.getJobById(name, later))!.state).toBe('created');
    // once the head is past its retention too, it expires first, and the later one waits behind its failure
    await expire(head);
    expect((await pass()).expired).toEqual([{ id: head, queue: name }]);
    expect((await q.getJobById(name, later))!.state).toBe('created');
  });

  it('a retry whose delay passes the first deadline is not expired: its retention counts from when it is due', async () => {
    const name = await queue({ retentionSeconds: 60, retryLimit: 1, retryDelay: 3600 });
    const id = (await q.send(name, {}))!;
    await q.fetch(name);
    await q.fail(name, id, new Error('later'));
    const job = (await q.getJobById(name, id))!;
    expect(job.state).toBe('retry');
    expect((job.keepUntil!.getTime() - job.startAfter!.getTime()) / 1000).toBeCloseTo(60, 0);
    expect((await pass()).expired).toEqual([]);
  });

  it('a parent that fails for good takes down key_strict_fifo children without breaking their key', async () => {
    const parents = await queue({ retryLimit: 0 });
    const fifo = await queue({ policy: 'key_strict_fifo' });
    const blocked = await finish(fifo, 'fail', { singletonKey: 'taken' }); // key "taken" already holds a failure
    const ids = await q.flow([
      { name: parents, ref: 'p' },
      { name: fifo, ref: 'a', dependsOn: ['p'], singletonKey: 'k' },
      { name: fifo, ref: 'b', dependsOn: ['p'], singletonKey: 'k' },
      { name: fifo, ref: 'c', dependsOn: ['p'], singletonKey: 'taken' },
    ]);
    await q.fetch(parents);
    await q.fail(parents, ids.p!, new Error('boom'));
    const states = async (ref: 'a' | 'b' | 'c') => (await q.getJobById(fifo, ids[ref]!))!.state;
    expect([await states('a'), await states('b'), await states('c')]).toEqual(['failed', 'cancelled', 'cancelled']);
    expect((await q.getJobById(fifo, blocked))!.state).toBe('failed');
  });

  it('an expiry that fails is reported, and the deletes still run', async () => {
    const name = await queue();
    const done = await finish(name, 'complete');
    const waiting = (await q.send(name, {}))!;
    await expire([done, waiting]);
    await f.sql(`CREATE FUNCTION $schema.refuse() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN IF NEW.state = 'failed' AND NEW.id = ${Number(waiting)} THEN RAISE EXCEPTION 'refused by a test trigger'; END IF; RETURN NEW; END $fn$`);
    await f.sql(`CREATE TRIGGER refuse BEFORE UPDATE ON $schema.jobs_default FOR EACH ROW EXECUTE FUNCTION $schema.refuse()`);
    const errors: string[] = [];
    const reporting = f.create({ supervise: false });
    reporting.on('error', (err) => errors.push(`${err.context}: ${err.message}`));
    try {
      const result = await reporting.maintain({ force: true });
      expect(result.deleted).toBe(1);
      expect(result.expired).toEqual([]);
      expect(errors).toEqual([expect.stringMatching(/^retention: expiring waiting jobs .*refused by a test trigger/)]);
    } finally {
      await f.sql('DROP TRIGGER refuse ON $schema.jobs_default');
    }
    expect((await pass()).expired).toEqual([{ id: waiting, queue: name }]);
  });
});

describe('a key_strict_fifo parent and its child on the same key', () => {
  it('the parent failing (in the same statement) leaves its child cancelled, not a second failure of the key', async () => {
    const name = await queue({ policy: 'key_strict_fifo', retryLimit: 0 });
    const ids = await q.flow([
      { name, ref: 'p', singletonKey: 'k' },
      { name, ref: 'c', singletonKey: 'k', dependsOn: ['p'] },
    ]);
    await q.fetch(name);
    await q.fail(name, ids.p!, new Error('boom'));
    expect((await q.getJobById(name, ids.p!))!.state).toBe('failed');
    expect((await q.getJobById(name, ids.c!))!.state).toBe('cancelled');
  });
});
