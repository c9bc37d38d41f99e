import { InvalidOptionError, PermanentJobError } from '../../lib/core/errors.js';
import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('flow');
const q = f.create({ supervise: false });
beforeAll(async () => {
  await q.createQueue('fetch-data', { retryLimit: 0 });
  await q.createQueue('render');
  await q.createQueue('notify');
});
afterAll(() => f.cleanup());

const count = async () => (await f.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs'))[0]!.n;

describe('flow: jobs that wait for each other', () => {
  it('a child is blocked until its parent completes, then runs', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'a', data: { step: 1 } },
      { name: 'render', ref: 'b', data: { step: 2 }, dependsOn: ['a'] },
    ]);
    expect((await q.getQueue('render', { force: true }))!).toMatchObject({ blockedCount: 1, deferredCount: 0, readyCount: 0 });
    expect(await q.fetch('render')).toEqual([]);
    const [parent] = await q.fetch('fetch-data');
    expect(parent!.id).toBe(ids.a);
    await q.complete('fetch-data', ids.a!);
    expect((await q.getQueue('render', { force: true }))!.blockedCount).toBe(0);
    expect((await q.fetch('render')).map((j) => j.id)).toEqual([ids.b]);
  });

  it('a blocked child cancelled, then resumed once its parent has completed, runs', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'a' },
      { name: 'render', ref: 'b', dependsOn: ['a'] },
    ]);
    await q.cancel('render', ids.b!);
    await q.fetch('fetch-data');
    await q.complete('fetch-data', ids.a!);
    await q.resume('render', ids.b!);
    expect((await q.fetch('render')).map((j) => j.id)).toEqual([ids.b]);
  });

  it('a blocked child cancelled and resumed before its parent completes still waits for it', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'a' },
      { name: 'render', ref: 'b', dependsOn: ['a'] },
    ]);
    await q.cancel('render', ids.b!);
    await q.resume('render', ids.b!);
    expect(await q.fetch('render')).toEqual([]);
    await q.fetch('fetch-data');
    await q.complete('fetch-data', ids.a!);
    expect((await q.fetch('render')).map((j) => j.id)).toEqual([ids.b]);
  });

  it('a cancelled child of two parents, resumed after one completed, waits for the other', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'p1' },
      { name: 'notify', ref: 'p2' },
      { name: 'render', ref: 'c', dependsOn: ['p1', 'p2'] },
    ]);
    await q.cancel('render', ids.c!);
    await q.fetch('fetch-data');
    await q.complete('fetch-data', ids.p1!);
    await q.resume('render', ids.c!);
    expect(await q.fetch('render')).toEqual([]);
    await q.fetch('notify');
    await q.complete('notify', ids.p2!);
    expect((await q.fetch('render')).map((j) => j.id)).toEqual([ids.c]);
  });

  it.each(['resume first', 'completion first'] as const)(
    'a resume that races with the completion of the parent (%s to wait on the child) still releases the child',
    async (first) => {
      const ids = await q.flow([
        { name: 'fetch-data', ref: 'a' },
        { name: 'render', ref: 'b', dependsOn: ['a'] },
      ]);
      await q.cancel('render', ids.b!);
      await q.fetch('fetch-data');
      // A transaction holds the child's row, so both statements take their snapshots before either commits.
      const holder = await f.pool.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${f.schema}".jobs WHERE id = $1 FOR UPDATE`, [ids.b]);
        const waiting = async (n: number) =>
          until(async () => {
            const [row] = await f.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%"${f.schema}".%'`,
            );
            return row!.n >= n;
          }, `${n} statement(s) waiting on the child's row`);
        const resume = () => q.resume('render', ids.b!);
        const complete = () => q.complete('fetch-data', ids.a!);
        const one = first === 'resume first' ? resume() : complete();
        await waiting(1);
        const two = first === 'resume first' ? complete() : resume();
        await waiting(2);
        await holder.query('COMMIT');
        await Promise.all([one, two]);
      } finally {
        holder.release();
      }
      expect((await q.fetch('render')).map((j) => j.id)).toEqual([ids.b]);
    },
  );

  it('a child with two parents in other queues waits for both', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'p1' },
      { name: 'render', ref: 'p2' },
      { name: 'notify', ref: 'c', dependsOn: ['p1', 'p2'] },
    ]);
    await q.fetch('fetch-data');
    await q.complete('fetch-data', ids.p1!);
    expect(await q.fetch('notify')).toEqual([]);
    await q.fetch('render');
    await q.complete('render', ids.p2!);
    expect((await q.fetch('notify')).map((j) => j.id)).toEqual([ids.c]);
  });

  it('when a parent fails for good, its descendants fail (or are cancelled, as each asked)', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'root' },
      { name: 'render', ref: 'fails', dependsOn: ['root'] },
      { name: 'render', ref: 'cancels', dependsOn: ['root'], onParentFailure: 'cancel' },
      { name: 'notify', ref: 'grandchild', dependsOn: ['fails'] },
    ]);
    await q.fetch('fetch-data');
    await q.fail('fetch-data', ids.root!, new PermanentJobError('source down'));
    expect((await q.getJobById('render', ids.fails!))!).toMatchObject({
      state: 'failed',
      output: { error: { name: 'ParentFailedError' } },
    });
    expect((await q.getJobById('render', ids.cancels!))!.state).toBe('cancelled');
    expect((await q.getJobById('notify', ids.grandchild!))!.state).toBe('failed');
  });

  it('cancelling a parent cancels or fails its children', async () => {
    const ids = await q.flow([
      { name: 'fetch-data', ref: 'p' },
      { name: 'render', ref: 'c', dependsOn: ['p'], onParentFailure: 'cancel' },
    ]);
    await q.cancel('fetch-data', ids.p!);
    expect((await q.getJobById('render', ids.c!))!.state).toBe('cancelled');
  });

  it('a cycle, an unknown ref or a duplicate ref is refused, and nothing is inserted', async () => {
    const before = await count();
    await expect(
      q.flow([
        { name: 'render', ref: 'x', dependsOn: ['y'] },
        { name: 'render', ref: 'y', dependsOn: ['x'] },
      ]),
    ).rejects.toThrow('refs that do not form a cycle');
    await expect(q.flow([{ name: 'render', ref: 'x', dependsOn: ['nope'] }])).rejects.toThrow(InvalidOptionError);
    await expect(
      q.flow([
        { name: 'render', ref: 'x' },
        { name: 'render', ref: 'x' },
      ]),
    ).rejects.toThrow('jobs[1].ref must be a ref no other job of the flow uses');
    await expect(
      q.flow([
        { name: 'render', ref: 'x' },
        { name: 'missing-queue', ref: 'y', dependsOn: ['x'] },
      ]),
    ).rejects.toThrow('queue "missing-queue" does not exist');
    expect(await count()).toBe(before);
  });

  it('workers run a chain in order, the child woken by NOTIFY when its parent completes', async () => {
    const w = f.create({ supervise: false });
    const order: string[] = [];
    await w.createQueue('chain.a');
    await w.createQueue('chain.b');
    await w.work('chain.a', { pollingIntervalSeconds: 3600 }, async () => void order.push('a'));
    await w.work('chain.b', { pollingIntervalSeconds: 3600 }, async () => void order.push('b'));
    // Let both loops go idle first (an empty claim each), so only a NOTIFY can wake them.
    await until(
      // this schema's channel: another test's engine may listen on its own meanwhile
      async () =>
        (
          await f.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1`, [`LISTEN "pgqueue_${f.schema}"`])
        )[0]!.n > 0,
      'listening',
    );
    const ids = await w.flow([
      { name: 'chain.a', ref: 'a' },
      { name: 'chain.b', ref: 'b', dependsOn: ['a'] },
    ]);
    await until(async () => (await w.getJobById('chain.b', ids.b!))!.state === 'completed', 'the child completed');
    expect(order).toEqual(['a', 'b']);
    await w.stopWorkers();
  });

  it("a worker's failure of a parent fails its children; of a job in the same batch that is no parent, only that job", async () => {
    const w = f.create({ supervise: false });
    await w.createQueue('doomed.parents', { retryLimit: 0 });
    await w.createQueue('doomed.children');
    const ids = await w.flow([
      { name: 'doomed.parents', ref: 'p' },
      { name: 'doomed.parents', ref: 'leaf' },
      { name: 'doomed.children', ref: 'c', dependsOn: ['p'] },
    ]);
    await w.work('doomed.parents', { batchSize: 2 }, async () => {
      throw new PermanentJobError('no');
    });
    await until(async () => (await w.getJobById('doomed.children', ids.c!))!.state === 'failed', 'the child failed with its parent');
    await until(async () => (await w.getJobById('doomed.parents', ids.leaf!))!.state === 'failed', 'the other job failed');
    expect((await w.getJobById('doomed.children', ids.c!))!.output).toMatchObject({ error: { name: 'ParentFailedError' } });
    await w.stopWorkers();
  });

  it('a job its claim took for no parent, that has a child by the time it completes, still releases the child', async () => {
    // The links of a flow given a db outside a transaction commit after its jobs: a worker may claim a parent
    // before its link to its child is there. Here the link and the child are written while the handler runs.
    const w = f.create({ supervise: false });
    await w.createQueue('late.parent');
    await w.createQueue('late.child');
    let release!: () => void;
    const handlerMayReturn = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    await w.work('late.parent', {}, async () => {
      started = true;
      await handlerMayReturn;
    });
    const parent = (await w.send('late.parent', {}))!;
    await until(async () => started, 'the parent started');
    const [child] = await f.sql<{ id: string }>(
      `INSERT INTO $schema.jobs (queue, blocked_by, start_after, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
       VALUES ('late.child', 1, 'infinity', 0, 0, false, 60, 60, 'infinity') RETURNING id::text`,
    );
    await f.sql(
      `INSERT INTO $schema.job_deps (parent_queue, parent_id, child_queue, child_id) VALUES ('late.parent', $1, 'late.child', $2)`,
      [parent, child!.id],
    );
    release();
    await until(async () => (await w.getJobById('late.parent', parent))!.state === 'completed', 'the parent completed');
    await until(
      async () => (await f.sql<{ n: number }>('SELECT blocked_by AS n FROM $schema.jobs WHERE id = $1', [child!.id]))[0]!.n === 0,
      'the child was released',
    );
    await w.stopWorkers();

    // and by hand: complete() of a job with a child
    const byHand = (await q.send('late.parent', {}))!;
    const [other] = await f.sql<{ id: string }>(
      `INSERT INTO $schema.jobs (queue, blocked_by, start_after, retry_limit, retry_delay, retry_backoff, expire_seconds, delete_after_seconds, keep_until)
       VALUES ('late.child', 1, 'infinity', 0, 0, false, 60, 60, 'infinity') RETURNING id::text`,
    );
    await f.sql(
      `INSERT INTO $schema.job_deps (parent_queue, parent_id, child_queue, child_id) VALUES ('late.parent', $1, 'late.child', $2)`,
      [byHand, other!.id],
    );
    expect((await q.fetch('late.parent')).map((j) => j.id)).toEqual([byHand]);
    expect((await q.complete('late.parent', byHand)).updated).toBe(1);
    expect((await f.sql<{ n: number }>('SELECT blocked_by AS n FROM $schema.jobs WHERE id = $1', [other!.id]))[0]!.n).toBe(0);
  });
});
