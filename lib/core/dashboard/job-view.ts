// The dashboard's job view: one job as stored, and why it is not running when it waits. The facts come from one
// READ ONLY transaction (sql/job-view.ts, and the cluster registry); waitReasons() turns them into reasons, in the
// order an operator would act on them. Every rule here mirrors a rule of the claim (sql/claim.ts, sql/limits.ts):
// a reason is given only when that rule holds the job back now.
import { loopOf, type WorkerRow } from '../passes/cluster-registry.js';
import { inTransaction } from '../runtime/db.js';
import { isJobId } from '../jobs/refs.js';
import { toJobWithMetadata, type JobRow } from '../rows.js';
import { beginDashboardRead } from '../sql/transaction.js';
import { executorFor, type SamplerSource } from './sampler.js';
import type { JobWithMetadata, LoopInfo } from '../types.js';
import { attemptsOf, type AttemptView, type StoredAttempt } from './attempts.js';
import { JOB_VIEW_LINKS } from '../sql/fragments.js';

/** What holds a waiting job back, or where it stands when nothing does. */
export type WaitReasonCode =
  | 'waiting_for_parents'
  | 'deferred'
  | 'backing_off'
  | 'paused'
  | 'key_blocked'
  | 'key_busy'
  | 'key_earlier'
  | 'concurrency_limit'
  | 'rate_limit'
  | 'group_limit'
  | 'workers_stopped'
  | 'no_worker'
  | 'ready';

export interface WaitReason {
  code: WaitReasonCode;
  /** The reason in a sentence, for people. */
  text: string;
  /** When it ends by itself (ms since the epoch, database clock), where it does. */
  until?: number;
  /** The job that holds it back, where one does. */
  jobId?: string;
}

/** The facts of sql/job-view.ts about one job, as plain values. */
export interface JobFacts {
  state: JobWithMetadata['state'];
  policy: string;
  singletonKey: string | null;
  group: { id: string; tier: string | null } | null;
  now: number;
  /** When it may start (ms; Infinity while it waits for the jobs it depends on). */
  startAfter: number;
  retryCount: number;
  blockedBy: number;
  paused: boolean;
  concurrencyLimit: number | null;
  queueRunning: number | null;
  rateLimit: { count: number; seconds: number; started: number | null; windowEnds: number } | null;
  keyRunningId: string | null;
  keyHolder: { id: string; state: string } | null;
  keyEarlierId: string | null;
  groupRunning: number | null;
  /** Ready jobs ahead of it in claim order (more than 1,000: a lower bound). */
  ahead: number | null;
}

/** The live instances' loops of one queue, and whether any instance holds the queue stopped. */
export interface QueueWorkers {
  loops: Pick<LoopInfo, 'groupConcurrency'>[];
  stoppedBy: number;
}

/** One job as the job view shows it. */
export interface JobView {
  job: JobWithMetadata;
  policy: string;
  group: { id: string; tier: string | null } | null;
  /** The statement's time (ms, database clock): the page's "now". */
  now: number;
  /** Empty unless the job waits (created or retry). */
  reasons: WaitReason[];
  /** Its attempts, oldest first (attempts.ts). */
  attempts: AttemptView[];
  /** Its flow's parents and children, and its dead-letter copies: the first JOB_VIEW_LINKS of each. */
  links: Record<JobLinkKind, { jobs: JobLink[]; more: boolean }>;
}

export type JobLinkKind = 'parent' | 'child' | 'copy';

/** A job linked to the one viewed. */
export interface JobLink {
  queue: string;
  id: string;
  state: JobWithMetadata['state'];
}

/** A time for a sentence: ISO 8601, to the second. */
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;

