// The dashboard's search (`{path}/search?q=`): a job id, else a singleton key or a dedupe key, in one queue
// (`&queue=`) or in every queue. An id is looked up by the primary key; a key through findJobs, whose statements read
// the key's indexes (sql/find.ts, BY_KEY). One match is the answer (the page goes straight to the job view).
import { InvalidOptionError, QueueNotFoundError } from '../errors.js';
import { isJobId } from '../jobs/refs.js';
import type { PgQueue } from '../pg-queue.js';
import { runtimeOf } from '../pg-queue.js';
import type { JobWithMetadata } from '../types.js';

/** Queues a search without `queue` looks in (by name); past them the page says the search stopped. */
export const SEARCH_MAX_QUEUES = 200;
/** Jobs a search lists, newest first. */
export const SEARCH_MAX_RESULTS = 50;
/** The longest text searched for. */
export const SEARCH_MAX_CHARS = 1000;

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

/** A search's answer: the job it found alone, or the jobs that hold the key. */
export type SearchResult =
  | { kind: 'job'; id: string }
  | {
      kind: 'list';
      jobs: JobWithMetadata[];
      /** More jobs hold the key than the list shows. */
      more: boolean;
      /** How many queues were searched, and whether some were not (past SEARCH_MAX_QUEUES). */
      queues: number;
      unsearched: boolean;
    };

/** Searches as `query` asks. A queue that is not there is an empty answer, as a key no job holds. */
export async function searchJobs(queue: PgQueue, query: SearchQuery): Promise<SearchResult> {
  const { q } = query;
  if (isJobId(q)) {
    const rt = runtimeOf(queue);
    const [row] = await (await rt.db()).query<{ name: string }>(rt.statements.getJobQueue, [q]);
    if (row && (query.queue === null || row.name === query.queue)) return { kind: 'job', id: q };
  }
  const all = query.queue === null ? (await queue.getQueues()).map((x) => x.name) : [query.queue];
  const names = all.slice(0, SEARCH_MAX_QUEUES);
  const found = new Map<string, JobWithMetadata>();
  let more = false;
  for (const name of names) {
    for (const key of ['singletonKey', 'dedupeKey'] as const) {
      // a key too long or otherwise refused by findJobs cannot be stored either: nothing holds it
      const page = await queue.findJobs(name, { [key]: q, limit: SEARCH_MAX_RESULTS }).catch((err: unknown) => {
        if (err instanceof InvalidOptionError || err instanceof QueueNotFoundError) return null;
        throw err;
      });
      if (!page) continue;
      if (page.next) more = true;
      for (const job of page.jobs) found.set(`${job.name}\u0000${job.id}`, job);
    }
  }
  const jobs = [...found.values()].sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0));
  if (jobs.length > SEARCH_MAX_RESULTS) more = true;
  if (jobs.length === 1 && !more) return { kind: 'job', id: jobs[0]!.id };
  return { kind: 'list', jobs: jobs.slice(0, SEARCH_MAX_RESULTS), more, queues: names.length, unsearched: all.length > names.length };
}
