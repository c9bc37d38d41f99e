// expectSent(): the assertion that a job was sent. It reads the queue's jobs from the database (findJobs), so it sees
// what any process sent, in whatever state the job is now, and fails as every test runner reports a failure: by
// throwing an Error whose message lists what was sent instead.
import type { JobName } from '../core/job-definition.js';
import { runtimeOf, type PgQueue } from '../core/pg-queue.js';
import type { JobWithMetadata } from '../core/types.js';
import { InvalidOptionError } from '../core/errors.js';
import { int, noUnknownKeys, record } from '../core/config/validate.js';
import { mismatch, refusePromise, render, type Shape } from './match.js';
import { queueOf } from './watch.js';

/** What a sent job's data must match: an expected shape (see Shape), or a predicate of the data and the job. */
export type SentMatcher<T = unknown> = ((data: T, job: JobWithMetadata<T>) => unknown) | Shape<T>;

/** Options of expectSent(). */
export interface ExpectSentOptions {
  /** Only jobs created at or after this time (by the database's clock): what the test itself sent. */
  since?: Date;
  /** Exactly this many jobs must match (0: none was sent); without it, at least one must. */
  times?: number;
}

const KEYS = new Set(['since', 'times']);
/** How many of the jobs that were sent the failure message lists. */
const LISTED = 20;

/**
 * Asserts that a job whose data matches `matcher` was sent to queue `name` (in any state: waiting, running, or
 * finished and still kept), and returns the jobs that match, newest first. Without `matcher`, any job matches.
 * `matcher` is a partial deep match of the data (`{ userId: 'u1' }` matches `{ userId: 'u1', plan: 'pro' }`) whose
 * values may be tests of their own (a RegExp, a function, `expect.any(String)`), or a predicate `(data, job) => …`.
 * When the assertion fails it throws an Error listing what was sent and where each job differs; it works with any
 * test runner. `since` keeps only the jobs created since then (a test's own, when tests share a queue), `times`
 * asks for an exact count. A queue that does not exist throws QueueNotFoundError.
 */
export async function expectSent<T = unknown>(
  queue: PgQueue,
  name: JobName<T>,
  matcher?: SentMatcher<T>,
  options: ExpectSentOptions = {},
): Promise<JobWithMetadata<T>[]> {
  const queueName = queueOf(name);
  if (!queue || typeof queue.findJobs !== 'function') throw new InvalidOptionError('queue', 'a QueueService or PgQueue', queue);
  const o = record('options', options);
  noUnknownKeys('options', o, KEYS);
  if (o.since !== undefined && !(o.since instanceof Date && !Number.isNaN(o.since.getTime())))
    throw new InvalidOptionError('options.since', 'a valid Date', o.since);
  const since = o.since;
  const times = o.times === undefined ? null : int('options.times', o.times, 0);
  // createdOn is the database's clock and `since` this process's: `since` is moved onto the database's clock
  const from = since ? since.getTime() + (await databaseSkewMs(queue)) : null;
  const sent = (await allJobs<T>(queue, queueName)).filter((j) => from === null || j.createdOn.getTime() >= from);
  const verdicts = sent.map((job) => ({ job, differs: differenceOf(job, matcher) }));
  const matching = verdicts.filter((v) => v.differs === null).map((v) => v.job);
  if (times === null ? matching.length > 0 : matching.length === times) return matching;
  throw new Error(failureMessage(queueName, matcher, since, times, matching.length, verdicts));
}

/** Every job of the queue, newest first, page after page. */
async function allJobs<T>(queue: PgQueue, name: string): Promise<JobWithMetadata<T>[]> {
  const jobs: JobWithMetadata<T>[] = [];
  let after: string | undefined;
  do {
    const page = await queue.findJobs<T>(name, { limit: 1000, after });
    jobs.push(...page.jobs);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return jobs;
}

/** null when the job matches, else how it differs. */
function differenceOf<T>(job: JobWithMetadata<T>, matcher: SentMatcher<T> | undefined): string | null {
  if (matcher === undefined) return null;
  if (typeof matcher !== 'function') return mismatch(job.data, matcher);
  let passed: unknown;
  try {
    passed = (matcher as (data: T, job: JobWithMetadata<T>) => unknown)(job.data, job);
  } catch (err) {
    return `the predicate threw ${err instanceof Error ? err.message : String(err)}`;
  }
  refusePromise(passed, 'matcher');
  return passed ? null : `did not pass ${render(matcher)}`;
}

/**
 * How far the database's clock is ahead of this process's (negative: behind), in ms, read now. The error is at most
 * the round trip: read against the time the answer came back, it leans earlier, so a job sent just after `since` is kept.
 */
async function databaseSkewMs(queue: PgQueue): Promise<number> {
  const rt = runtimeOf(queue);
  const exec = await rt.db();
  const [row] = (await exec.query<{ now_ms: number }>(rt.statements.databaseNow)) as [{ now_ms: number }];
  const after = Date.now();
  // less 1 ms: `since` and createdOn are whole milliseconds, truncated, where the database's reading is not
  return row.now_ms - after - 1;
}

function failureMessage<T>(
  queue: string,
  matcher: SentMatcher<T> | undefined,
  since: Date | undefined,
  times: number | null,
  matched: number,
  verdicts: { job: JobWithMetadata<T>; differs: string | null }[],
): string {
  const what = matcher === undefined ? 'any data' : `data matching ${render(matcher)}`;
  const when = since ? ` since ${since.toISOString()}` : '';
  const head =
    times === null
      ? `expectSent: no job with ${what} was sent to queue "${queue}"${when}`
      : `expectSent: expected ${times} job(s) with ${what} sent to queue "${queue}"${when}, found ${matched}`;
  if (verdicts.length === 0) return `${head}; no job at all was sent to it${when}.`;
  const lines = verdicts.slice(0, LISTED).map(({ job, differs }) => {
    const verdict = differs === null ? 'matches' : differs;
    return `  job ${job.id} (${job.state}, ${job.createdOn.toISOString()}): ${render(job.data)}\n    ${verdict}`;
  });
  if (verdicts.length > LISTED) lines.push(`  … and ${verdicts.length - LISTED} older job(s)`);
  return `${head}. ${verdicts.length} job(s) were sent to it${when}, newest first:\n${lines.join('\n')}`;
}
