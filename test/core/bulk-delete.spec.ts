import { InvalidOptionError, QueueNotFoundError } from '../../lib/core/errors.js';
import { BULK_DELETE_BATCH } from '../../lib/core/queues/bulk-delete.js';
import { stateCounts } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

// deleteQueuedJobs, deleteStoredJobs, deleteAllJobs: each on a queue holding a job in every state.
const f = queueFixture('bulkdel');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

let n = 0;
async function queue(options = {}): Promise<string> {
  const name = `b${++n}`;
  await q.createQueue(name, options);
  return name;
}

const counts = (name: string) => stateCounts(f.pool, f.schema, name);
const exists = async (id: string) => (await f.sql('SELECT 1 FROM $schema.jobs WHERE id = $1', [id])).length === 1;

/** One job in each state: created (2), retry, active, completed, cancelled, failed. */
async function everyState(name: string): Promise<void> {
  const run = async (options = {}) => {
    const id = (await q.send(name, {}, options))!;
    const [job] = await q.fetch(name);
    expect(job!.id).toBe(id);
    return id;
  };
  await q.complete(name, await run());
  await q.fail(name, await run({ retryLimit: 0 }), new Error('boom'));
  await q.fail(name, await run({ retryLimit: 1, retryDelay: 3600 }), new Error('again later')); // retry, due in an hour
  await run(); // active
  await q.cancel(name, (await q.send(name, {}))!);
  await q.send(name, {});
  await q.send(name, {});
  expect(await counts(name)).toEqual({ created: 2, retry: 1, active: 1, completed: 1, cancelled: 1, failed: 1 });
}

describe('which jobs each deletes', () => {
  it('deleteQueuedJobs deletes the created and retry jobs, and only those of its queue', async () => {
    const name = await queue();
    const other = await queue();
    await everyState(name);
    await q.send(other, {});
    expect(await q.deleteQueuedJobs(name)).toBe(3);
    expect(await counts(name)).toEqual({ active: 1, completed: 1, cancelled: 1, failed: 1 });
    expect(await counts(other)).toEqual({ created: 1 });
  });

  it('deleteStoredJobs deletes the completed, cancelled and failed jobs', async () => {
    const name = await queue();
    const other = await queue();
    await everyState(name);
    await everyState(other);
    expect(await q.deleteStoredJobs(name)).toBe(3);
    expect(await counts(name)).toEqual({ created: 2, retry: 1, active: 1 });
    expect(await counts(other)).toEqual({ created: 2, retry: 1, active: 1, completed: 1, cancelled: 1, failed: 1 });
  });

  it('deleteAllJobs(name) deletes every job of the queue but the active ones', async () => {
    const name = await queue();
    const other = await queue();
    await everyState(name);
    await q.send(other, {});
    expect(await q.deleteAllJobs(name)).toBe(6);
    expect(await counts(name)).toEqual({ active: 1 });
    expect(await counts(other)).toEqual({ created: 1 });
  });

  it('deleteAllJobs() deletes every job of every queue but the active ones', async () => {
    const a = await queue();
    const b = await queue();
    await everyState(a);
    await everyState(b);
    await q.deleteAllJobs();
    // every queue of this file: what the earlier tests left active is all there is
    expect(Object.keys(await stateCounts(f.pool, f.schema))).toEqual(['active']);
    expect(await counts(a)).toEqual({ active: 1 });
    expect(await counts(b)).toEqual({ active: 1 });
  });
});

describe('in batches', () => {
  it('deletes more jobs than one batch holds', async () => {
    const name = await queue();
    const total = BULK_DELETE_BATCH * 2 + 500;
    await q.insert(
      name,
      Array.from({ length: total }, (_, i) => ({ data: { i } })),
    );
    expect(await q.deleteQueuedJobs(name)).toBe(total);
    expect(await counts(name)).toEqual({});

    await q.insert(
      name,
      Array.from({ length: total }, (_, i) => ({ data: { i } })),
    );
    await f.sql(`UPDATE $schema.jobs SET state = 'completed', completed_on = now() WHERE queue = $1`, [name]);
    expect(await q.deleteStoredJobs(name)).toBe(total);
    expect(await counts(name)).toEqual({});
  });

  it('skips a row another transaction holds, and deletes it on a later call', async () => {
    const name = await queue();
    const ids = [(await q.send(name, {}))!, (await q.send(name, {}))!, (await q.send(name, {}))!];
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${f.schema}".jobs WHERE queue = $1 AND id = $2 FOR UPDATE`, [name, ids[1]]);
      expect(await q.deleteQueuedJobs(name)).toBe(2);
      expect(await exists(ids[0]!)).toBe(false);
      expect(await exists(ids[1]!)).toBe(true);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect(await q.deleteQueuedJobs(name)).toBe(1);
    expect(await exists(ids[1]!)).toBe(false);
  });
});

