// One dashboard sample as read from the database: the statements of sql/dashboard.ts run in turn on one READ ONLY
// transaction (the sampler opens it), their rows turned into plain values. Every read is bounded (the caps below).
import { loopOf, type WorkerRow } from '../passes/cluster-registry.js';
import type { Executor } from '../runtime/db.js';
import { lastErrorOf, type JobRow } from '../rows.js';
import type { Statements } from '../sql/index.js';
import type { LoopInfo } from '../types.js';
import { HISTORY_SECONDS, type DashboardQueue, type DashboardTiles, type FeedEvent, type FeedKind } from './model.js';

/** A queue's waiting and ready jobs are counted up to this; past it, the monitor's last count is shown. */
export const QUEUE_COUNT_CAP = 1000;
/** Rows the lists hold. */
const RUNNING_SHOWN = 50;
const PROBLEMS_SHOWN = 20;
const FEED_READ = 50;
const SCHEDULES_SHOWN = 100;
/** Latest finishes the timing percentiles are read from. */
const TIMED_FINISHES = 500;
/** Most finished jobs one sample reads for the per-second counts (the first reads two minutes). */
const FINISHED_READ_MAX = 50_000;
/** Most jobs in a retry one sample looks at for the retry count. */
const RETRYING_READ_MAX = 2000;

export interface SampleRows {
  now: number;
  queues: Omit<DashboardQueue, 'loops' | 'tasks'>[];
  seconds: { at: number; completed: number; failed: number }[];
  finishedUntil: number;
  finishedCapped: boolean;
  finishedOldest: number | null;
  retried: { id: string; on: number | null }[];
  timings: Pick<DashboardTiles, 'pickupP50' | 'pickupP95' | 'runP50' | 'runP95' | 'timedJobs'>;
  running: {
    id: string;
    queue: string;
    workerId: string | null;
    attempt: number;
    startedAt: number;
    leaseUntil: number | null;
    heartbeatUntil: number | null;
  }[];
  runningCount: number;
  leases: Map<string, number>;
  problems: { id: string; queue: string; attempts: number; error: string; at: number | null }[];
  sent: FeedEvent[];
  started: FeedEvent[];
  finishes: FeedEvent[];
  /** The newest job id seen (the next sample's feed starts after it); null when there is none. */
  lastSeq: string | null;
  workers: { id: string; host: string; pid: number; version: string; loops: LoopInfo[]; stopped: string[]; heartbeatAgeSeconds: number }[];
  schedules: { name: string; key: string; cron: string; tz: string; next: number; last: number | null; lastJobId: string | null }[];
}

interface QueueRow {
  name: string;
  policy: string;
  paused: boolean;
  counted_queued: number;
  waiting: number;
  ready: number;
  running: number;
  first_due_ms: number | null;
  now_ms: number;
}

/** A stored error's message (its name when it has none), for a table cell. */
function messageOf(lastError: JobRow['last_error']): string {
  const e = lastErrorOf(lastError);
  return e ? e.message || e.name : '';
}

