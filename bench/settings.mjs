// Every setting the benchmark uses, in one place: the workload sizes and each system's options. The
// workload files read their options from here, and the report prints them, so a change here is a change
// to what RESULTS.md says was measured.

/** Workload sizes. `--jobs` overrides `jobs`; `--quick` uses `quick`. */
export const WORKLOADS = {
  /** Jobs inserted (insert), drained (drain, memory). */
  jobs: 20_000,
  /**
   * long-drain: the drain of a backlog three times as large. A 20,000-job drain lasts about a second, so a start
   * (connecting, the first claims, code not yet optimised by V8) weighs in it; a longer one shows the rate a backlog
   * is worked at once started, and how each system's claim copes as its table fills with the rows it has worked.
   * scale drains as many, for the same reason: with four processes each works a quarter of it.
   */
  longDrainJobs: 60_000,
  /** Jobs per bulk-insert call, for every system (insert, and the backlog of drain/scale/memory). */
  insertChunk: 1_000,
  /** steady: sends by the producer process, one at a time, each awaited. */
  steadySends: 2_000,
  /** idle: sends to an idle worker, and the time between them. */
  idleSends: 200,
  idleIntervalMs: 50,
  /** steady and idle: sends made (and handled) before measuring, left out of the figures. */
  warmupSends: 10,
  /** scale: worker processes on one database. */
  scaleProcesses: [1, 2, 4],
  /**
   * scale: a warm-up backlog of this many jobs per worker process, drained by them together before the clock and
   * left out of the figures. A process that has just started runs code V8 has not yet optimised, a cost paid once
   * per process; a worker that has run a while is the one a deployment scales (docs/performance.md, "pgqueue alone").
   */
  scaleWarmupJobs: 5_000,
  /** flat: finished rows put in the jobs table, and claims timed on each side. */
  flatRows: 10_000_000,
  flatClaims: 200,
  flatBatch: 10,
  /** memory: the drain's concurrency, and how often RSS is sampled. */
  memoryConcurrency: 100,
  memorySampleMs: 50,
  /** `--quick`: a smaller run for development (one repetition). */
  quick: { jobs: 2_000, longDrainJobs: 6_000, scaleWarmupJobs: 500, steadySends: 300, idleSends: 40, flatRows: 200_000, flatClaims: 50 },
  repetitions: 3,
};

/** pgqueue: the engine's options and its worker's. */
export const PGQUEUE = {
  engine: { poolSize: 10, supervise: true, useListenNotify: true },
  // batchSize like the peers' local queue / fetch size; the worker claims no more than its free slots.
  work: { concurrency: 50, batchSize: 200, pollingIntervalSeconds: 2 },
};

/** Graphile Worker: the fastest settings found for it (concurrency 50, a local queue of 200, no completion delay). */
export const GRAPHILE = {
  worker: { concurrentJobs: 50, maxPoolSize: 10, localQueue: { size: 200 }, completeJobBatchDelay: 0 },
};

/**
 * pg-boss: the fastest settings found (LISTEN/NOTIFY, batch 200, burst while batches come back full), and
 * the same without LISTEN/NOTIFY, i.e. its default 2 s polling. (Its bare defaults fetch one job per 2 s
 * poll, which cannot keep up with the steady producer at all.)
 */
export const PGBOSS = {
  fast: {
    boss: { max: 10, useListenNotify: true },
    queue: { notify: true },
    work: { batchSize: 200, burstWhenBatchFull: true },
  },
  polling: {
    boss: { max: 10 },
    queue: {},
    work: { batchSize: 200, burstWhenBatchFull: true, pollingIntervalSeconds: 2 },
  },
};

/** BullMQ, on Redis and on its PostgreSQL backend. */
export const BULLMQ = {
  worker: { concurrency: 50 },
  /** The Redis database index the bench owns: flushed before and after each run. */
  redisDb: Number(process.env.BENCH_REDIS_DB ?? 13),
  redisHost: '127.0.0.1',
  redisPort: 6379,
  /** The PostgreSQL backend's pool. */
  postgresPool: { max: 10 },
};

/** The raw-SQL loop: no library, no handler. One row per (claim batch, connections). */
export const RAW_SQL = {
  variants: [
    { batch: 100, connections: 1 },
    { batch: 100, connections: 2 },
    { batch: 200, connections: 1 },
    { batch: 200, connections: 2 },
  ],
};

/**
 * bench/cost.mjs: the systems it prices (ids of bench/harness/systems.mjs), the one every ratio divides by, and how
 * much of pg_stat_statements and pg_walinspect its report shows. Sizes: WORKLOADS.jobs, insertChunk, repetitions.
 */
export const COST = {
  systems: ['pgqueue', 'pgqueue-remove', 'graphile-worker', 'pg-boss', 'bullmq-postgres', 'raw-sql-b200-c1'],
  baseline: 'graphile-worker',
  /** Statements shown per system and phase, by total time. */
  topStatements: 6,
  /** WAL record types shown per phase, by their largest bytes per job among the systems. */
  topRecords: 10,
};

/** How long one child may run before it is killed and its cell reported as a timeout, in seconds. */
export const TIMEOUTS = {
  insert: 180,
  drain: 300,
  'long-drain': 600,
  steady: 300,
  idle: 180,
  scale: 300,
  memory: 300,
  flat: 1_800,
  cost: 480,
};
