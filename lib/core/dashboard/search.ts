// The dashboard's search (`{path}/search?q=`): a job id, a singleton key or a dedupe key, in one queue (`&queue=`) or in
// every queue, read in one READ ONLY transaction (each statement cancelled past DASHBOARD_PAGE_STATEMENT_TIMEOUT_MS).
// An id is looked up by the primary key, a key through findJobs' statements (sql/find.ts, BY_KEY), queue after queue
// until SEARCH_BUDGET_MS have passed. Text that is an id and a key is both: its matches are listed together. One
// match, with every queue searched, is the answer (the page goes straight to the job view).
import { InvalidOptionError, QueueNotFoundError } from '../errors.js';
import { JobFinder } from '../jobs/finder.js';
import { isJobId } from '../jobs/refs.js';
import { runtimeOf, type PgQueue } from '../pg-queue.js';
import { inTransaction, type Executor } from '../runtime/db.js';
import { beginDashboardPageRead } from '../sql/transaction.js';
import type { JobWithMetadata } from '../types.js';
import { executorFor, type SamplerSource } from './sampler.js';

/** Queues a search without `queue` looks in (by name); past them the page says the search stopped. */
export const SEARCH_MAX_QUEUES = 200;
/** Jobs a search lists, newest first. */
export const SEARCH_MAX_RESULTS = 50;
/** The longest text searched for. */
export const SEARCH_MAX_CHARS = 1000;
/** How long a search goes on to a next queue; the queues left are said to be unsearched. */
export const SEARCH_BUDGET_MS = 3000;
/** Bytes of JSON one queue's page of matches may hold (findJobs' maxBytes): a list shows no payload. */
const SEARCH_PAGE_BYTES = 64 * 1024;

/** What a search asks: the text, and the queue to look in (null: every queue). */
export interface SearchQuery {
  q: string;
  queue: string | null;
}

/** Reads the query string of the search; a bad value is an InvalidOptionError naming its parameter. */
export function parseSearchQuery(query: Record<string, unknown>): SearchQuery {
  for (const key of Object.keys(query))
    if (key !== 'q' && key !== 'queue') throw new InvalidOptionError(key, 'no such parameter (q, queue)', query[key]);
  const { q, queue } = query;
  if (typeof q !== 'string' || q.trim() === '' || q.length > SEARCH_MAX_CHARS)
    throw new InvalidOptionError('q', `a job id, a singleton key or a dedupe key (1–${SEARCH_MAX_CHARS} characters)`, q);
  if (queue !== undefined && queue !== '' && typeof queue !== 'string') throw new InvalidOptionError('queue', "a queue's name", queue);
  return { q: q.trim(), queue: typeof queue === 'string' && queue !== '' ? queue : null };
}

/** A job whose id is the text searched for. */
export interface IdMatch {
  id: string;
  queue: string;
}

/** A search's answer: the job it found alone, or the jobs that match. */
export type SearchResult =
  | { kind: 'job'; id: string }
  | {
      kind: 'list';
      /** The job whose id is the text, if one is (its row is among `jobs` when it also holds the text as a key). */
      byId: IdMatch | null;
      /** The jobs that hold the text as a key, newest first. */
      jobs: JobWithMetadata[];
      /** More jobs hold it than the list shows. */
      more: boolean;
      /** How many queues were searched for the key, and how many were not (past SEARCH_MAX_QUEUES or the time). */
      queues: number;
      unsearched: number;
    };

/** The jobs of queue `name` that hold `q` as a singleton key or a dedupe key (null: there is no such queue). */
async function keyed(
  finder: JobFinder,
  exec: Executor,
  name: string,
  q: string,
): Promise<{ jobs: JobWithMetadata[]; more: boolean } | null> {
  const jobs: JobWithMetadata[] = [];
  let more = false;
  for (const key of ['singletonKey', 'dedupeKey'] as const) {
    try {
      const page = await finder.findJobs(name, { [key]: q, limit: SEARCH_MAX_RESULTS, maxBytes: SEARCH_PAGE_BYTES }, exec);
      jobs.push(...page.jobs);
      more ||= page.next !== null;
    } catch (err) {
      // a key findJobs refuses (too long, a NUL) cannot be stored either: no job holds it
      if (err instanceof QueueNotFoundError) return null;
      if (!(err instanceof InvalidOptionError)) throw err;
    }
  }
  return { jobs, more };
}

/** Searches as `query` asks; `source`: the dashboard's connections and statements. */
export function searchJobs(queue: PgQueue, source: SamplerSource, query: SearchQuery): Promise<SearchResult> {
  const finder = new JobFinder(runtimeOf(queue));
  const { q } = query;
  return inTransaction(
    () => source.connect(),
    async (client) => {
      const exec = executorFor(source, client);
      const started = Date.now();
      let byId: IdMatch | null = null;
      if (isJobId(q)) {
        const [row] = await exec.query<{ name: string }>(source.statements.getJobQueue, [q]);
        if (row && (query.queue === null || row.name === query.queue)) byId = { id: q, queue: row.name };
      }
      const all =
        query.queue === null ? (await exec.query<{ name: string }>(source.statements.getQueues, [null])).map((x) => x.name) : [query.queue];
      const found = new Map<string, JobWithMetadata>();
      let more = false;
      let searched = 0;
      for (const name of all.slice(0, SEARCH_MAX_QUEUES)) {
        if (searched > 0 && Date.now() - started > SEARCH_BUDGET_MS) break;
        searched++;
        const matches = await keyed(finder, exec, name, q);
        if (!matches) continue;
        more ||= matches.more;
        for (const job of matches.jobs) found.set(`${job.name}\u0000${job.id}`, job);
      }
      const jobs = [...found.values()].sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0));
      if (jobs.length > SEARCH_MAX_RESULTS) more = true;
      const unsearched = all.length - searched;
      // one job in all, every queue searched: that job (the id's, or the one key's)
      const idAmongKeys = byId !== null && jobs.some((j) => j.id === byId.id && j.name === byId.queue);
      const total = jobs.length + (byId && !idAmongKeys ? 1 : 0);
      if (total === 1 && !more && unsearched === 0) return { kind: 'job', id: byId?.id ?? jobs[0]!.id };
      return { kind: 'list', byId, jobs: jobs.slice(0, SEARCH_MAX_RESULTS), more, queues: searched, unsearched };
    },
    beginDashboardPageRead,
  );
}
