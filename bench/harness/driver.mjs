// The workloads, written once for every system. Each workload file (bench/workloads/<system>.mjs) hands
// `runChild` an adapter factory; this file runs the workload named by --workload against it and prints
// one JSON line of results on stdout. Logs of the libraries go to stderr (or nowhere), never stdout.
//
// An adapter is what a system offers the bench:
//   setup()                 install tables, create the queue (fresh database; not timed)
//   insert(datas)           one bulk insert of these payloads (the system's own bulk API)
//   send(data)              one job, awaited
//   work(onJob, options)    start one worker whose handler calls onJob(data) first thing; returns { stop() }
//   pending()               jobs not completed yet, read from the database (or Redis)
//   completed?(inserted)    { n, how }: jobs the database (or Redis) shows completed, as completed rows or as rows
//                           deleted on completion (the cost workload checks every job with it)
//   close()                 close every pool and connection (the process must be able to exit)
//   drainer?(n)             instead of work(): connect, then return run() that drains n jobs (raw SQL)
//   flat?(options)          the flat-claim-cost workload (pgqueue)
//
// Roles: the orchestrator starts a process in the "main" role; steady and idle fork a "producer" process
// (sends over IPC), and scale forks "worker" processes.
import { fork } from 'node:child_process';
import { WORKLOADS } from '../settings.mjs';
import { openMeter } from './cost-meter.mjs';
import { machineBusy, machineTicks, median, now, parseArgs, pause, quantile, until, Waiter } from './util.mjs';

/** Runs the role and workload named on the command line with `system` = { name, open(ctx) }. */
export async function runChild(system) {
  const args = parseArgs();
  const role = args.role ?? 'main';
  if (!args.db) throw new Error('--db URL is required');
  const ctx = {
    url: args.db,
    queue: 'bench',
    role,
    args,
    jobs: int(args, 'jobs', WORKLOADS.jobs),
    chunk: int(args, 'chunk', WORKLOADS.insertChunk),
    deadlineMs: int(args, 'deadline-ms', 240_000),
  };
  try {
    if (role === 'producer') await producer(system, ctx);
    else if (role === 'worker') await scaleWorker(system, ctx);
    else {
      const run = WORKLOADS_BY_NAME[args.workload];
      if (!run) throw new Error(`unknown workload "${args.workload}"`);
      const result = await run(system, ctx);
      process.stdout.write(`${JSON.stringify({ ok: true, system: system.name, workload: args.workload, ...result })}\n`);
    }
    process.exit(0);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    if (role === 'main') process.stdout.write(`${JSON.stringify({ ok: false, system: system.name, workload: args.workload, error })}\n`);
    console.error(`[${system.name} ${role}] ${err instanceof Error ? err.stack : error}`);
    process.exit(1);
  }
}

