// offWork(name, { id, wait }), as pg-boss takes it: `id` stops one loop of the queue named, and `wait: false`
// returns while the loops' running handlers drain in the background (their jobs still complete).
import { InvalidOptionError } from '../../lib/core/errors.js';
import { deferred, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('offwork');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

let queues = 0;
async function setup() {
  const q = f.create({ supervise: false, shutdownTimeoutMs: 30_000 });
  const name = `ow${++queues}`;
  await q.createQueue(name);
  return { q, name };
}

const stateOf = async (id: string) =>
  (await f.sql<{ state: string }>('SELECT state::text FROM $schema.jobs WHERE id = $1', [id]))[0]!.state;

/** A queue whose loop runs one job until `gate` opens; resolves once the handler runs. */
async function running() {
  const { q, name } = await setup();
  const gate = deferred();
  let started = false;
  const id = (await q.send(name, {}))!;
  await q.work(name, { pollingIntervalSeconds: 0.2 }, async () => {
    started = true;
    await gate.promise;
    return 'done';
  });
  await until(() => started, 'the handler runs');
  return { q, name, gate, id };
}

/** A queue whose loop runs one job whose handler waits for its signal (or `gate`), with shutdownTimeoutMs 30 s. */
async function runningUntilAborted() {
  const { q, name } = await setup();
  const id = (await q.send(name, {}))!;
  let aborted = false;
  let started = false;
  await q.work(name, { pollingIntervalSeconds: 0.2 }, async (job) => {
    started = true;
    await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
    aborted = true;
    // a handler that goes on after the abort: its job is handed back, not completed
    await new Promise(() => undefined);
  });
  await until(() => started, 'the handler runs');
  const retryCount = async () => (await f.sql<{ n: number }>('SELECT retry_count AS n FROM $schema.jobs WHERE id = $1', [id]))[0]!.n;
  return { q, name, id, wasAborted: () => aborted, retryCount };
}

describe('stopping without waiting (graceful: false)', () => {
  it('offWork(name, { graceful: false }) aborts the running handler at once and hands its job back, no attempt counted', async () => {
    const { q, name, id, wasAborted, retryCount } = await runningUntilAborted();
    const t0 = Date.now();
    await q.offWork(name, { graceful: false });
    // well within shutdownTimeoutMs (30 s): the signal was aborted at once, and the job handed back after a moment
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(wasAborted()).toBe(true);
    expect(await stateOf(id)).toBe('created');
    expect(await retryCount()).toBe(0);
    expect(q.workerCount).toBe(0);
  });

  it.each(['close', 'stop'] as const)('%s({ graceful: false }) does the same for every loop', async (call) => {
    const { q, id, wasAborted, retryCount } = await runningUntilAborted();
    const t0 = Date.now();
    await q[call]({ graceful: false });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(wasAborted()).toBe(true);
    expect(await stateOf(id)).toBe('created');
    expect(await retryCount()).toBe(0);
  });

  it("refuses pg-boss's timeout, and a graceful that is no boolean, naming them; close() closes all the same", async () => {
    const { q, name } = await setup();
    await expect(q.offWork(name, { graceful: 'no' } as never)).rejects.toMatchObject({ field: 'options.graceful' });
    const timeout = await q.close({ timeout: 5 } as never).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(InvalidOptionError);
    expect((timeout as InvalidOptionError).field).toBe('options.timeout');
    expect((timeout as Error).message).toContain('shutdownTimeoutMs');
    // the shutdown path closes whatever it is given: the engine is closed, and says so
    await expect(q.send(name, {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    const other = (await setup()).q;
    await expect(other.stop({ graceful: 1 } as never)).rejects.toMatchObject({ field: 'options.graceful' });
    await expect(other.send(name, {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
  });

  it("closes when bound to a signal handler or a test hook, and takes pg-boss's wait: true and close: true", async () => {
    const { q, name } = await setup();
    // process.on('SIGTERM', q.close.bind(q)) calls close('SIGTERM'); afterAll(q.close.bind(q)) needs no done callback
    expect(q.close.length).toBe(0);
    expect(q.stop.length).toBe(0);
    await (q.close as (signal: string) => Promise<void>)('SIGTERM');
    await expect(q.send(name, {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    const other = (await setup()).q;
    await other.stop({ wait: true, close: true } as never);
    await expect(other.send(name, {})).rejects.toMatchObject({ code: 'QUEUE_CLOSED' });
    const third = (await setup()).q;
    await expect(third.close({ wait: false } as never)).rejects.toMatchObject({ field: 'options.wait' });
  });
});

describe('offWork options', () => {
  it('wait: false returns while a handler runs; the loop claims nothing more and its job completes once the handler returns', async () => {
    const { q, name, gate, id } = await running();
    await q.offWork(name, { wait: false });
    // returned with the handler still running: the loop is listed until it drains, and claims nothing more
    expect(q.activeJobCount).toBe(1);
    const later = (await q.send(name, {}))!;
    gate.resolve();
    await until(async () => (await stateOf(id)) === 'completed', 'the running job completed');
    await until(() => q.workerCount === 0, 'the loop drained');
    expect(await stateOf(later)).toBe('created');
  });

  it('wait: true (the default) returns once the running handler is done', async () => {
    const { q, name, gate, id } = await running();
    let returned = false;
    const stopping = q.offWork(name, { wait: true }).then(() => (returned = true));
    await q.getWorkers(); // a round trip to the database: offWork would have returned by then, were it not waiting
    expect(returned).toBe(false);
    gate.resolve();
    await stopping;
    expect(q.workerCount).toBe(0);
    expect(await stateOf(id)).toBe('completed');
  });

  it('id stops that loop of the queue only; an id of another queue stops nothing', async () => {
    const { q, name } = await setup();
    const other = `${name}.other`;
    await q.createQueue(other);
    const a = await q.work(name, { pollingIntervalSeconds: 60 }, () => undefined);
    const b = await q.work(name, { pollingIntervalSeconds: 60 }, () => undefined);
    const c = await q.work(other, { pollingIntervalSeconds: 60 }, () => undefined);
    await q.offWork(name, { id: c });
    expect(q.workerCount).toBe(3);
    await q.offWork(name, { id: a });
    const left = (await q.getWorkers()).flatMap((w) => w.loops).map((l) => l.id);
    expect(q.workerCount).toBe(2);
    await until(
      async () => {
        const ids = (await q.getWorkers()).flatMap((w) => w.loops).map((l) => l.id);
        return !ids.includes(a) && ids.includes(b) && ids.includes(c);
      },
      `the registry lists ${b} and ${c}, not ${a} (it listed ${left.join(', ')})`,
    );
  });

  it('a held loop (stopWorking) is forgotten by its queue and id', async () => {
    const { q, name } = await setup();
    const a = await q.work(name, { pollingIntervalSeconds: 60 }, () => undefined);
    const b = await q.work(name, { pollingIntervalSeconds: 60 }, () => undefined);
    await q.stopWorking(name);
    await q.offWork(name, { id: a, wait: false });
    await q.startWorking(name);
    expect(q.workerCount).toBe(1);
    // the loop left is b's, restarted with a new run id: the queue and b's first id still stop it
    await q.offWork(name, { id: b });
    expect(q.workerCount).toBe(0);
  });

  it('bad input: a typed error naming the field, and no loop stopped', async () => {
    const { q, name } = await setup();
    await q.work(name, { pollingIntervalSeconds: 60 }, () => undefined);
    const cases: [unknown, unknown, string][] = [
      [name, { wait: 'no' }, 'options.wait'],
      [name, { id: '' }, 'options.id'],
      [name, { id: 5 }, 'options.id'],
      [name, { id: null }, 'options.id'],
      [name, { idd: 'x' }, 'options.idd'],
      [name, 'x', 'options'],
      ['not a queue name!', { id: 'x' }, 'name'],
      ['', undefined, 'nameOrId'],
      [undefined, undefined, 'nameOrId'],
    ];
    for (const [nameOrId, options, field] of cases)
      await expect(q.offWork(nameOrId as string, options as never)).rejects.toMatchObject({ constructor: InvalidOptionError, field });
    expect(q.workerCount).toBe(1);
  });
});
