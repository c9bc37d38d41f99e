import { InvalidOptionError } from '../../lib/core/errors.js';
import type { Job } from '../../lib/core/types.js';
import { LazyAbort } from '../../lib/core/worker/index.js';
import { deferred, stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('worker');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

describe('worker loop', () => {
  it("a handler's return value becomes the output; a throw retries, then fails the job", async () => {
    const q = f.create();
    await q.createQueue('w.outcome', { retryLimit: 1 });
    await q.work('w.outcome', { pollingIntervalSeconds: 0.1 }, async (job: Job<{ ok: boolean }>) => {
      if (!job.data.ok) throw new Error(`attempt ${job.retryCount} broke`);
      return { doubled: 2 };
    });
    const good = (await q.send('w.outcome', { ok: true }))!;
    const bad = (await q.send('w.outcome', { ok: false }))!;
    await until(async () => (await q.getJobById('w.outcome', good))!.state === 'completed', 'good job completed');
    await until(async () => (await q.getJobById('w.outcome', bad))!.state === 'failed', 'bad job failed');
    expect((await q.getJobById('w.outcome', good))!.output).toEqual({ doubled: 2 });
    const failed = (await q.getJobById('w.outcome', bad))!;
    expect(failed.retryCount).toBe(1);
    expect((failed.output as { errors: { message: string }[] }).errors.map((e) => e.message)).toEqual([
      'attempt 0 broke',
      'attempt 1 broke',
    ]);
    await q.offWork('w.outcome');
  });

  it('a throw of a non-Error, a rejected promise, or an output that is not JSON fails the attempt and the loop goes on', async () => {
    const q = f.create();
    await q.createQueue('w.poison', { retryLimit: 0 });
    await q.work('w.poison', { pollingIntervalSeconds: 0.1 }, (job: Job<string>) => {
      if (job.data === 'string') throw 'plain string';
      if (job.data === 'reject') return Promise.reject({ code: 42 });
      if (job.data === 'bigint') return { n: 1n };
      return 'fine';
    });
    const ids = await q.insert('w.poison', [{ data: 'string' }, { data: 'reject' }, { data: 'bigint' }, { data: 'ok' }]);
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.poison')).failed === 3, 'three failed');
    await until(async () => (await q.getJobById('w.poison', ids[3]!))!.state === 'completed', 'the good one completed');
    const messages = await Promise.all(
      ids.slice(0, 3).map(async (id) => ((await q.getJobById('w.poison', id))!.output as { error: { message: string } }).error.message),
    );
    expect(messages[0]).toBe('plain string');
    expect(messages[1]).toContain('{"code":42}');
    expect(messages[2]).toContain('a BigInt at n');
    await q.offWork('w.poison');
  });

  it('never runs more handlers at once than its concurrency', async () => {
    const q = f.create();
    await q.createQueue('w.conc');
    let running = 0;
    let peak = 0;
    let done = 0;
    await q.work('w.conc', { concurrency: 3, batchSize: 2, pollingIntervalSeconds: 0.1 }, async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      await f.sql('SELECT pg_sleep(0.005)');
      running--;
      done++;
    });
    await q.insert(
      'w.conc',
      Array.from({ length: 40 }, (_, i) => ({ data: i })),
    );
    await until(() => done === 40, '40 jobs done');
    expect(peak).toBe(3);
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.conc')).completed === 40, 'all completed in the table');
    await q.offWork('w.conc');
  });

  it('a handler that throws synchronously frees its slot without letting one job more than its concurrency start', async () => {
    const q = f.create();
    await q.createQueue('w.sync-throw', { retryLimit: 0 });
    let running = 0;
    let peak = 0;
    let settled = 0;
    const gate = deferred();
    // Not async: the throw happens inside the call that starts the handler.
    await q.work('w.sync-throw', { concurrency: 2, batchSize: 6, pollingIntervalSeconds: 0.1 }, (job: Job<{ sync: boolean }>) => {
      if (job.data.sync) {
        settled++;
        throw new Error('thrown before any await');
      }
      running++;
      peak = Math.max(peak, running);
      return gate.promise.then(() => {
        running--;
        settled++;
      });
    });
    await q.insert('w.sync-throw', [{ data: { sync: true } }, ...Array.from({ length: 5 }, () => ({ data: { sync: false } }))]);
    await until(() => running >= 2, 'two handlers running');
    gate.resolve();
    await until(() => settled === 6, 'every job settled');
    expect(peak).toBe(2);
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.sync-throw')).completed === 5, 'five completed');
    await q.offWork('w.sync-throw');
  });

  it('a batch of thousands of handlers that throw synchronously fails them all, and the process goes on', async () => {
    const q = f.create();
    await q.createQueue('w.sync-throw-many', { retryLimit: 0 });
    const n = 3_000;
    let calls = 0;
    await q.work('w.sync-throw-many', { concurrency: 1, batchSize: n, pollingIntervalSeconds: 0.1 }, () => {
      calls++;
      throw new Error('thrown before any await');
    });
    await q.insert(
      'w.sync-throw-many',
      Array.from({ length: n }, () => ({})),
    );
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.sync-throw-many')).failed === n, `${n} jobs failed`, 60_000, 100);
    expect(calls).toBe(n);
    await q.offWork('w.sync-throw-many');
  });

  it('an idle worker is woken by NOTIFY, not by its polling interval', async () => {
    const q = f.create();
    await q.createQueue('w.notify');
    const seen: string[] = [];
    await q.work('w.notify', { pollingIntervalSeconds: 3600 }, (job) => void seen.push(job.id));
    const first = (await q.send('w.notify', {}))!;
    await until(() => seen.includes(first), 'first job handled');
    // The loop has claimed fewer jobs than it asked for and sleeps for an hour unless notified.
    const second = (await q.send('w.notify', {}))!;
    await until(() => seen.includes(second), 'second job handled through NOTIFY');
    await q.offWork('w.notify');
  });

  it('without LISTEN/NOTIFY, polling finds the jobs', async () => {
    const q = f.create({ useListenNotify: false });
    await q.createQueue('w.poll');
    await q.work('w.poll', { pollingIntervalSeconds: 0.05 }, () => 'polled');
    const id = (await q.send('w.poll', {}))!;
    await until(async () => (await q.getJobById('w.poll', id))!.state === 'completed', 'completed by polling');
    await q.offWork('w.poll');
  });

  it('a result from a job that was cancelled meanwhile is discarded and logged', async () => {
    const q = f.create();
    await q.createQueue('w.stale');
    const release = deferred();
    const started = deferred<string>();
    await q.work('w.stale', { pollingIntervalSeconds: 0.1 }, async (job) => {
      started.resolve(job.id);
      await release.promise;
      return 'too late';
    });
    await q.send('w.stale', {});
    const id = await started.promise;
    await q.cancel('w.stale', id);
    release.resolve();
    await until(() => f.logger.lines.some((l) => l.level === 'warn' && l.message.includes(`job ${id} `)), 'discard warning');
    expect(await q.getJobById('w.stale', id)).toMatchObject({ state: 'cancelled', output: null });
    await q.offWork('w.stale');
  });
});

