import { until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('rmc');
afterAll(() => f.cleanup());

const rowsOf = async (queue: string) =>
  f.sql<{ id: string; state: string }>(`SELECT id::text, state::text FROM $schema.jobs WHERE queue = $1 ORDER BY id`, [queue]);

describe('removeOnComplete', () => {
  it('is off by default, is validated, and can be changed with updateQueue', async () => {
    const q = f.create();
    await q.createQueue('rmc.settings');
    expect((await q.getQueue('rmc.settings'))!.removeOnComplete).toBe(false);
    await expect(q.createQueue('rmc.bad', { removeOnComplete: 'yes' as unknown as boolean })).rejects.toThrow(
      'options.removeOnComplete must be true or false, got "yes"',
    );
    expect(await q.getQueue('rmc.bad')).toBeNull();
    await q.updateQueue('rmc.settings', { removeOnComplete: true });
    expect((await q.getQueue('rmc.settings'))!.removeOnComplete).toBe(true);
    // createQueue with other settings than the stored ones is refused, naming the setting
    await expect(q.createQueue('rmc.settings', { removeOnComplete: false })).rejects.toThrow('removeOnComplete is true, asked false');
  });

  it('a worker deletes the jobs it completes; failures stay visible; a queue without it keeps its jobs', async () => {
    const q = f.create();
    await q.createQueue('rmc.work', { removeOnComplete: true, retryLimit: 0 });
    await q.createQueue('rmc.keep');
    const ok = await q.insert(
      'rmc.work',
      Array.from({ length: 300 }, (_, i) => ({ data: { i } })),
    );
    const bad = (await q.send('rmc.work', { fail: true }))!;
    const kept = await q.insert(
      'rmc.keep',
      Array.from({ length: 50 }, () => ({})),
    );
    const seen = new Set<string>();
    const handler = async (job: { id: string; data: { fail?: boolean } | null }) => {
      seen.add(job.id);
      if (job.data?.fail) throw new Error('broke');
      return { out: job.id };
    };
    await q.work('rmc.work', { pollingIntervalSeconds: 0.1, batchSize: 100, concurrency: 20 }, handler);
    await q.work('rmc.keep', { pollingIntervalSeconds: 0.1 }, handler);
    // the completed jobs deleted, the failed one kept (its failure may be written after the completions)
    await until(
      async () => JSON.stringify(await rowsOf('rmc.work')) === JSON.stringify([{ id: bad, state: 'failed' }]),
      'only the failed job left',
    );
    expect([...ok, bad].every((id) => seen.has(id))).toBe(true);
    expect(await q.getJobById('rmc.work', ok[0]!)).toBeNull();
    await until(async () => (await rowsOf('rmc.keep')).every((r) => r.state === 'completed'), 'the other queue completed');
    expect((await rowsOf('rmc.keep')).map((r) => r.id)).toEqual(kept);
    expect(q.counters.staleResults).toBe(0);
    await q.stopWorkers();
  });

  it('complete() by hand deletes too, fenced to the attempt like any completion', async () => {
    const q = f.create();
    await q.createQueue('rmc.hand', { removeOnComplete: true });
    await q.send('rmc.hand', {});
    const [job] = await q.fetch('rmc.hand');
    expect((await q.complete('rmc.hand', { id: job!.id, retryCount: 1 })).updated).toBe(0); // not this attempt
    expect(await rowsOf('rmc.hand')).toEqual([{ id: job!.id, state: 'active' }]);
    expect(await q.complete('rmc.hand', job!.id, { done: true })).toEqual({ requested: 1, updated: 1, ids: [job!.id] });
    expect(await rowsOf('rmc.hand')).toEqual([]);
    expect((await q.complete('rmc.hand', job!.id)).updated).toBe(0); // gone: nothing left to complete
  });

  it("a worker's stale attempt cannot delete the job: only the attempt that holds it", async () => {
    const q = f.create();
    await q.createQueue('rmc.fence', { removeOnComplete: true });
    const id = (await q.send('rmc.fence', {}))!;
    let finish!: () => void;
    const started = new Promise<void>((resolve) => {
      void q.work('rmc.fence', { pollingIntervalSeconds: 0.1 }, async () => {
        resolve();
        await new Promise<void>((r) => (finish = r));
      });
    });
    await started;
    // Another holder takes the job over while the handler runs (as the reaper and a second worker would).
    await f.sql(`UPDATE $schema.jobs SET claim_count = claim_count + 1, worker_id = 'someone-else' WHERE id = $1`, [id]);
    finish();
    await until(() => q.counters.staleResults === 1, 'the stale result counted');
    expect(await rowsOf('rmc.fence')).toEqual([{ id, state: 'active' }]);
    await q.stopWorkers();
  });

  it('keeps a job that holds a throttle slot, so the slot stays taken', async () => {
    const q = f.create();
    await q.createQueue('rmc.throttle', { removeOnComplete: true });
    const first = (await q.sendThrottled('rmc.throttle', { n: 1 }, null, 3600))!;
    await q.work('rmc.throttle', { pollingIntervalSeconds: 0.1 }, async () => undefined);
    await until(async () => (await rowsOf('rmc.throttle'))[0]?.state === 'completed', 'completed and kept');
    expect(await rowsOf('rmc.throttle')).toEqual([{ id: first, state: 'completed' }]);
    expect(await q.sendThrottled('rmc.throttle', { n: 2 }, null, 3600)).toBeNull();
    await q.stopWorkers();
  });

  it('keeps a flow parent until its children are released, and the children run', async () => {
    const q = f.create();
    await q.createQueue('rmc.parent', { removeOnComplete: true });
    await q.createQueue('rmc.child', { removeOnComplete: true });
    const ids = await q.flow([
      { name: 'rmc.parent', ref: 'p' },
      { name: 'rmc.child', ref: 'c', dependsOn: ['p'] },
      { name: 'rmc.parent', ref: 'solo' },
    ]);
    const order: string[] = [];
    await q.work('rmc.parent', { pollingIntervalSeconds: 0.1 }, async (job) => void order.push(job.id));
    await q.work('rmc.child', { pollingIntervalSeconds: 0.1 }, async (job) => void order.push(job.id));
    // a handler returns before its completion is written: wait for the solo job's deletion too
    await until(
      async () => (await rowsOf('rmc.child')).length === 0 && order.length === 3 && (await rowsOf('rmc.parent')).length === 1,
      'the child ran and was deleted, and so was the solo job',
    );
    expect(order.indexOf(ids.c!)).toBeGreaterThan(order.indexOf(ids.p!));
    // the parent is kept (completed), the job that nothing waits for is gone
    expect(await rowsOf('rmc.parent')).toEqual([{ id: ids.p, state: 'completed' }]);
    await q.stopWorkers();
  });
});
