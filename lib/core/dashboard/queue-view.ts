// The dashboard's page of one queue: its settings and counts (the queue's row, as getQueue reads it), a page of its jobs
// in one state, newest first (findJobs' statements: keyset pages, bounded by rows and bytes), and its stats over the
// last hour or day (getQueueStats' series, downsampled, with the wait and run percentiles). All is read in one READ
// ONLY transaction whose statements are each cancelled past DASHBOARD_PAGE_STATEMENT_TIMEOUT_MS (one snapshot for the
// whole page); the query string is checked here, each bad value named.
import { InvalidOptionError } from '../errors.js';
import { isJobId } from '../jobs/refs.js';
import { JobFinder, JOB_STATES } from '../jobs/finder.js';
import { runtimeOf, type PgQueue } from '../pg-queue.js';
import { toQueueResult, type QueueRow } from '../rows.js';
import { inTransaction } from '../runtime/db.js';
import { beginDashboardPageRead } from '../sql/transaction.js';
import { QueueStatsReader } from '../stats/queue-stats.js';
import { queueName } from '../config/validate.js';
import type { JobState, JobWithMetadata, QueueResult, QueueStats } from '../types.js';
import { executorFor, type SamplerSource } from './sampler.js';

/** Jobs in one page of the browser. */
export const BROWSER_PAGE_ROWS = 50;
/** Bytes of JSON (data, output, errors) after which a page of the browser ends (findJobs' maxBytes). */
export const BROWSER_PAGE_BYTES = 512 * 1024;
/** Points of a chart: the series is downsampled to about this many buckets. */
export const CHART_POINTS = 60;

/** The spans a queue's charts cover, in seconds. */
export const RANGES = { hour: 3600, day: 86_400 } as const;
export type ChartRange = keyof typeof RANGES;

/** What the query string of `{path}/queues/:name` asks. */
export interface QueuePageQuery {
  /** Jobs in this state only; null: any state. */
  state: JobState | null;
  /** The last id of the page before (its `next`); null: from the newest. */
  after: string | null;
  range: ChartRange;
}

/** Reads the query string of the queue page; a bad value is an InvalidOptionError naming its parameter. */
export function parseQueuePageQuery(query: Record<string, unknown>): QueuePageQuery {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw new InvalidOptionError(name, 'one value', v);
    return v;
  };
  for (const key of Object.keys(query))
    if (!['state', 'after', 'range'].includes(key))
      throw new InvalidOptionError(key, 'no such parameter (state, after, range)', query[key]);
  const state = one('state');
  if (state !== undefined && state !== 'all' && !JOB_STATES.includes(state as JobState))
    throw new InvalidOptionError('state', `all or one of ${JOB_STATES.join(', ')}`, state);
  const after = one('after');
  if (after !== undefined && !isJobId(after)) throw new InvalidOptionError('after', "a job id (a page's next)", after);
  const range = one('range') ?? 'hour';
  if (!Object.hasOwn(RANGES, range)) throw new InvalidOptionError('range', `one of ${Object.keys(RANGES).join(', ')}`, range);
  return { state: state === undefined || state === 'all' ? null : (state as JobState), after: after ?? null, range: range as ChartRange };
}

/** One queue as its page shows it. */
export interface QueueView {
  queue: QueueResult;
  query: QueuePageQuery;
  jobs: JobWithMetadata[];
  /** The cursor of the next page of the browser; null: this is the last. */
  next: string | null;
  /** The stats series over the range, oldest first; null when this instance keeps none (persistQueueStats off). */
  series: QueueStats[] | null;
  /** The series' span: from `from` to `to` (ms since the epoch). */
  from: number;
  to: number;
}

/**
 * Reads queue `name`'s page; null when there is no such queue. `source`: the dashboard's connections and statements;
 * `queue`: the engine, whose units of findJobs and getQueueStats read here on the page's transaction.
 */
export async function readQueueView(
  queue: PgQueue,
  source: SamplerSource,
  name: string,
  query: QueuePageQuery,
  persisted: boolean,
): Promise<QueueView | null> {
  queueName('name', name);
  const rt = runtimeOf(queue);
  return inTransaction(
    () => source.connect(),
    async (client) => {
      const exec = executorFor(source, client);
      const [row] = await exec.query<QueueRow>(source.statements.getQueues, [[name]]);
      if (!row) return null;
      const page = await new JobFinder(rt).findJobs(
        name,
        {
          ...(query.state ? { state: query.state } : {}),
          ...(query.after ? { after: query.after } : {}),
          limit: BROWSER_PAGE_ROWS,
          maxBytes: BROWSER_PAGE_BYTES,
        },
        exec,
      );
      const to = Date.now();
      const from = to - RANGES[query.range] * 1000;
      const series = persisted
        ? (
            await new QueueStatsReader(rt).getQueueStats(
              name,
              { from: new Date(from), to: new Date(to), maxDataPoints: CHART_POINTS, percentiles: [50, 95] },
              exec,
            )
          ).reverse()
        : null;
      return { queue: toQueueResult(row), query, jobs: page.jobs, next: page.next, series, from, to };
    },
    beginDashboardPageRead,
  );
}