describe("a job's signal", () => {
  it('read after the job was aborted, it is aborted already, with the reason', () => {
    const lazy = new LazyAbort();
    const reason = new Error('taken away');
    lazy.abort(reason);
    expect(lazy.signal.aborted).toBe(true);
    expect(lazy.signal.reason).toBe(reason);
  });

  it('read before, it is aborted later, once', () => {
    const lazy = new LazyAbort();
    const { signal } = lazy;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    lazy.abort('first');
    lazy.abort('second');
    expect(seen).toEqual(['first']);
  });
});

describe('results written together', () => {
  it('each result in a batch goes to its own job and is fenced on its own: a stale one is discarded, the others complete', async () => {
    const q = f.create();
    await q.createQueue('w.batch');
    const release = deferred();
    const started: string[] = [];
    await q.work('w.batch', { concurrency: 10, pollingIntervalSeconds: 0.1 }, async (job) => {
      started.push(job.id);
      await release.promise;
      return { ranAs: job.id };
    });
    const ids = await q.insert(
      'w.batch',
      Array.from({ length: 10 }, (_, i) => ({ data: i })),
    );
    await until(() => started.length === 10, 'ten handlers running');
    // Taken away and put back while its handler runs: that handler's result must be refused.
    const victim = ids[3]!;
    await q.cancel('w.batch', victim);
    await q.resume('w.batch', victim);
    release.resolve(); // all ten return in the same tick, so their results are written together
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.batch')).completed === 10, 'all ten completed');
    expect(q.counters.staleResults).toBe(1);
    expect(started.filter((id) => id === victim)).toHaveLength(2);
    for (const id of ids) expect((await q.getJobById('w.batch', id))!.output).toEqual({ ranAs: id });
    await q.offWork('w.batch');
  });
});

