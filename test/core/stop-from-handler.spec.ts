// A handler that stops its own loop (offWork, stopWorking, stopWorkers) must not wait for itself: the call returns
// without waiting for that loop's drain, the loop claims nothing more, its handlers (the caller's among them) finish
// with their results, and nothing waits for the shutdown timeout (30 s here; every wait below gives up after 10 s).
// A call from a handler waits for no drain at all (the drain of another loop may wait for a handler that waits for
// this one), and close() waits for every handler, one that awaits a stop call included.
import type { PgQueue } from '../../lib/core/pg-queue.js';
import type { BatchJob, Job } from '../../lib/core/types.js';
import { deferred, stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('stopself');
const SHUTDOWN_MS = 30_000;
const PROMPTLY_MS = 10_000;
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

let name = 's';
let queues = 0;
let q: PgQueue;
beforeEach(async () => {
  name = `s${++queues}`;
  q = f.create({ supervise: false, shutdownTimeoutMs: SHUTDOWN_MS });
  await q.createQueue(name, { retryLimit: 0 });
});

interface Row {
  role: string;
  state: string;
  claims: number;
  output: unknown;
}

async function jobs(): Promise<Row[]> {
  return f.sql<Row>(
    `SELECT data->>'role' AS role, state::text, claim_count AS claims, output FROM $schema.jobs WHERE queue = $1 ORDER BY id`,
    [name],
  );
}

/** Jobs that must never be claimed: sent at a lower priority than the ones the test runs, so claimed after them. */
async function sendLater(): Promise<void> {
  await q.insert(
    name,
    [1, 2, 3].map(() => ({ data: { role: 'later' }, priority: 0 })),
  );
}

async function completed(roles: string[]): Promise<void> {
  await until(
    async () => (await jobs()).filter((j) => roles.includes(j.role) && j.state === 'completed').length === roles.length,
    `${roles.join(', ')} completed`,
    PROMPTLY_MS,
  );
}

/** A loop of queue `queue` whose one job runs until `gate` opens; resolves once it runs. */
async function gatedLoop(queue: string, gate: Promise<void>): Promise<void> {
  let running = false;
  await q.send(queue, { role: 'gated' });
  await q.work(queue, { pollingIntervalSeconds: 0.2 }, async () => {
    running = true;
    await gate;
    return 'gated done';
  });
  await until(() => running, 'the gated handler runs', PROMPTLY_MS, 5);
}

describe('a stop call from inside a handler of the loop it stops', () => {
  it('offWork(queue): returns without waiting for its loop; both in-flight jobs complete, no job is claimed after', async () => {
    const order: string[] = [];
    const otherMayEnd = deferred();
    let elapsedMs = -1;
    await q.insert(name, [
      { data: { role: 'stopper' }, priority: 10 },
      { data: { role: 'other' }, priority: 10 },
    ]);
    await sendLater();
    await q.work(name, { concurrency: 2, pollingIntervalSeconds: 0.2 }, async (job: Job<{ role: string }>) => {
      if (job.data.role === 'other') {
        order.push('other started');
        await otherMayEnd.promise;
        order.push('other ended');
        return 'other done';
      }
      await until(() => order.includes('other started'), 'the other job runs', PROMPTLY_MS, 5);
      const started = Date.now();
      order.push('offWork called');
      await q.offWork(name);
      order.push('offWork resolved');
      elapsedMs = Date.now() - started;
      return 'stopper done';
    });
    await until(() => order.includes('offWork called'), 'the handler called offWork', PROMPTLY_MS, 5);
    await until(() => order.includes('offWork resolved'), 'offWork returned while the other job runs', PROMPTLY_MS, 5);
    // the loop is listed until its drain is done: the other handler still runs
    expect(q.workerCount).toBe(1);
    otherMayEnd.resolve();
    await completed(['stopper', 'other']);
    expect(order).toEqual(['other started', 'offWork called', 'offWork resolved', 'other ended']);
    expect(elapsedMs).toBeGreaterThanOrEqual(0);
    expect(elapsedMs).toBeLessThan(PROMPTLY_MS);
    const rows = await jobs();
    expect(rows.find((r) => r.role === 'stopper')).toMatchObject({ state: 'completed', claims: 1, output: 'stopper done' });
    expect(rows.find((r) => r.role === 'other')).toMatchObject({ state: 'completed', claims: 1, output: 'other done' });
    expect(rows.filter((r) => r.role === 'later').map((r) => [r.state, r.claims])).toEqual([
      ['created', 0],
      ['created', 0],
      ['created', 0],
    ]);
    await until(() => q.workerCount === 0 && q.activeJobCount === 0, 'the loop drained', PROMPTLY_MS);
  });

  it('offWork(own loop id) with no other handler running returns at once', async () => {
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await sendLater();
    let loopId = '';
    let resolvedIn = -1;
    loopId = await q.work(name, { pollingIntervalSeconds: 0.2 }, async () => {
      const started = Date.now();
      await q.offWork(loopId);
      resolvedIn = Date.now() - started;
      return 'stopped myself';
    });
    await completed(['stopper']);
    expect(resolvedIn).toBeGreaterThanOrEqual(0);
    expect(resolvedIn).toBeLessThan(PROMPTLY_MS);
    expect((await jobs()).find((r) => r.role === 'stopper')!.output).toBe('stopped myself');
    expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: 1, created: 3 });
  });

  it('stopWorking(queue) holds the loop; its job completes, and startWorking() runs the rest', async () => {
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await sendLater();
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async (job: Job<{ role: string }>) => {
      if (job.data.role === 'stopper') await q.stopWorking(name);
      return job.data.role;
    });
    await completed(['stopper']);
    expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: 1, created: 3 });
    await q.startWorking(name);
    await completed(['stopper', 'later', 'later', 'later']);
  });

  it('stopWorking(queue) then startWorking(queue) from the same handler: the loop starts again at once', async () => {
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await sendLater();
    let restarts = 0;
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async (job: Job<{ role: string }>) => {
      if (job.data.role === 'stopper') {
        await q.stopWorking(name);
        await q.startWorking(name);
        restarts++;
      }
      return job.data.role;
    });
    await completed(['stopper', 'later', 'later', 'later']);
    expect(restarts).toBe(1);
    expect((await jobs()).map((r) => r.claims)).toEqual([1, 1, 1, 1]);
  });

  it('stopWorkers(): its job completes, promptly', async () => {
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await sendLater();
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async () => {
      await q.stopWorkers();
      return 'all stopped';
    });
    await completed(['stopper']);
    expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: 1, created: 3 });
    await until(() => q.workerCount === 0, 'the loop drained', PROMPTLY_MS);
  });

  it('a batch handler: every job of its batch completes', async () => {
    await q.insert(name, [
      { data: { role: 'stopper' }, priority: 10 },
      { data: { role: 'stopper' }, priority: 10 },
    ]);
    await sendLater();
    await q.work(name, { batch: true, batchSize: 2, pollingIntervalSeconds: 0.2 }, async (batch: BatchJob[]) => {
      await q.offWork(name);
      return `batch of ${batch.length}`;
    });
    await completed(['stopper', 'stopper']);
    expect((await jobs()).filter((r) => r.role === 'stopper').map((r) => r.output)).toEqual(['batch of 2', 'batch of 2']);
    expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: 2, created: 3 });
  });

  it('a stop from outside already waiting for the handler: the handler calls offWork, returns, and its job completes', async () => {
    const handlerMayStop = deferred();
    let running = false;
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async () => {
      running = true;
      await handlerMayStop.promise;
      await q.offWork(name);
      return 'stopped while stopped';
    });
    await until(() => running, 'the handler runs', PROMPTLY_MS, 5);
    const outside = q.stopWorking(name);
    handlerMayStop.resolve();
    await outside;
    await completed(['stopper']);
    expect((await jobs())[0]).toMatchObject({ state: 'completed', claims: 1, output: 'stopped while stopped' });
  });
});

