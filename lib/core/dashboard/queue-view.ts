// The dashboard's page of one queue: its settings and counts (getQueue), a page of its jobs in one state, newest first
// (findJobs: keyset pages on the index findJobs reads, bounded by rows and bytes), and its stats over the last hour or
// day (getQueueStats, downsampled, with the wait and run percentiles). Read through the engine's own calls, so the
// page shows what the API answers; the query string is checked here, each bad value named.
import { InvalidOptionError } from '../errors.js';
import { isJobId } from '../jobs/refs.js';
import { JOB_STATES } from '../jobs/finder.js';
import type { PgQueue } from '../pg-queue.js';
import type { JobState, JobWithMetadata, QueueResult, QueueStats } from '../types.js';

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

/** Reads queue `name`'s page; null when there is no such queue. */
export async function readQueueView(queue: PgQueue, name: string, query: QueuePageQuery, persisted: boolean): Promise<QueueView | null> {
  const info = await queue.getQueue(name);
  if (!info) return null;
  const page = await queue.findJobs(name, {
    ...(query.state ? { state: query.state } : {}),
    ...(query.after ? { after: query.after } : {}),
    limit: BROWSER_PAGE_ROWS,
    maxBytes: BROWSER_PAGE_BYTES,
  });
  const to = Date.now();
  const from = to - RANGES[query.range] * 1000;
  const series = persisted
    ? (
        await queue.getQueueStats(name, {
          from: new Date(from),
          to: new Date(to),
          maxDataPoints: CHART_POINTS,
          percentiles: [50, 95],
        })
      ).reverse()
    : null;
  return { queue: info, query, jobs: page.jobs, next: page.next, series, from, to };
}