/** Why a waiting job does not run now (every reason that holds), else where it stands among the ready jobs. */
export function waitReasons(f: JobFacts, workers: QueueWorkers): WaitReason[] {
  if (f.state !== 'created' && f.state !== 'retry') return [];
  const out: WaitReason[] = [];
  const key = f.singletonKey === null ? 'its key (none)' : `key "${f.singletonKey}"`;
  if (f.blockedBy > 0) out.push({ code: 'waiting_for_parents', text: `It waits for ${jobs(f.blockedBy)} it depends on to complete.` });
  else if (f.startAfter > f.now) {
    out.push(
      f.state === 'retry'
        ? { code: 'backing_off', text: `Backing off after attempt ${f.retryCount} failed, until ${at(f.startAfter)}.`, until: f.startAfter }
        : { code: 'deferred', text: `Deferred until ${at(f.startAfter)}.`, until: f.startAfter },
    );
  }
  if (f.paused) out.push({ code: 'paused', text: 'Its queue is paused: resumeQueue() lets workers claim its jobs again.' });
  if (f.keyHolder?.state === 'failed')
    out.push({
      code: 'key_blocked',
      text: `${cap(key)} is blocked by job ${f.keyHolder.id}, which failed: retry or delete that job to let the key go on.`,
      jobId: f.keyHolder.id,
    });
  else if (f.keyHolder)
    out.push({
      code: 'key_busy',
      text: `Job ${f.keyHolder.id} of ${key} is ${f.keyHolder.state === 'active' ? 'running' : 'waiting to retry'}: a key's jobs run one at a time, in order.`,
      jobId: f.keyHolder.id,
    });
  else if (f.keyEarlierId !== null)
    out.push({ code: 'key_earlier', text: `Job ${f.keyEarlierId} of ${key} was sent before it and runs first.`, jobId: f.keyEarlierId });
  if (f.keyRunningId !== null)
    out.push({
      code: 'key_busy',
      text: `Job ${f.keyRunningId} of ${key} is running: the ${f.policy} policy runs one job per key at a time.`,
      jobId: f.keyRunningId,
    });
  if (f.concurrencyLimit !== null && f.queueRunning !== null && f.queueRunning >= f.concurrencyLimit)
    out.push({
      code: 'concurrency_limit',
      text: `Its queue is at its concurrency limit: ${f.queueRunning} running, limit ${f.concurrencyLimit}.`,
    });
  if (f.rateLimit && f.rateLimit.started !== null && f.rateLimit.started >= f.rateLimit.count)
    out.push({
      code: 'rate_limit',
      text: `Its queue is at its rate limit: ${jobs(f.rateLimit.started)} started in this ${f.rateLimit.seconds} s window (limit ${f.rateLimit.count}); the next window opens at ${at(f.rateLimit.windowEnds)}.`,
      until: f.rateLimit.windowEnds,
    });
  const groupLimit = groupLimitOf(f, workers);
  if (groupLimit !== null && f.group && f.groupRunning !== null && f.groupRunning >= groupLimit)
    out.push({
      code: 'group_limit',
      text: `Its group "${f.group.id}" has ${f.groupRunning} running, the most its queue's workers allow (groupConcurrency ${groupLimit}).`,
    });
  if (workers.loops.length === 0)
    out.push(
      workers.stoppedBy > 0
        ? {
            code: 'workers_stopped',
            text: 'No live worker works its queue: the instances that do hold it stopped (startWorking() resumes them).',
          }
        : { code: 'no_worker', text: 'No live worker works its queue.' },
    );
  if (out.length === 0) {
    const ahead = f.ahead ?? 0;
    out.push({
      code: 'ready',
      text:
        ahead === 0
          ? 'Ready: no ready job of its queue is ahead of it in claim order.'
          : `Ready: ${ahead > 1000 ? 'more than 1,000 ready jobs' : `${ahead} ready job${ahead === 1 ? '' : 's'}`} of its queue ${ahead === 1 ? 'is' : 'are'} ahead of it in claim order.`,
    });
  }
  return out;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The group limit that holds for the job in every live loop of its queue (the largest of theirs), or null when a
 * loop sets none for it: that loop claims the job whatever its group runs.
 */
function groupLimitOf(f: JobFacts, workers: QueueWorkers): number | null {
  if (!f.group || workers.loops.length === 0) return null;
  let most = 0;
  for (const l of workers.loops) {
    const g = l.groupConcurrency;
    const limit = g ? (f.group.tier !== null && Object.hasOwn(g.tiers, f.group.tier) ? g.tiers[f.group.tier]! : g.default) : null;
    if (limit === null) return null;
    most = Math.max(most, limit);
  }
  return most;
}

interface JobViewRow extends JobRow {
  policy: string;
  group_id: string | null;
  group_tier: string | null;
  blocked_by: number;
  now_ms: number;
  start_after_ms: number;
  paused: boolean;
  concurrency_limit: number | null;
  rate_limit_count: number | null;
  rate_limit_seconds: number | null;
  queue_running: number | null;
  window_started: number | null;
  window_ends_ms: number | null;
  key_running_id: string | null;
  key_holder: { id: string; state: string } | null;
  key_earlier_id: string | null;
  group_running: number | null;
  ahead_higher: number | null;
  ahead_equal: number | null;
  attempts: StoredAttempt[] | null;
}

/** Reads job `id` (of any queue) and why it waits; null when no job has that id (or it is no job id). */
export async function readJobView(source: SamplerSource, id: string): Promise<JobView | null> {
  if (!isJobId(id)) return null;
  return inTransaction(
    () => source.connect(),
    async (client) => {
      const exec = executorFor(source, client);
      const st = source.statements;
      const [located] = await exec.query<{ name: string }>(st.getJobQueue, [id]);
      if (!located) return null;
      const [r] = await exec.query<JobViewRow>(st.dashboardJob, [located.name, id]);
      if (!r) return null;
      const rows = await exec.query<WorkerRow>(st.dashboardWorkers, []);
      const loops = rows.flatMap((w) => w.loops.map(loopOf)).filter((l) => l.queue === r.queue);
      const stoppedBy = rows.filter((w) => w.stopped.includes(r.queue)).length;
      const group = r.group_id === null ? null : { id: r.group_id, tier: r.group_tier };
      const facts: JobFacts = {
        state: r.state,
        policy: r.policy,
        singletonKey: r.singleton_key,
        group,
        now: r.now_ms,
        startAfter: r.start_after_ms,
        retryCount: r.retry_count,
        blockedBy: r.blocked_by,
        paused: r.paused,
        concurrencyLimit: r.concurrency_limit,
        queueRunning: r.queue_running,
        rateLimit:
          r.rate_limit_count === null || r.rate_limit_seconds === null || r.window_ends_ms === null
            ? null
            : { count: r.rate_limit_count, seconds: r.rate_limit_seconds, started: r.window_started, windowEnds: r.window_ends_ms },
        keyRunningId: r.key_running_id,
        keyHolder: r.key_holder,
        keyEarlierId: r.key_earlier_id,
        groupRunning: r.group_running,
        ahead: r.ahead_higher === null || r.ahead_equal === null ? null : r.ahead_higher + r.ahead_equal,
      };
      const linked = await exec.query<JobLink & { kind: JobLinkKind }>(st.dashboardJobLinks, [r.queue, id]);
      const links = Object.fromEntries(
        (['parent', 'child', 'copy'] as const).map((kind) => {
          const of = linked
            .filter((l) => l.kind === kind)
            .map(({ queue, id, state }) => ({ queue, id, state }))
            .sort((a, b) => (a.queue === b.queue ? Number(BigInt(a.id) - BigInt(b.id)) : a.queue < b.queue ? -1 : 1));
          return [kind, { jobs: of.slice(0, JOB_VIEW_LINKS), more: of.length > JOB_VIEW_LINKS }];
        }),
      ) as JobView['links'];
      const job = toJobWithMetadata(r);
      return {
        job,
        policy: r.policy,
        group,
        now: r.now_ms,
        reasons: waitReasons(facts, { loops, stoppedBy }),
        attempts: attemptsOf(job, r.attempts),
        links,
      };
    },
    beginDashboardRead,
  );
}