describe('claiming ahead (batchSize above concurrency)', () => {
  it('claims a whole batch but never runs more handlers at once than its concurrency', async () => {
    const q = f.create();
    await q.createQueue('w.ahead');
    let running = 0;
    let peak = 0;
    let done = 0;
    await q.work('w.ahead', { concurrency: 2, batchSize: 10, pollingIntervalSeconds: 0.1 }, async () => {
      peak = Math.max(peak, ++running);
      await f.sql('SELECT pg_sleep(0.002)');
      running--;
      done++;
    });
    await q.insert(
      'w.ahead',
      Array.from({ length: 30 }, (_, i) => ({ data: i })),
    );
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.ahead')).completed === 30, 'all completed');
    expect(done).toBe(30);
    expect(peak).toBe(2);
    await q.offWork('w.ahead');
  });

  it('jobs claimed ahead that never started go back at stop at once, no attempt counted', async () => {
    const q = f.create({ shutdownTimeoutMs: 100 });
    await q.createQueue('w.ahead.stop');
    const started: string[] = [];
    await q.work('w.ahead.stop', { concurrency: 1, batchSize: 5, pollingIntervalSeconds: 0.1 }, (job) => {
      started.push(job.id);
      return new Promise(() => undefined); // holds the only slot
    });
    await q.insert(
      'w.ahead.stop',
      Array.from({ length: 5 }, () => ({})),
    );
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.ahead.stop')).active === 5, 'all five claimed by the one worker');
    expect(started).toHaveLength(1);
    await q.stopWorkers();
    const rows = await f.sql<{ state: string; retry_count: number }>(
      `SELECT state::text, retry_count FROM $schema.jobs WHERE queue = 'w.ahead.stop'`,
    );
    expect(rows).toEqual(Array.from({ length: 5 }, () => ({ state: 'created', retry_count: 0 })));
  });

  it('holds two claims once its handlers ran dry while a claim was out, so the next claim is in flight sooner', async () => {
    const q = f.create({ shutdownTimeoutMs: 100 });
    await q.createQueue('w.ahead.dry');
    const gate = deferred();
    let firstWaveDone = 0;
    await q.work<{ i: number }>('w.ahead.dry', { concurrency: 1, batchSize: 10, pollingIntervalSeconds: 0.1 }, async (job) => {
      if (job.data.i >= 10) return new Promise(() => undefined); // the second wave holds the only slot
      await gate.promise;
      firstWaveDone++;
    });
    await q.insert(
      'w.ahead.dry',
      Array.from({ length: 40 }, (_, i) => ({ data: { i }, priority: 40 - i })),
    );
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.ahead.dry')).active === 10, 'the first claim of ten in hand');
    // The next claim waits on a lock of the table while the first ten run out: the handlers outrun it.
    const locker = await f.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${f.schema}.jobs_default IN ACCESS EXCLUSIVE MODE`);
      gate.resolve();
      await until(() => firstWaveDone === 10, 'the first ten ran');
      await until(
        async () =>
          (
            await f.sql<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE l.relation = '$schema.jobs_default'::regclass AND NOT l.granted AND a.query LIKE '%SKIP LOCKED%'`,
            )
          )[0]!.n > 0,
        'a claim waiting on the lock',
      );
      await locker.query('COMMIT');
    } finally {
      locker.release();
    }
    // One claim in hand would stop at ten; two hold twenty: one running, nineteen waiting.
    await until(async () => {
      const counts = await stateCounts(f.pool, f.schema, 'w.ahead.dry');
      return counts.active === 20 && counts.completed === 10;
    }, 'two claims of ten in hand');
    await q.stopWorkers();
    const counts = await stateCounts(f.pool, f.schema, 'w.ahead.dry');
    expect(counts.completed).toBe(10);
    expect(counts.created).toBe(30);
  });

  it('a job that waits for a slot longer than half its lease is handed back and runs later, no attempt counted', async () => {
    const q = f.create();
    await q.createQueue('w.ahead.wait', { expireInSeconds: 2 });
    const slow = deferred();
    const ran: string[] = [];
    await q.work('w.ahead.wait', { concurrency: 1, batchSize: 3, pollingIntervalSeconds: 0.1 }, async (job) => {
      ran.push(job.id);
      if (ran.length === 1) await slow.promise;
    });
    const ids = await q.insert(
      'w.ahead.wait',
      Array.from({ length: 3 }, () => ({})),
    );
    await until(() => ran.length === 1, 'the first job holds the slot');
    const handedBack = async () =>
      (
        await f.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = 'w.ahead.wait' AND state = 'created' AND claim_count = 1`,
        )
      )[0]!.n === 2;
    await until(handedBack, 'the two waiting jobs handed back after a second', 5_000);
    slow.resolve();
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.ahead.wait')).completed === 3, 'all three completed');
    const rows = await f.sql<{ id: string; retry_count: number }>(
      `SELECT id::text, retry_count FROM $schema.jobs WHERE queue = 'w.ahead.wait' ORDER BY id`,
    );
    expect(rows).toEqual(ids.map((id) => ({ id, retry_count: 0 })));
    await q.offWork('w.ahead.wait');
  });
});

describe('claiming ahead: each waiting job has its own deadline', () => {
  it('a job with a short lease waiting behind one with a long lease is handed back in time, no attempt counted', async () => {
    const q = f.create();
    await q.createQueue('w.ahead.mixed', { retryLimit: 0 });
    const hold = deferred();
    const ran: string[] = [];
    const [first] = await q.insert('w.ahead.mixed', [{ priority: 10 }]);
    const [, short] = await q.insert('w.ahead.mixed', [
      { priority: 5, expireInSeconds: 60 },
      { priority: 0, expireInSeconds: 2 },
    ]);
    await q.work('w.ahead.mixed', { concurrency: 1, batchSize: 3, pollingIntervalSeconds: 0.1 }, async (job) => {
      ran.push(job.id);
      if (job.id === first) await hold.promise;
    });
    await until(() => ran.length === 1, 'the first job holds the only slot');
    // Its wait limit is half of 2 s; the job ahead of it in the local queue may wait 30 s.
    await until(
      async () =>
        (
          await f.sql<{ state: string; claim_count: number }>(`SELECT state::text, claim_count FROM $schema.jobs WHERE id = $1`, [short])
        )[0]!.state === 'created',
      'the short-lease job handed back',
      5_000,
    );
    hold.resolve();
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.ahead.mixed')).completed === 3, 'all three completed');
    const rows = await f.sql<{ retry_count: number }>(`SELECT retry_count FROM $schema.jobs WHERE queue = 'w.ahead.mixed'`);
    expect(rows.every((r) => r.retry_count === 0)).toBe(true);
    await q.offWork('w.ahead.mixed');
  });
});

describe('a result the database cannot store', () => {
  it('fails only its own attempt: the other results written with it complete', async () => {
    const q = f.create();
    await q.createQueue('w.nul', { retryLimit: 0 });
    const release = deferred();
    let started = 0;
    await q.work('w.nul', { concurrency: 5, pollingIntervalSeconds: 0.1 }, async (job: Job<{ bad: boolean }>) => {
      started++;
      await release.promise;
      return job.data.bad ? { text: 'nul \u0000 inside' } : { text: 'fine' };
    });
    const ids = await q.insert('w.nul', [
      { data: { bad: false } },
      { data: { bad: true } },
      { data: { bad: false } },
      { data: { bad: false } },
      { data: { bad: false } },
    ]);
    await until(() => started === 5, 'five handlers running');
    release.resolve(); // the five results are written together
    await until(
      async () => {
        const c = await stateCounts(f.pool, f.schema, 'w.nul');
        return c.completed === 4 && c.failed === 1;
      },
      'four completed, the bad one failed',
      10_000,
    );
    const bad = (await q.getJobById('w.nul', ids[1]!))!;
    expect(bad.state).toBe('failed');
    expect((bad.output as { error: { message: string } }).error.message).toContain('NUL');
  });

  it('an error whose message holds a NUL character is stored, written out', async () => {
    const q = f.create();
    await q.createQueue('w.nul.error', { retryLimit: 0 });
    await q.work('w.nul.error', { pollingIntervalSeconds: 0.1 }, () => {
      throw new Error('broke \u0000 here');
    });
    const id = (await q.send('w.nul.error', {}))!;
    await until(async () => (await q.getJobById('w.nul.error', id))!.state === 'failed', 'failed with its error stored');
    expect(((await q.getJobById('w.nul.error', id))!.output as { error: { message: string } }).error.message).toBe('broke \\u0000 here');
    await q.offWork('w.nul.error');
  });
});

describe('stopping workers', () => {
  it('waits for in-flight handlers that finish within the timeout', async () => {
    const q = f.create({ shutdownTimeoutMs: 10_000 });
    await q.createQueue('w.drain');
    const gate = deferred();
    let started = 0;
    await q.work('w.drain', { concurrency: 4 }, async () => {
      started++;
      await gate.promise;
      return 'drained';
    });
    await q.insert('w.drain', [{}, {}, {}, {}]);
    await until(() => started === 4, 'four handlers started');
    const stopping = q.stopWorkers();
    gate.resolve();
    await stopping;
    expect(await stateCounts(f.pool, f.schema, 'w.drain')).toEqual({ completed: 4 });
  });

  it('past the timeout it aborts job.signal and hands the jobs back at once, with no attempt counted', async () => {
    const q = f.create({ shutdownTimeoutMs: 100 });
    await q.createQueue('w.handback');
    const signals: AbortSignal[] = [];
    await q.work('w.handback', { concurrency: 5 }, (job) => {
      signals.push(job.signal);
      return new Promise(() => undefined); // never settles on its own
    });
    await q.insert(
      'w.handback',
      Array.from({ length: 5 }, () => ({})),
    );
    await until(() => signals.length === 5, 'five handlers started');
    await q.stopWorkers();
    expect(signals.every((s) => s.aborted)).toBe(true);
    const rows = await f.sql<{ state: string; retry_count: number; worker_id: string | null }>(
      `SELECT state::text, retry_count, worker_id FROM $schema.jobs WHERE queue = 'w.handback'`,
    );
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.state === 'created' && r.retry_count === 0 && r.worker_id === null)).toBe(true);

    const other = f.create();
    await other.work('w.handback', { concurrency: 5, pollingIntervalSeconds: 0.1 }, () => 'finished elsewhere');
    await until(async () => (await stateCounts(f.pool, f.schema, 'w.handback')).completed === 5, 'another instance finished them');
    await other.offWork('w.handback');
  });

  it('offWork stops claiming for that queue only', async () => {
    const q = f.create();
    await q.createQueue('w.off.a');
    await q.createQueue('w.off.b');
    await q.work('w.off.a', { pollingIntervalSeconds: 0.05 }, () => 'a');
    await q.work('w.off.b', { pollingIntervalSeconds: 0.05 }, () => 'b');
    expect(q.workerCount).toBe(2);
    await q.offWork('w.off.a');
    expect(q.workerCount).toBe(1);
    const b = (await q.send('w.off.b', {}))!;
    await until(async () => (await q.getJobById('w.off.b', b))!.state === 'completed', 'b still worked');
    await q.offWork('w.off.b');
  });

  it('work() on an instance with workers: false is refused', async () => {
    const q = f.create({ workers: false });
    await q.createQueue('w.noworkers');
    await expect(q.work('w.noworkers', {}, () => 1)).rejects.toThrow('workers: false');
  });
});

describe('heartbeats', () => {
  it('a running job with heartbeatSeconds is kept alive by the worker, so the reaper leaves it', async () => {
    const q = f.create();
    const reaper = f.create({ supervise: false });
    await q.createQueue('w.hb', { heartbeatSeconds: 1 });
    const gate = deferred();
    const started = deferred<string>();
    await q.work('w.hb', {}, async (job) => {
      started.resolve(job.id);
      await gate.promise;
      return 'alive';
    });
    await q.send('w.hb', {});
    const id = await started.promise;
    const beatAt = async () =>
      (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [id]))[0]!.t.getTime();
    const first = await beatAt();
    await until(async () => (await beatAt()) > first, 'heartbeat extended by the worker');
    await until(async () => (await beatAt()) > first + 300, 'heartbeat extended again');
    expect((await reaper.maintain({ force: true })).reaped).toBe(0);
    gate.resolve();
    await until(async () => (await q.getJobById('w.hb', id))?.state === 'completed', 'completed on its first attempt');
    expect((await q.getJobById('w.hb', id))!.retryCount).toBe(0);
    await q.offWork('w.hb');
  });

  it('when the job is taken away, the next heartbeat aborts the handler’s signal', async () => {
    const q = f.create();
    await q.createQueue('w.hb.lost', { heartbeatSeconds: 1 });
    const aborted = deferred<unknown>();
    const started = deferred<string>();
    await q.work('w.hb.lost', {}, (job) => {
      started.resolve(job.id);
      return new Promise((_, reject) =>
        job.signal.addEventListener('abort', () => {
          aborted.resolve(job.signal.reason);
          reject(job.signal.reason);
        }),
      );
    });
    await q.send('w.hb.lost', {});
    const id = await started.promise;
    await q.cancel('w.hb.lost', id);
    expect(String(await aborted.promise)).toContain('no longer held');
    await until(() => f.logger.lines.some((l) => l.message.includes(`job ${id} `)), 'discarded result logged');
    expect((await q.getJobById('w.hb.lost', id))!.state).toBe('cancelled');
    await q.offWork('w.hb.lost');
  });
});

describe('fencing inside one process', () => {
  it('a job cancelled, resumed and re-claimed by the same loop cannot be completed by its stale handler', async () => {
    const q = f.create();
    await q.createQueue('w.reclaim');
    const gates: { promise: Promise<void>; resolve: () => void }[] = [];
    const outputs: string[] = [];
    await q.work('w.reclaim', { concurrency: 2, pollingIntervalSeconds: 0.05 }, async () => {
      const gate = deferred();
      gates.push(gate);
      const claim = gates.length;
      await gate.promise;
      outputs.push(`claim ${claim}`);
      return `claim ${claim}`;
    });
    const id = (await q.send('w.reclaim', {}))!;
    await until(() => gates.length === 1, 'first claim running');
    await q.cancel('w.reclaim', id);
    await q.resume('w.reclaim', id);
    await until(() => gates.length === 2, 'the same loop claimed the job again');
    expect(q.activeJobCount).toBe(2);
    gates[0]!.resolve();
    await until(() => outputs.includes('claim 1'), 'stale handler returned');
    await until(() => f.logger.lines.some((l) => l.message.includes(`job ${id} of queue "w.reclaim" (claim 1)`)), 'stale result discarded');
    expect((await q.getJobById('w.reclaim', id))!.state).toBe('active');
    gates[1]!.resolve();
    await until(async () => (await q.getJobById('w.reclaim', id))!.state === 'completed', 'completed by the current attempt');
    expect(await q.getJobById('w.reclaim', id)).toMatchObject({ output: 'claim 2', claimCount: 2 });
    await q.offWork('w.reclaim');
  });

  it('a handler whose lease runs out has its signal aborted', async () => {
    const q = f.create();
    await q.createQueue('w.expire', { expireInSeconds: 1 });
    const reason = deferred<unknown>();
    await q.work(
      'w.expire',
      {},
      (job) =>
        new Promise((_, reject) =>
          job.signal.addEventListener('abort', () => {
            reason.resolve(job.signal.reason);
            reject(job.signal.reason);
          }),
        ),
    );
    await q.send('w.expire', {});
    expect(String(await reason.promise)).toContain('the handler did not finish within the lease of 1 seconds');
    await q.offWork('w.expire');
  });

  it('a job with a shorter heartbeat than the armed tick brings the tick forward', async () => {
    const q = f.create();
    await q.createQueue('w.hb.mixed');
    const gate = deferred();
    const started: string[] = [];
    await q.work('w.hb.mixed', { concurrency: 2 }, async (job) => {
      started.push(job.id);
      await gate.promise;
    });
    await q.send('w.hb.mixed', { slow: true }, { heartbeatSeconds: 600 });
    await until(() => started.length === 1, 'long-heartbeat job running');
    const fast = (await q.send('w.hb.mixed', {}, { heartbeatSeconds: 1 }))!;
    await until(() => started.includes(fast), 'short-heartbeat job running');
    const beatAt = async () =>
      (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [fast]))[0]!.t.getTime();
    const first = await beatAt();
    await until(async () => (await beatAt()) > first, 'short heartbeat kept by an earlier tick', 5_000);
    gate.resolve();
    await q.offWork('w.hb.mixed');
  });
});

describe('heartbeatRefreshSeconds', () => {
  it("refreshes a running job's heartbeat at the pace asked for, not a third of its heartbeatSeconds", async () => {
    const q = f.create();
    await q.createQueue('w.hb.refresh', { heartbeatSeconds: 60 });
    const gate = deferred();
    let running: string | null = null;
    await q.work('w.hb.refresh', { heartbeatRefreshSeconds: 0.3 }, async (job) => {
      running = job.id;
      await gate.promise;
    });
    const id = (await q.send('w.hb.refresh', {}))!;
    await until(() => running === id, 'the job running');
    const beatAt = async () =>
      (await f.sql<{ t: Date }>('SELECT heartbeat_until AS t FROM $schema.jobs WHERE id = $1', [id]))[0]!.t.getTime();
    const first = await beatAt();
    // by default the next refresh would come 20 s after the claim
    await until(async () => (await beatAt()) > first, 'heartbeat refreshed', 3_000);
    const second = await beatAt();
    await until(async () => (await beatAt()) > second, 'heartbeat refreshed again', 3_000);
    gate.resolve();
    await q.offWork('w.hb.refresh');
    expect(await q.getJobById('w.hb.refresh', id)).toMatchObject({ state: 'completed' });
  });

  it('refuses a refresh outside 0.2 to 86400 seconds, naming the option', async () => {
    const q = f.create();
    await q.createQueue('w.hb.bad');
    for (const value of [0.1, 0, -1, 86_401, Number.NaN, '5']) {
      const err = await q.work('w.hb.bad', { heartbeatRefreshSeconds: value as number }, () => undefined).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err.message).toContain('options.heartbeatRefreshSeconds');
      expect(err.message).toContain('from 0.2 to 86400');
    }
  });
});

describe('shutdown outcomes', () => {
  it('after the abort, a handler that returns completes its job and one that throws hands it back, no attempt counted', async () => {
    const q = f.create({ shutdownTimeoutMs: 50 });
    await q.createQueue('w.abort');
    let started = 0;
    await q.work('w.abort', { concurrency: 2 }, (job: Job<{ mode: string }>) => {
      started++;
      return new Promise((resolve, reject) =>
        job.signal.addEventListener('abort', () => (job.data.mode === 'return' ? resolve('partial result') : reject(job.signal.reason))),
      );
    });
    const [returns, throws] = await q.insert('w.abort', [{ data: { mode: 'return' } }, { data: { mode: 'throw' } }]);
    await until(() => started === 2, 'both handlers running');
    await q.stopWorkers();
    expect(await q.getJobById('w.abort', returns!)).toMatchObject({ state: 'completed', output: 'partial result' });
    expect(await q.getJobById('w.abort', throws!)).toMatchObject({ state: 'created', retryCount: 0, output: null });
  });
});

describe('a handler that never settles', () => {
  it('is cut off when its lease runs out: the attempt fails with LeaseExpiredError and the loop goes on', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('w.hang', { expireInSeconds: 1, retryLimit: 1 });
    const aborted: string[] = [];
    await q.work('w.hang', { concurrency: 1, pollingIntervalSeconds: 0.05 }, (job: Job<{ hang: boolean }>) => {
      if (!job.data.hang) return 'ran after the hung one';
      job.signal.addEventListener('abort', () => aborted.push(job.id));
      return new Promise(() => undefined); // ignores the signal, never settles
    });
    const hung = (await q.send('w.hang', { hang: true }, { priority: 1 }))!;
    const next = (await q.send('w.hang', { hang: false }))!;
    await until(async () => (await q.getJobById('w.hang', hung))!.state === 'failed', 'hung job failed after its retry', 10_000);
    await until(async () => (await q.getJobById('w.hang', next))!.state === 'completed', 'the next job ran in the freed slot');
    const job = (await q.getJobById('w.hang', hung))!;
    expect(job.retryCount).toBe(1);
    expect((job.output as { errors: { name: string; message: string }[] }).errors).toEqual([
      expect.objectContaining({ name: 'LeaseExpiredError', message: 'the handler did not finish within the lease of 1 seconds' }),
      expect.objectContaining({ name: 'LeaseExpiredError' }),
    ]);
    expect(aborted).toEqual([hung, hung]);
    await q.offWork('w.hang');
  });
});

describe('wake-ups', () => {
  it('a failed attempt retried at once runs again without waiting for the polling interval', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('w.retry.notify', { retryLimit: 1 });
    let attempts = 0;
    await q.work('w.retry.notify', { pollingIntervalSeconds: 3600 }, () => {
      attempts++;
      if (attempts === 1) throw new Error('first attempt fails');
      return 'second attempt';
    });
    const id = (await q.send('w.retry.notify', {}))!;
    await until(async () => (await q.getJobById('w.retry.notify', id))!.state === 'completed', 'retried and completed without polling');
    expect(attempts).toBe(2);
    await q.offWork('w.retry.notify');
  });
});