describe('a stop call from a handler of one loop that stops another', () => {
  let other = '';
  beforeEach(async () => {
    other = `${name}o`;
    await q.createQueue(other, { retryLimit: 0 });
  });

  it('waits for no drain: two stop calls at once from one handler return while the other loop still drains', async () => {
    const gate = deferred();
    const order: string[] = [];
    await gatedLoop(other, gate.promise);
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await sendLater();
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async () => {
      order.push('stop calls made');
      await Promise.all([q.offWork(name), q.stopWorking(other)]);
      order.push('stop calls returned');
      return 'both stopped';
    });
    await completed(['stopper']);
    expect(order).toEqual(['stop calls made', 'stop calls returned']);
    // the other loop drains in the background: its handler still runs, and finishes with its result
    await until(() => q.activeJobCount === 1, 'the gated handler is the one left running', PROMPTLY_MS, 5);
    gate.resolve();
    await until(() => q.workerCount === 0, 'both loops drained', PROMPTLY_MS);
    const [gated] = await f.sql<{ state: string; output: unknown }>(`SELECT state::text, output FROM $schema.jobs WHERE queue = $1`, [
      other,
    ]);
    expect(gated).toEqual({ state: 'completed', output: 'gated done' });
    expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: 1, created: 3 });
  });

  it('two handlers of two loops stopping each other both complete promptly', async () => {
    const bothIn = deferred();
    let arrived = 0;
    const handler = (target: () => string) => async (job: Job<{ role: string }>) => {
      if (++arrived === 2) bothIn.resolve();
      await bothIn.promise;
      await q.stopWorking(target());
      return `${job.data.role} stopped ${target()}`;
    };
    await q.send(name, { role: 'a' });
    await q.send(other, { role: 'b' });
    await q.work(
      name,
      { pollingIntervalSeconds: 0.2 },
      handler(() => other),
    );
    await q.work(
      other,
      { pollingIntervalSeconds: 0.2 },
      handler(() => name),
    );
    await until(() => q.workerCount === 0, 'both loops drained', PROMPTLY_MS);
    const rows = await f.sql<{ state: string; claims: number; output: unknown }>(
      `SELECT state::text, claim_count AS claims, output FROM $schema.jobs WHERE queue = ANY($1) ORDER BY queue`,
      [[name, other]],
    );
    expect(rows).toEqual([
      { state: 'completed', claims: 1, output: `a stopped ${other}` },
      { state: 'completed', claims: 1, output: `b stopped ${name}` },
    ]);
  });

  it('startWorking from outside waits for the last run to drain, and a handler of that run is not held up by it', async () => {
    const gate = deferred();
    const returned: string[] = [];
    const order: string[] = [];
    await q.insert(name, [
      { data: { role: 'stopper' }, priority: 10 },
      { data: { role: 'other' }, priority: 10 },
    ]);
    await sendLater();
    await q.work(name, { concurrency: 2, pollingIntervalSeconds: 0.2 }, async (job: Job<{ role: string }>) => {
      if (job.data.role === 'stopper') await q.stopWorking(name);
      if (job.data.role === 'other') {
        await gate.promise;
        await q.offWork(`${name}-no-such-loop`);
        returned.push('offWork');
      }
      order.push(job.data.role);
      return job.data.role;
    });
    await completed(['stopper']);
    let started = false;
    const starting = q.startWorking(name).then(() => (started = true));
    // the last run drains until the gate opens: a few round trips later, no new loop has started
    for (let i = 0; i < 3; i++) await q.getQueue(name);
    expect(started).toBe(false);
    expect(q.workerCount).toBe(1);
    gate.resolve();
    await completed(['stopper', 'other']);
    expect(returned).toEqual(['offWork']);
    await starting;
    expect(started).toBe(true);
    await completed(['stopper', 'other', 'later', 'later', 'later']);
    expect((await jobs()).map((r) => r.claims)).toEqual([1, 1, 1, 1, 1]);
    expect(order).toEqual(['stopper', 'other', 'later', 'later', 'later']);
  });

  it('close() from outside waits for a handler that awaits a stop call: its result is written before the pool ends', async () => {
    const gate = deferred();
    const afterStop = deferred();
    let stopReturned = false;
    const errorsBefore = f.logger.lines.filter((l) => l.level === 'error').length;
    await gatedLoop(other, gate.promise);
    await q.send(name, { role: 'stopper' }, { priority: 10 });
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async () => {
      await q.offWork(other);
      stopReturned = true;
      await afterStop.promise;
      return 'finished after the other loop drained';
    });
    await until(() => q.activeJobCount === 2, 'both handlers run', PROMPTLY_MS, 5);
    let closed = false;
    const closing = q.close().then(() => (closed = true));
    gate.resolve();
    await until(() => stopReturned, 'offWork returned to the handler', PROMPTLY_MS, 5);
    // the handler still runs: close() waits for it
    expect(closed).toBe(false);
    afterStop.resolve();
    await closing;
    expect(f.logger.lines.filter((l) => l.level === 'error').slice(errorsBefore)).toEqual([]);
    expect(await jobs()).toEqual([{ role: 'stopper', state: 'completed', claims: 1, output: 'finished after the other loop drained' }]);
  });
});

