// Finding jobs: a queue's jobs page by page, newest first, filtered by state and key (findJobs). Each page reads
// an index (sql/find.ts), and the cursor is the last id of the page before: stable however the table grows.
import { InvalidOptionError } from '../errors.js';
import { toJobWithMetadata, type JobRow } from '../rows.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Executor } from '../runtime/db.js';
import type { Statements } from '../sql/index.js';
import type { JobState, JobWithMetadata } from '../types.js';
import { int, noUnknownKeys, optKey, queueName, record, toJson } from '../config/validate.js';

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
   * Only jobs whose payload contains this JSON object (PostgreSQL's `@>`: every key given, with a value that contains
   * the one given). Without an index on the payload it tests each of the queue's jobs from the newest (or `after`)
   * until the page is full (guide, "Job control").
   */
  data?: Record<string, unknown>;
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

const KEYS = new Set(['state', 'singletonKey', 'dedupeKey', 'data', 'limit', 'after', 'maxBytes']);
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
  /** `data` as JSON text, or null. */
  data: string | null;
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
    data: dataFilter(o.data),
  };
}

/** findJobs' `data`: a JSON object (containment of an array or a scalar is not what pg-boss's `data` asks). */
function dataFilter(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionError('options.data', "a JSON object (the jobs whose payload contains it, as PostgreSQL's @>)", value);
  }
  return toJson('options.data', value);
}

/**
 * The statement for what is asked and its arguments: one text per shape, each reading the index that fits it
 * (sql/find.ts). The keyed statements and findJobsByData take the payload filter as $8.
 */
function statementFor(st: Statements, o: ReturnType<typeof parseFindOptions>, payloadIndexed: boolean): { text: string; args: unknown[] } {
  // one more than the page: whether a next page exists, without a query of its own
  const args = [o.states, o.singletonKey, o.dedupeKey, o.after, o.limit + 1, o.maxBytes];
  if (o.singletonKey !== null) return { text: st.findJobsBySingletonKey, args: [...args, o.data] };
  if (o.dedupeKey !== null) return { text: st.findJobsByDedupeKey, args: [...args, o.data] };
  if (o.data !== null) return { text: payloadIndexed ? st.findJobsByDataIndexed : st.findJobsByData, args: [...args, o.data] };
  if (o.states?.every((state) => state === 'failed')) return { text: st.findFailedJobs, args };
  return { text: st.findJobs, args };
}

/** How long findJobs trusts what it read of a table's payload index (an index made or dropped is seen this late). */
const PAYLOAD_INDEX_TTL_MS = 60_000;

export class JobFinder {
  /** Whether each table has a GIN index on the payload, by the text of its probe, and when that was read. */
  private readonly payloadIndexes = new Map<string, { indexed: boolean; at: number }>();

  constructor(private readonly rt: Runtime) {}

  /** Whether the table of `st` has an index on the payload that findJobs' `data` can read (sql/find.ts). */
  private async payloadIndexed(exec: Executor, st: Statements): Promise<boolean> {
    const known = this.payloadIndexes.get(st.payloadIndexed);
    if (known && Date.now() - known.at < PAYLOAD_INDEX_TTL_MS) return known.indexed;
    const [row] = await exec.query<{ indexed: boolean }>(st.payloadIndexed);
    this.payloadIndexes.set(st.payloadIndexed, { indexed: row?.indexed === true, at: Date.now() });
    return row?.indexed === true;
  }

  /** A page of queue `name`'s jobs; `on`: the executor to read with (the dashboard's read-only transaction), else the engine's. */
  async findJobs<T = unknown>(name: string, options?: FindJobsOptions, on?: Executor): Promise<JobPage<T>> {
    queueName('name', name);
    const o = parseFindOptions(options);
    const exec = on ?? (await this.rt.db());
    const rows = await this.rt.router.withQueueStatements(
      exec,
      name,
      async (st) => {
        const indexed = o.data !== null && o.singletonKey === null && o.dedupeKey === null && (await this.payloadIndexed(exec, st));
        const { text, args } = statementFor(st, o, indexed);
        return exec.query<JobRow & { found: string }>(text, [name, ...args]);
      },
      (found) => found.length === 0,
    );
    // no row: an empty page, or no such queue (its statements then name `jobs`, and find nothing)
    if (rows.length === 0) await this.rt.router.assertExists(exec, name);
    const jobs = rows.slice(0, o.limit).map((r) => toJobWithMetadata<T>(r));
    // more rows found than the page holds: cut by its length or by its bytes
    return { jobs, next: rows.length > 0 && Number(rows[0]!.found) > jobs.length ? jobs.at(-1)!.id : null };
  }
}