describe('in batches, finished jobs', () => {
  it('walks past a held row and the waiting ones among more finished jobs than one batch holds; a later call takes the held one', async () => {
    const name = await queue();
    const total = BULK_DELETE_BATCH * 2 + 10;
    await q.insert(
      name,
      Array.from({ length: total }, (_, i) => ({ data: { i } })),
    );
    // every tenth job stays waiting, the rest finished
    await f.sql(`UPDATE $schema.jobs SET state = 'completed', completed_on = now() WHERE queue = $1 AND (data->>'i')::int % 10 <> 0`, [
      name,
    ]);
    const finished = total - Math.ceil(total / 10);
    const [held] = await f.sql<{ id: string }>(
      `SELECT id::text FROM $schema.jobs WHERE queue = $1 AND state = 'completed' ORDER BY id OFFSET 1500 LIMIT 1`,
      [name],
    );
    const holder = await f.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${f.schema}".jobs WHERE queue = $1 AND id = $2 FOR UPDATE`, [name, held!.id]);
      expect(await q.deleteStoredJobs(name)).toBe(finished - 1);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect(await counts(name)).toEqual({ created: total - finished, completed: 1 });
    expect(await q.deleteStoredJobs(name)).toBe(1);
    expect(await counts(name)).toEqual({ created: total - finished });
  });
});

describe('what stays', () => {
  it('deleteStoredJobs keeps a failed key_strict_fifo job while jobs of its key wait; deleteAllJobs takes both', async () => {
    const name = await queue({ policy: 'key_strict_fifo' });
    const failed = (await q.send(name, {}, { singletonKey: 'k', retryLimit: 0 }))!;
    await q.fetch(name);
    await q.fail(name, failed, new Error('boom'));
    const behind = (await q.send(name, {}, { singletonKey: 'k' }))!;
    expect(await q.deleteStoredJobs(name)).toBe(0);
    expect(await q.getBlockedKeys(name)).toEqual(['k']);
    expect(await q.deleteAllJobs(name)).toBe(2);
    expect(await exists(failed)).toBe(false);
    expect(await exists(behind)).toBe(false);
  });

  it('deleteStoredJobs keeps a job that holds a throttle slot', async () => {
    const name = await queue();
    const id = (await q.sendThrottled(name, {}, {}, 3600))!;
    await q.fetch(name);
    await q.complete(name, id);
    expect(await q.deleteStoredJobs(name)).toBe(0);
    expect(await exists(id)).toBe(true);
    expect(await q.sendThrottled(name, {}, {}, 3600)).toBeNull();
  });

  it('deleteStoredJobs keeps a flow parent while its child waits', async () => {
    const parents = await queue();
    const children = await queue();
    const ids = await q.flow([
      { name: parents, ref: 'a' },
      { name: children, ref: 'b', dependsOn: ['a'] },
    ]);
    await q.fetch(parents);
    await q.complete(parents, ids.a!);
    expect(await q.deleteStoredJobs(parents)).toBe(0); // b waits to run
    expect(await exists(ids.a!)).toBe(true);
    expect(await q.deleteQueuedJobs(children)).toBe(1);
    expect(await q.deleteStoredJobs(parents)).toBe(1);
    expect(await f.sql('SELECT 1 FROM $schema.job_deps WHERE parent_id = $1', [ids.a])).toEqual([]);
  });

  it.each(['deleteQueuedJobs', 'purgeQueue'] as const)(
    '%s fails or cancels the flow children that waited for a deleted parent, and drops its links',
    async (call) => {
      const parents = await queue();
      const children = await queue();
      const ids = await q.flow([
        { name: parents, ref: 'a' },
        { name: children, ref: 'b', dependsOn: ['a'] },
        { name: children, ref: 'c', dependsOn: ['a'], onParentFailure: 'cancel' },
      ]);
      expect(await q[call](parents)).toBe(1);
      expect((await q.getJobById(children, ids.b!))!.state).toBe('failed');
      expect((await q.getJobById(children, ids.c!))!.state).toBe('cancelled');
      expect(await f.sql('SELECT 1 FROM $schema.job_deps WHERE parent_id = $1', [ids.a])).toEqual([]);
    },
  );

  it('keeps a waiting parent whose child was cancelled before its release: a resume would wait for it again', async () => {
    const parents = await queue();
    const children = await queue();
    const ids = await q.flow([
      { name: parents, ref: 'a' },
      { name: children, ref: 'b', dependsOn: ['a'] },
    ]);
    await q.cancel(children, ids.b!);
    expect(await q.deleteQueuedJobs(parents)).toBe(0);
    expect(await exists(ids.a!)).toBe(true);
    // resumed, the child still waits for a parent that exists, and runs once it completes
    await q.resume(children, ids.b!);
    await q.fetch(parents);
    await q.complete(parents, ids.a!);
    expect((await q.getJobById(children, ids.b!))!.state).toBe('created');
    expect((await q.fetch(children)).map((j) => j.id)).toEqual([ids.b]);
  });
});

describe('bad input', () => {
  it('a queue that does not exist: QueueNotFoundError, from each', async () => {
    await expect(q.deleteQueuedJobs('nope')).rejects.toBeInstanceOf(QueueNotFoundError);
    await expect(q.deleteStoredJobs('nope')).rejects.toBeInstanceOf(QueueNotFoundError);
    await expect(q.deleteAllJobs('nope')).rejects.toBeInstanceOf(QueueNotFoundError);
  });

  it('a name that is not a queue name: InvalidOptionError naming the field', async () => {
    for (const call of [
      () => q.deleteQueuedJobs(''),
      () => q.deleteStoredJobs(42 as unknown as string),
      () => q.deleteAllJobs(null as unknown as string),
    ]) {
      const err: unknown = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect((err as InvalidOptionError).field).toBe('name');
    }
  });
});