function int(args, name, fallback) {
  if (args[name] === undefined) return fallback;
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got ${args[name]}`);
  return n;
}

const WORKLOADS_BY_NAME = {
  insert,
  drain: (system, ctx) => drain(system, ctx, {}),
  'long-drain': (system, ctx) => drain(system, ctx, {}),
  steady: (system, ctx) => paced(system, ctx, { sends: int(ctx.args, 'sends', WORKLOADS.steadySends), intervalMs: 0 }),
  idle: (system, ctx) =>
    paced(system, ctx, {
      sends: int(ctx.args, 'sends', WORKLOADS.idleSends),
      intervalMs: int(ctx.args, 'interval-ms', WORKLOADS.idleIntervalMs),
    }),
  scale,
  memory,
  flat,
  cost,
};

/** Opens the adapter, runs `body`, and closes the adapter whatever happens. */
async function withAdapter(system, ctx, body) {
  const adapter = await system.open(ctx);
  try {
    return await body(adapter);
  } finally {
    await adapter.close();
  }
}

/** The payloads of `n` jobs, in chunks of the bulk-insert size. */
function chunks(n, size) {
  const out = [];
  for (let i = 0; i < n; i += size) out.push(Array.from({ length: Math.min(size, n - i) }, (_, k) => ({ i: i + k })));
  return out;
}

/** Inserts the backlog of a drain (not timed), then checks that it is all there. */
async function fill(adapter, ctx) {
  for (const chunk of chunks(ctx.jobs, ctx.chunk)) await adapter.insert(chunk);
  const pending = await adapter.pending();
  if (pending !== ctx.jobs) throw new Error(`expected ${ctx.jobs} queued jobs after the insert, found ${pending}`);
}

/** Waits until the database (or Redis) says every job is completed. */
const allCompleted = (adapter, ctx) =>
  until(async () => (await adapter.pending()) === 0, { timeoutMs: ctx.deadlineMs, intervalMs: 5, what: 'every job to be completed' });

/** insert: rows/s of the system's bulk insert, in chunks. */
async function insert(system, ctx) {
  return withAdapter(system, ctx, async (adapter) => {
    await adapter.setup();
    await adapter.pending(); // opens the probe connection before the clock starts
    const batches = chunks(ctx.jobs, ctx.chunk);
    const t0 = now();
    for (const batch of batches) await adapter.insert(batch);
    const ms = now() - t0;
    const pending = await adapter.pending();
    if (pending !== ctx.jobs) throw new Error(`expected ${ctx.jobs} jobs after the insert, found ${pending}`);
    return { rowsPerSec: ctx.jobs / (ms / 1000), ms, jobs: ctx.jobs };
  });
}

/**
 * drain: a backlog of n jobs, then one worker; the time from starting it until the database says all n
 * are completed. The handler calls are counted first (no polling while they run), then the database is
 * polled every 5 ms for the last completions.
 */
async function drain(system, ctx, { workOptions = {}, onStart = () => {}, onEnd = () => {} }) {
  return withAdapter(system, ctx, async (adapter) => {
    await adapter.setup();
    await fill(adapter, ctx);
    if (adapter.drainer) {
      const run = await adapter.drainer(ctx.jobs);
      const t0 = now();
      await run();
      await allCompleted(adapter, ctx);
      const ms = now() - t0;
      return { jobsPerSec: ctx.jobs / (ms / 1000), ms, jobs: ctx.jobs };
    }
    let handled = 0;
    const waiter = new Waiter();
    onStart();
    const t0 = now();
    const worker = await adapter.work(() => {
      if (++handled >= ctx.jobs) waiter.poke();
    }, workOptions);
    try {
      await waiter.wait(() => handled >= ctx.jobs, ctx.deadlineMs, `${ctx.jobs} handler calls (got ${handled})`);
      await allCompleted(adapter, ctx);
    } finally {
      onEnd();
    }
    const ms = now() - t0;
    await worker.stop();
    return { jobsPerSec: ctx.jobs / (ms / 1000), ms, jobs: ctx.jobs, handled };
  });
}

/** memory: the RSS peak of this process (the worker) while it drains at concurrency 100. */
async function memory(system, ctx) {
  const concurrency = int(ctx.args, 'concurrency', WORKLOADS.memoryConcurrency);
  const sampleMs = WORKLOADS.memorySampleMs;
  let baseline = 0;
  let peak = 0;
  let timer = null;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
  const result = await drain(system, ctx, {
    workOptions: { concurrency },
    onStart: () => {
      baseline = process.memoryUsage().rss;
      peak = baseline;
      timer = setInterval(sample, sampleMs);
    },
    onEnd: () => {
      sample();
      clearInterval(timer);
    },
  });
  const mb = (b) => b / 1024 / 1024;
  return { peakRssMb: mb(peak), baselineRssMb: mb(baseline), concurrency, jobsPerSec: result.jobsPerSec, jobs: ctx.jobs };
}

/** A process's IPC messages, taken by type; the process exiting ends every wait. */
function mailbox(emitter, ignore = new Set()) {
  const messages = [];
  const waiter = new Waiter();
  let exited = null;
  emitter.on('message', (m) => {
    if (ignore.has(m?.type)) return;
    messages.push(m);
    waiter.poke();
  });
  if (emitter !== process) {
    emitter.on('exit', (code, signal) => {
      exited = signal ?? code;
      waiter.poke();
    });
  } else {
    emitter.on('disconnect', () => {
      exited = 'parent gone';
      waiter.poke();
    });
  }
  return {
    /** The first message of `type` (or of any of the types in an array), waiting for one. */
    async take(type, timeoutMs) {
      const types = new Set([type].flat());
      await waiter.wait(
        () => exited !== null || messages.some((m) => types.has(m.type)),
        timeoutMs,
        `message "${[...types].join('" or "')}"`,
      );
      const i = messages.findIndex((m) => types.has(m.type));
      if (i < 0) throw new Error(`the other process ended (${exited}) before sending "${[...types].join('" or "')}"`);
      return messages.splice(i, 1)[0];
    },
  };
}

/** Forks this same workload file in another role. stdout is dropped (libraries may log there). */
function forkRole(role, extra = []) {
  return fork(process.argv[1], [...process.argv.slice(2), ...extra, '--role', role], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

/** Waits for a forked process to exit; kills it after `ms`. */
async function reap(child, ms = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(timer);
}

/**
 * steady and idle: a worker runs here; a producer process sends `sends` jobs one at a time (awaiting
 * each), `intervalMs` apart (0: back to back). Each job carries its sequence number; the producer
 * reports when each send() returned, the handler records when it started, and the latency is the
 * difference. Warm-up sends go first and are left out.
 */
async function paced(system, ctx, { sends, intervalMs }) {
  const warmup = WORKLOADS.warmupSends;
  let producerProcess = null;
  try {
    return await withAdapter(system, ctx, async (adapter) => {
      await adapter.setup();
      await adapter.pending();
      const started = new Float64Array(sends).fill(NaN);
      let handled = 0;
      const waiter = new Waiter();
      const worker = await adapter.work((data) => {
        const t = now();
        if (data && data.seq >= 0 && data.seq < sends) started[data.seq] = t;
        handled++;
        waiter.poke();
      });
      producerProcess = forkRole('producer', ['--sends', String(sends), '--interval-ms', String(intervalMs)]);
      const box = mailbox(producerProcess);
      await box.take('warm', ctx.deadlineMs);
      await waiter.wait(() => handled >= warmup, ctx.deadlineMs, `the ${warmup} warm-up jobs to be handled (got ${handled})`);
      producerProcess.send({ type: 'go' });
      const done = await box.take('done', ctx.deadlineMs);
      await waiter.wait(() => handled >= warmup + sends, ctx.deadlineMs, `${warmup + sends} handler calls (got ${handled})`);
      await allCompleted(adapter, ctx);
      await worker.stop();
      const latencies = [];
      for (let i = 0; i < sends; i++) {
        if (Number.isNaN(started[i])) throw new Error(`job ${i} was never handled`);
        latencies.push(started[i] - done.returned[i]);
      }
      return {
        sendsPerSec: sends / (done.elapsedMs / 1000),
        p50Ms: quantile(latencies, 0.5),
        p95Ms: quantile(latencies, 0.95),
        p99Ms: quantile(latencies, 0.99),
        maxMs: Math.max(...latencies),
        sends,
        intervalMs,
      };
    });
  } finally {
    if (producerProcess) await reap(producerProcess);
  }
}

/** The producer of steady and idle: warm-up sends, then (on "go") the measured ones. */
async function producer(system, ctx) {
  const box = mailbox(process);
  const sends = int(ctx.args, 'sends', WORKLOADS.steadySends);
  const intervalMs = int(ctx.args, 'interval-ms', 0);
  await withAdapter(system, ctx, async (adapter) => {
    for (let i = 1; i <= WORKLOADS.warmupSends; i++) await adapter.send({ seq: -i });
    process.send({ type: 'warm' });
    await box.take('go', ctx.deadlineMs);
    const returned = new Array(sends);
    const t0 = now();
    for (let i = 0; i < sends; i++) {
      // Pacing, not waiting for a condition: send i goes out at t0 + i × interval.
      if (intervalMs > 0) await pause(t0 + i * intervalMs - now());
      await adapter.send({ seq: i });
      returned[i] = now();
    }
    const elapsedMs = now() - t0;
    await new Promise((resolve) => process.send({ type: 'done', returned, elapsedMs }, resolve));
  });
  process.disconnect();
}

/**
 * scale: a backlog of n jobs drained by `--procs` worker processes on one database. They connect first, and drain
 * a warm-up backlog of `--warmup` jobs per process together (how it is shared is theirs); then the backlog is
 * inserted, the clock starts when all are told to go (each starts its worker loop again), and stops when the
 * database says every job is completed.
 */
async function scale(system, ctx) {
  const procs = int(ctx.args, 'procs', 1);
  const warmup = int(ctx.args, 'warmup', 0) * procs;
  const workers = [];
  try {
    return await withAdapter(system, ctx, async (adapter) => {
      await adapter.setup();
      const counts = new Array(procs).fill(0);
      const waiter = new Waiter();
      const boxes = [];
      for (let p = 0; p < procs; p++) {
        const child = forkRole('worker');
        child.on('message', (m) => {
          if (m?.type !== 'handled') return;
          counts[p] = m.n;
          waiter.poke();
        });
        workers.push(child);
        boxes.push(mailbox(child, new Set(['handled'])));
      }
      for (const box of boxes) await box.take('ready', ctx.deadlineMs);
      const total = () => counts.reduce((a, b) => a + b, 0);
      /**
       * Every worker works until `jobs` more handler calls are counted and the database has none left; returns when
       * that was seen, before the workers are told to rest (their stopping is not the drain's).
       */
      const drained = async (jobs) => {
        const from = total();
        for (const w of workers) w.send({ type: 'go' });
        await waiter.wait(() => total() - from >= jobs, ctx.deadlineMs, `${jobs} handler calls across ${procs} processes`);
        await allCompleted(adapter, ctx);
        const end = { at: now(), ticks: machineTicks() };
        for (const w of workers) w.send({ type: 'rest' });
        for (const box of boxes) await box.take('resting', 60_000);
        return end;
      };
      if (warmup > 0) {
        await fill(adapter, { ...ctx, jobs: warmup });
        await drained(warmup);
      }
      await fill(adapter, ctx);
      const before = [...counts];
      const [ticks0, t0] = [machineTicks(), now()];
      const end = await drained(ctx.jobs);
      const ms = end.at - t0;
      for (const w of workers) w.send({ type: 'stop' });
      for (const box of boxes) await box.take('closed', 60_000);
      // Every process on the machine counts (the database's, the workers', this one's): whether the cores were the
      // bound, and what a job cost them as processes were added.
      const coresBusy = machineBusy(ticks0, end.ticks);
      const machine = coresBusy === null ? {} : { coresBusy, cpuPerJob: (coresBusy * ms * 1000) / ctx.jobs };
      return {
        jobsPerSec: ctx.jobs / (ms / 1000),
        ms,
        procs,
        perProcess: counts.map((n, p) => n - before[p]),
        jobs: ctx.jobs,
        warmup,
        ...machine,
      };
    });
  } finally {
    await Promise.all(workers.map((w) => reap(w)));
  }
}

/**
 * A worker process of scale: connects, says ready; works on "go" until "rest" (then says it is resting), as many
 * times as told; reports its handler calls over IPC, and closes on "stop".
 */
async function scaleWorker(system, ctx) {
  const box = mailbox(process);
  await withAdapter(system, ctx, async (adapter) => {
    await adapter.pending(); // connected before the clock starts
    process.send({ type: 'ready' });
    let handled = 0;
    let reported = 0;
    const report = () => {
      if (handled === reported) return;
      reported = handled;
      process.send({ type: 'handled', n: handled });
    };
    for (;;) {
      const told = await box.take(['go', 'stop'], ctx.deadlineMs);
      if (told.type === 'stop') break;
      const worker = await adapter.work(() => {
        handled++;
      });
      // Batched reports: one message per 10 ms at most, so IPC does not compete with the work.
      const timer = setInterval(report, 10);
      await box.take('rest', ctx.deadlineMs);
      clearInterval(timer);
      await worker.stop();
      report();
      process.send({ type: 'resting' });
    }
  });
  await new Promise((resolve) => process.send({ type: 'closed' }, resolve));
  process.disconnect();
}

/** flat: the system's own flat-claim-cost measurement (pgqueue). */
async function flat(system, ctx) {
  return withAdapter(system, ctx, async (adapter) => {
    if (!adapter.flat) throw new Error(`${system.name} has no flat workload`);
    await adapter.setup();
    return adapter.flat({
      rows: int(ctx.args, 'flat-rows', WORKLOADS.flatRows),
      claims: int(ctx.args, 'flat-claims', WORKLOADS.flatClaims),
      batch: WORKLOADS.flatBatch,
      median,
    });
  });
}

/**
 * cost (bench/cost.mjs): the bulk insert of n jobs, then one worker draining them, each phase measured by the meter
 * (bench/harness/cost-meter.mjs). The drain runs as in `drain`, from starting the worker until the database says
 * every job is completed. Afterwards every job must be found completed (or deleted on completion), or the cell fails
 * instead of reporting a cost.
 */
async function cost(system, ctx) {
  const meter = await openMeter({
    url: ctx.url,
    postmasterPid: ctx.args['postmaster-pid'] ? Number(ctx.args['postmaster-pid']) : null,
    statements: ctx.args.statements === 'true',
    walinspect: ctx.args.walinspect === 'true',
  });
  try {
    return await withAdapter(system, ctx, async (adapter) => {
      if (!adapter.completed) throw new Error(`${system.name} cannot count its completed jobs`);
      await adapter.setup();
      await adapter.pending(); // opens the probe connection outside the phases
      const checkpoint = await meter.checkpoint();
      const insert = await meter.measure(async () => {
        for (const batch of chunks(ctx.jobs, ctx.chunk)) await adapter.insert(batch);
      });
      const pending = await adapter.pending();
      if (pending !== ctx.jobs) throw new Error(`expected ${ctx.jobs} jobs after the insert, found ${pending}`);
      let handled = 0;
      let worker = null;
      const run = adapter.drainer ? await adapter.drainer(ctx.jobs) : null; // connects outside the phase
      const waiter = new Waiter();
      const drain = await meter.measure(async () => {
        if (run) await run();
        else {
          worker = await adapter.work(() => {
            if (++handled >= ctx.jobs) waiter.poke();
          });
          await waiter.wait(() => handled >= ctx.jobs, ctx.deadlineMs, `${ctx.jobs} handler calls (got ${handled})`);
        }
        await allCompleted(adapter, ctx);
      });
      await worker?.stop();
      const done = await adapter.completed(ctx.jobs);
      if (done.n !== ctx.jobs) throw new Error(`${done.n} of ${ctx.jobs} jobs found ${done.how} after the drain`);
      for (const phase of [insert, drain]) phase.wal = await meter.walRecords(phase.walFrom, phase.walTo);
      return {
        jobs: ctx.jobs,
        handled: run ? null : handled,
        check: `${done.n.toLocaleString('en-US')} ${done.how}`,
        checkpoint,
        notes: meter.notes,
        statements: meter.statements,
        walinspect: meter.walinspect,
        phases: { insert, drain },
      };
    });
  } finally {
    await meter.close();
  }
}