describe('calls from outside racing a drain', () => {
  it('stopWorkers() while a startWorking() waits for a drain: no loop runs once it returns', async () => {
    const gate = deferred();
    await gatedLoop(name, gate.promise);
    const stopping = q.stopWorking(name);
    const starting = q.startWorking(name);
    const stoppingAll = q.stopWorkers();
    gate.resolve();
    await Promise.all([stopping, starting, stoppingAll]);
    expect(q.workerCount).toBe(0);
    await sendLater();
    // a loop started after stopWorkers would claim these at once
    for (let i = 0; i < 3; i++) await q.getQueue(name);
    expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: 1, created: 3 });
  });

  it('a loop started while stopWorkers() drains still hears NOTIFY once it returns', async () => {
    const gate = deferred();
    await gatedLoop(name, gate.promise);
    const other = `${name}n`;
    await q.createQueue(other, { retryLimit: 0 });
    const stoppingAll = q.stopWorkers();
    // polls every 60 s: only a NOTIFY makes it claim a job sent later within the wait below
    await q.work(other, { pollingIntervalSeconds: 60 }, async () => 'heard');
    gate.resolve();
    await stoppingAll;
    expect(q.workerCount).toBe(1);
    await q.send(other, { n: 1 });
    await until(async () => (await stateCounts(f.pool, f.schema, other)).completed === 1, 'the job sent after is claimed', PROMPTLY_MS);
  });

  it('startWorking() waits for every run still draining, one started from a handler meanwhile included', async () => {
    const gates = { slow: deferred(), slow2: deferred() };
    const running = new Set<string>();
    await q.send(name, { role: 'slow' }, { priority: 10 });
    await sendLater();
    await q.work(name, { pollingIntervalSeconds: 0.2 }, async (job: Job<{ role: 'slow' | 'slow2' | 'later' }>) => {
      running.add(job.data.role);
      if (job.data.role !== 'later') await gates[job.data.role].promise;
      return job.data.role;
    });
    await until(() => running.has('slow'), 'the first run works', PROMPTLY_MS, 5);
    const firstStop = q.stopWorking(name);
    // a handler of another queue starts the loop again at once, while its first run drains
    const ctl = `${name}c`;
    await q.createQueue(ctl, { retryLimit: 0 });
    await q.send(name, { role: 'slow2' }, { priority: 10 });
    await q.send(ctl, {});
    await q.work(ctl, { pollingIntervalSeconds: 0.2 }, async () => q.startWorking(name));
    await until(() => running.has('slow2'), 'the second run works', PROMPTLY_MS, 5);
    const secondStop = q.stopWorking(name);
    const starting = q.startWorking(name);
    gates.slow.resolve();
    await firstStop;
    gates.slow2.resolve();
    await Promise.all([secondStop, starting]);
    await completed(['slow', 'slow2', 'later', 'later', 'later']);
    expect((await jobs()).map((r) => r.claims)).toEqual([1, 1, 1, 1, 1]);
  });
});