/** Reads one sample. `readFrom`: where the per-second counts resume (null: two minutes back); `lastSeq`: the feed's. */
export async function readSample(exec: Executor, st: Statements, readFrom: number | null, lastSeq: string): Promise<SampleRows> {
  const queueRows = await exec.query<QueueRow>(st.dashboardQueues, [QUEUE_COUNT_CAP]);
  const [clock] = queueRows.length > 0 ? queueRows : await exec.query<{ now_ms: number }>(st.dashboardNow, []);
  const now = clock!.now_ms;
  const queues = queueRows.map((q) => {
    const over = q.waiting > QUEUE_COUNT_CAP;
    return {
      name: q.name,
      policy: q.policy,
      paused: q.paused,
      // past the cap, the monitor's last count when it is larger (it may be a pass old)
      waiting: over ? Math.max(QUEUE_COUNT_CAP, q.counted_queued) : q.waiting,
      waitingOver: over,
      // counted among the waiting ones read: past the cap, a lower bound
      ready: Math.min(q.ready, QUEUE_COUNT_CAP),
      readyOver: over,
      running: q.running,
      oldestReadySeconds: q.first_due_ms !== null && q.first_due_ms <= now ? (now - q.first_due_ms) / 1000 : null,
    };
  });

  const from = readFrom ?? Math.floor(now / 1000) * 1000 - HISTORY_SECONDS * 1000;
  const finished = await exec.query<{
    second_ms: string;
    completed: number;
    failed: number;
    retried: [string, string | null][];
    capped: boolean;
    oldest_ms: number | null;
    until_ms: number;
  }>(st.dashboardFinished, [from, FINISHED_READ_MAX]);
  const retrying = await exec.query<{ id: string; on: string | null }>(st.dashboardRetrying, [RETRYING_READ_MAX]);
  const started = await exec.query<{ id: string; queue: string; started_ms: number }>(st.dashboardStarted, [
    Math.max(from, now - 10_000),
    FEED_READ,
  ]);
  const [t] = await exec.query<{
    n: number;
    wait_p50: number | null;
    wait_p95: number | null;
    run_p50: number | null;
    run_p95: number | null;
  }>(st.dashboardTimings, [TIMED_FINISHES]);
  const running = await exec.query<{
    id: string;
    queue: string;
    worker_id: string | null;
    retry_count: number;
    started_ms: number;
    lease_ms: number | null;
    heartbeat_ms: number | null;
  }>(st.dashboardRunning, [RUNNING_SHOWN]);
  const leases = await exec.query<{ worker_id: string | null; leases: number }>(st.dashboardLeases, []);
  const problems = await exec.query<{
    id: string;
    queue: string;
    retry_count: number;
    last_error: JobRow['last_error'];
    on_ms: number | null;
  }>(st.dashboardProblems, [PROBLEMS_SHOWN]);
  const sent = await exec.query<{ id: string; seq: string; queue: string; on_ms: number }>(st.dashboardSent, [lastSeq, FEED_READ]);
  const finishes = await exec.query<{ id: string; queue: string; state: string; on_ms: number; message: string | null }>(
    st.dashboardFinishes,
    [Math.max(from, now - 10_000), FEED_READ],
  );
  const workers = await exec.query<Omit<WorkerRow, 'heartbeat_on'> & { heartbeat_age: number }>(st.dashboardWorkers, []);
  const schedules = await exec.query<{
    name: string;
    key: string;
    cron: string;
    tz: string;
    next_ms: number;
    last_ms: number | null;
    last_job_id: string | null;
  }>(st.dashboardSchedules, [SCHEDULES_SHOWN]);

  const until = finished[0]?.until_ms ?? Math.floor(now / 1000) * 1000;
  return {
    now,
    queues,
    seconds: finished.map((r) => ({ at: Number(r.second_ms), completed: r.completed, failed: r.failed })),
    finishedUntil: until,
    finishedCapped: finished[0]?.capped ?? false,
    finishedOldest: finished[0]?.oldest_ms ?? null,
    retried: [
      ...finished.flatMap((r) => r.retried.map(([id, on]) => ({ id, on: on === null ? null : Date.parse(on) }))),
      ...retrying.map((r) => ({ id: r.id, on: r.on === null ? null : Date.parse(r.on) })),
    ],
    timings: {
      pickupP50: t?.wait_p50 ?? null,
      pickupP95: t?.wait_p95 ?? null,
      runP50: t?.run_p50 ?? null,
      runP95: t?.run_p95 ?? null,
      timedJobs: t?.n ?? 0,
    },
    running: running.map((r) => ({
      id: r.id,
      queue: r.queue,
      workerId: r.worker_id,
      attempt: r.retry_count + 1,
      startedAt: r.started_ms,
      leaseUntil: r.lease_ms,
      heartbeatUntil: r.heartbeat_ms,
    })),
    runningCount: queues.reduce((n, q) => n + q.running, 0),
    leases: new Map(leases.filter((l) => l.worker_id !== null).map((l) => [l.worker_id!, l.leases])),
    problems: problems.map((p) => ({
      id: p.id,
      queue: p.queue,
      attempts: p.retry_count + 1,
      error: messageOf(p.last_error),
      at: p.on_ms,
    })),
    sent: sent.map((r) => ({ kind: 'sent', id: r.id, queue: r.queue, at: r.on_ms })),
    started: started.map((r) => ({ kind: 'started', id: r.id, queue: r.queue, at: r.started_ms })),
    finishes: finishes.map((r) => ({
      kind: r.state as FeedKind,
      id: r.id,
      queue: r.queue,
      at: r.on_ms,
      ...(r.state === 'failed' && r.message ? { message: r.message } : {}),
    })),
    lastSeq: sent[0]?.seq ?? null,
    workers: workers.map((w) => ({
      id: w.id,
      host: w.host,
      pid: w.pid,
      version: w.version,
      loops: w.loops.map(loopOf),
      stopped: w.stopped,
      heartbeatAgeSeconds: w.heartbeat_age,
    })),
    schedules: schedules.map((c) => ({
      name: c.name,
      key: c.key,
      cron: c.cron,
      tz: c.tz,
      next: c.next_ms,
      last: c.last_ms,
      lastJobId: c.last_job_id,
    })),
  };
}
