// Finding jobs: a queue's jobs page by page, newest first, filtered by state and key (findJobs). Each page reads
// an index (sql/find.ts), and the cursor is the last id of the page before: stable however the table grows.
import { InvalidOptionError } from '../errors.js';
import { toJobWithMetadata, type JobRow } from '../rows.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Statements } from '../sql/index.js';
import type { JobState, JobWithMetadata } from '../types.js';
import { int, noUnknownKeys, optKey, queueName, record } from '../config/validate.js';

/** Options of findJobs. */
export interface FindJobsOptions {
  /** Only jobs in this state, or in one of these. */
  state?: JobState | JobState[];
  singletonKey?: string;
  dedupeKey?: string;
  /** Most jobs in the page, 1–1000 (default 100). */
  limit?: number;
  /** The `next` of the page before: the jobs older than it. */
  after?: string;
  /**
   * Bytes of JSON (data, output, the dead-letter source's output, the last error) after which the page ends, 1,024 to
   * 67,108,864 (default 1,048,576): a job is in the page while the jobs before it hold less, so the page ends with the
   * job that reaches or passes the bound, and `next` goes on after it. Its first job is always in it, however large.
   */
  maxBytes?: number;
}

/** The bytes of JSON a page of findJobs holds unless `maxBytes` says otherwise. */
export const FIND_MAX_BYTES = 1024 * 1024;

/** A page of findJobs: its jobs, newest first, and the cursor of the next page (null: this one is the last). */
export interface JobPage<T = unknown> {
  jobs: JobWithMetadata<T>[];
  next: string | null;
}

const KEYS = new Set(['state', 'singletonKey', 'dedupeKey', 'limit', 'after', 'maxBytes']);
/** Every state a job can be in, in the order of its life. */
export const JOB_STATES: readonly JobState[] = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'];
/** A job id: a positive bigint, as text. */
const JOB_ID = /^[1-9][0-9]{0,18}$/;
const BIGINT_MAX = 9_223_372_036_854_775_807n;

/** Checks findJobs' options (InvalidOptionError naming the field). */
export function parseFindOptions(value: unknown): {
  states: JobState[] | null;
  singletonKey: string | null;
  dedupeKey: string | null;
  limit: number;
  after: string | null;
  maxBytes: number;
} {
  const o = record('options', value ?? {});
  noUnknownKeys('options', o, KEYS);
  let states: JobState[] | null = null;
  if (o.state !== undefined) {
    const given = Array.isArray(o.state) ? (o.state as unknown[]) : [o.state];
    if (given.length === 0)
      throw new InvalidOptionError('options.state', `a state or a non-empty array of states (${JOB_STATES.join(', ')})`, o.state);
    states = given.map((s, i) => {
      if (!JOB_STATES.includes(s as JobState))
        throw new InvalidOptionError(
          Array.isArray(o.state) ? `options.state[${i}]` : 'options.state',
          `one of ${JOB_STATES.join(', ')}`,
          s,
        );
      return s as JobState;
    });
  }
  const after = o.after;
  if (after !== undefined && (typeof after !== 'string' || !JOB_ID.test(after) || BigInt(after) > BIGINT_MAX))
    throw new InvalidOptionError('options.after', "a job id (a page's `next`)", after);
  return {
    states,
    singletonKey: optKey('options.singletonKey', o.singletonKey) ?? null,
    dedupeKey: optKey('options.dedupeKey', o.dedupeKey) ?? null,
    limit: o.limit === undefined ? 100 : int('options.limit', o.limit, 1, 1000),
    after: after ?? null,
    maxBytes: o.maxBytes === undefined ? FIND_MAX_BYTES : int('options.maxBytes', o.maxBytes, 1024, 64 * 1024 * 1024),
  };
}

/** The statement for what is asked: one text per shape, each reading the index that fits it (sql/find.ts). */
function statementFor(st: Statements, o: ReturnType<typeof parseFindOptions>): string {
  if (o.singletonKey !== null) return st.findJobsBySingletonKey;
  if (o.dedupeKey !== null) return st.findJobsByDedupeKey;
  if (o.states?.every((state) => state === 'failed')) return st.findFailedJobs;
  return st.findJobs;
}

export class JobFinder {
  constructor(private readonly rt: Runtime) {}

  async findJobs<T = unknown>(name: string, options?: FindJobsOptions): Promise<JobPage<T>> {
    queueName('name', name);
    const o = parseFindOptions(options);
    const exec = await this.rt.db();
    // one more than the page: whether a next page exists, without a query of its own
    const args = [name, o.states, o.singletonKey, o.dedupeKey, o.after, o.limit + 1, o.maxBytes];
    const rows = await this.rt.router.withQueueStatements(
      exec,
      name,
      (st) => exec.query<JobRow & { found: string }>(statementFor(st, o), args),
      (found) => found.length === 0,
    );
    // no row: an empty page, or no such queue (its statements then name `jobs`, and find nothing)
    if (rows.length === 0) await this.rt.router.assertExists(exec, name);
    const jobs = rows.slice(0, o.limit).map((r) => toJobWithMetadata<T>(r));
    // more rows found than the page holds: cut by its length or by its bytes
    return { jobs, next: rows.length > 0 && Number(rows[0]!.found) > jobs.length ? jobs.at(-1)!.id : null };
  }
}
