// Pausing without a restart: pauseQueue/resumeQueue across instances, and stopWorking/startWorking (and the
// startWorkers option) for one instance's loops.
import { QueueNotFoundError } from '../../lib/core/index.js';
import { runtimeOf, type PgQueue } from '../../lib/core/pg-queue.js';
import { stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('pause');
afterAll(() => f.cleanup());
afterEach(() => f.closeMade());

/**
 * Counts the claims `q` has made (statements whose pick names the CTE `next`, answered), from now on: its worker
 * loops and fetch() send them on the engine's executor (tests only: the executor is wrapped in place).
 */
async function claimsOf(q: PgQueue): Promise<() => number> {
  await q.start();
  const exec = runtimeOf(q).exec;
  const query = exec.query.bind(exec);
  let answered = 0;
  exec.query = (async (text: string, values?: unknown[]) => {
    const rows = await query(text, values);
    if (text.includes('WITH next AS MATERIALIZED')) answered++;
    return rows;
  }) as typeof exec.query;
  return () => answered;
}

describe('pauseQueue / resumeQueue', () => {
  it("stops every instance's claims at once, lets send() go on, and a resume wakes the idle workers at once", async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await a.createQueue('pause.q');
    const claims = [await claimsOf(a), await claimsOf(b)];
    const ran: string[] = [];
    // a long poll: only a NOTIFY wakes these loops in the time the test waits
    for (const q of [a, b]) await q.work('pause.q', { pollingIntervalSeconds: 60 }, (job) => void ran.push(job.id));
    const first = (await a.send('pause.q', {}))!;
    await until(async () => (await a.getJobById('pause.q', first))!.state === 'completed', 'a job ran before the pause');

    await b.pauseQueue('pause.q');
    expect((await a.getQueue('pause.q'))!.paused).toBe(true);
    const before = claims.map((n) => n());
    const held = await a.insert('pause.q', [{ data: { n: 1 } }, { data: { n: 2 } }, { data: { n: 3 } }]);
    expect(held).toHaveLength(3); // send() works while paused
    // the insert's NOTIFY woke both loops: each claimed, and took nothing
    await until(() => claims.every((n, i) => n() > before[i]!), 'both instances claimed after the pause');
    expect(await a.fetch('pause.q')).toEqual([]); // a fetch by hand claims nothing either
    expect(await stateCounts(f.pool, f.schema, 'pause.q')).toEqual({ completed: 1, created: 3 });

    await a.resumeQueue('pause.q');
    expect((await b.getQueue('pause.q'))!.paused).toBe(false);
    await until(() => held.every((id) => ran.includes(id)), 'the held jobs ran once resumed (woken, not polled)');
  });

  it('every claim statement honours it: the policies with keys, a limited queue, a grouped loop', async () => {
    const q = f.create({ supervise: false });
    const shapes = [
      ['pause.singleton', { policy: 'singleton' }, { singletonKey: 'k' }],
      ['pause.fifo', { policy: 'key_strict_fifo' }, { singletonKey: 'k' }],
      ['pause.limited', { concurrencyLimit: 2 }, {}],
      ['pause.grouped', {}, { group: { id: 'g' } }],
    ] as const;
    for (const [name, options, send] of shapes) {
      await q.createQueue(name, options);
      await q.send(name, {}, send);
      await q.pauseQueue(name);
    }
    const grouped: string[] = [];
    await q.work('pause.grouped', { groupConcurrency: 1, pollingIntervalSeconds: 60 }, (job) => void grouped.push(job.id));
    for (const [name] of shapes) expect({ name, fetched: (await q.fetch(name)).length }).toEqual({ name, fetched: 0 });
    for (const [name] of shapes) await q.resumeQueue(name);
    for (const [name] of shapes.slice(0, 3)) expect({ name, fetched: (await q.fetch(name)).length }).toEqual({ name, fetched: 1 });
    await until(() => grouped.length === 1, 'the grouped loop took its job once resumed');
  });

  it('names an unknown queue', async () => {
    const q = f.create({ supervise: false });
    await expect(q.pauseQueue('pause.none')).rejects.toThrow(QueueNotFoundError);
    await expect(q.resumeQueue('pause.none')).rejects.toThrow(QueueNotFoundError);
  });
});

describe('stopWorking / startWorking', () => {
  it("stops this instance's loops of a queue (draining them) and holds them, shown in the cluster registry", async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('hold.a');
    await q.createQueue('hold.b');
    const ran: string[] = [];
    await q.work('hold.a', { pollingIntervalSeconds: 60 }, (job) => void ran.push(job.id));
    await q.work('hold.b', { pollingIntervalSeconds: 60 }, (job) => void ran.push(job.id));
    await q.stopWorking('hold.a');
    expect(q.workerCount).toBe(1);
    // the registry is written as loops change: wait for the write that has both the hold and the loop gone
    const me = await until(
      async () => (await q.getWorkers()).find((w) => w.stopped.includes('hold.a') && !w.queues.some((x) => x.name === 'hold.a')),
      'the registry shows it',
    );
    expect(me.queues.map((x) => x.name)).toEqual(['hold.b']);
    // a loop made for a held queue is held too
    await q.work('hold.a', { pollingIntervalSeconds: 60, concurrency: 2 }, (job) => void ran.push(job.id));
    expect(q.workerCount).toBe(1);
    const waiting = (await q.send('hold.a', {}))!;
    const other = (await q.send('hold.b', {}))!;
    await until(() => ran.includes(other), "the other queue's loop still works");
    expect((await q.getJobById('hold.a', waiting))!.state).toBe('created');

    await q.startWorking('hold.a');
    expect(q.workerCount).toBe(3);
    await until(() => ran.includes(waiting), 'the held loops run again');
    await until(async () => (await q.getWorkers()).find((w) => w.stopped.length === 0 && w.loops.length === 3), 'the registry shows them');
  });

  it('with startWorkers: false, loops are made held until startWorking(); offWork forgets a held loop', async () => {
    const q = f.create({ supervise: false, startWorkers: false });
    await q.createQueue('hold.boot');
    const ran: string[] = [];
    const forgotten = await q.work('hold.boot', { pollingIntervalSeconds: 60 }, () => void ran.push('forgotten'));
    await q.offWork(forgotten);
    await q.work('hold.boot', { pollingIntervalSeconds: 60 }, (job) => void ran.push(job.id));
    expect(q.workerCount).toBe(0);
    const id = (await q.send('hold.boot', {}))!;
    await q.startWorking();
    expect(q.workerCount).toBe(1);
    await until(() => ran.includes(id), 'the job ran once started');
    expect(ran).toEqual([id]);
    // stopWorking() with no name holds every queue: startWorking(name) starts that queue's, startWorking() all
    await q.createQueue('hold.other');
    await q.work('hold.other', { pollingIntervalSeconds: 60 }, () => undefined);
    await q.stopWorking();
    expect(q.workerCount).toBe(0);
    await q.startWorking('hold.other');
    expect(q.workerCount).toBe(1);
    await q.work('hold.boot', { pollingIntervalSeconds: 60 }, () => undefined); // still held: made held
    expect(q.workerCount).toBe(1);
    await q.startWorking();
    expect(q.workerCount).toBe(3);
  });
});
