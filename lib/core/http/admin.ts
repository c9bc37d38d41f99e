// The admin HTTP API's work, without HTTP: what a request may hold (parsed into the engine's own calls, refused
// with the engine's typed errors naming the field), what it answers (the engine's fields, and seed 002's wire format
// beside them), and the few calls that take a job by id alone (lib/nest/admin.ts mounts the routes; http/errors.ts
// turns the errors into answers).
import { isJobId } from '../jobs/refs.js';
import { InvalidOptionError, JobNotFoundError } from '../errors.js';
import type { FindJobsOptions, JobPage } from '../jobs/finder.js';
import { runtimeOf, type PgQueue } from '../pg-queue.js';
import { redactJob, type Redact } from './redact.js';
import type { EnqueueResult, JobState, JobWithMetadata, SendOptions } from '../types.js';
import { int, MAX_SECONDS, optKey, queueName } from '../config/validate.js';

/** The engine's form of the enqueue body. */
const ENGINE_KEYS = ['data', 'options'];
/** Seed 002's form: the payload and its options side by side. */
const REFERENCE_KEYS = ['payload', 'maxAttempts', 'runAt', 'delay', 'dedupeKey', 'priority'];

/**
 * The body of `POST {prefix}/enqueue`, in either form: the reference's `{ queue, payload, maxAttempts?, runAt?,
 * delay? (ms), dedupeKey?, priority? }` or the engine's `{ queue, data?, options? }`. A body that mixes them is refused
 * naming the first key of the other form.
 */
export function parseEnqueueBody(body: unknown): { queue: string; data: unknown; options: SendOptions | undefined } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidOptionError('body', 'a JSON object { queue, payload, maxAttempts?, runAt?, delay?, dedupeKey?, priority? }', body);
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b);
  for (const key of keys)
    if (key !== 'queue' && !ENGINE_KEYS.includes(key) && !REFERENCE_KEYS.includes(key))
      throw new InvalidOptionError(key, `absent: the body holds queue and ${REFERENCE_KEYS.join(', ')} (or data and options)`, b[key]);
  const engine = keys.find((k) => ENGINE_KEYS.includes(k));
  const reference = keys.find((k) => REFERENCE_KEYS.includes(k));
  if (engine !== undefined && reference !== undefined)
    throw new InvalidOptionError(
      reference,
      `absent beside ${engine}: a body is either { queue, payload, maxAttempts, runAt, delay, dedupeKey, priority } or { queue, data, options }`,
      b[reference],
    );
  const queue = queueName('queue', b.queue);
  return engine === undefined ? { queue, ...referenceForm(b) } : { queue, data: b.data, options: engineOptions(b.options) };
}

function engineOptions(options: unknown): SendOptions | undefined {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options)))
    throw new InvalidOptionError('options', 'an object of send options', options);
  // a connection cannot come over HTTP, and a JSON object in its place must not be taken for one
  if (options && 'db' in options) throw new InvalidOptionError('options.db', 'absent: the API sends on its own connection', options.db);
  // send() takes the payload as its own argument: one given here would be dropped
  if (options && 'data' in options) throw new InvalidOptionError('options.data', "absent: the payload is the body's data", options.data);
  return options;
}

/** An RFC 3339 date-time (ISO 8601 with a date, a time and an offset or Z), as seed 002's runAt takes it. */
const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * Seed 002's body as send options: maxAttempts counts the first attempt (retryLimit = maxAttempts − 1); runAt (an
 * RFC 3339 time) wins over delay (milliseconds from now, rounded up to the engine's whole seconds, so that the job
 * never runs before it); dedupeKey and priority as they are. Each is checked under the body's own name.
 */
function referenceForm(b: Record<string, unknown>): { data: unknown; options: SendOptions } {
  const options: SendOptions = {};
  // the reference's options are optional: null says "not given", as a JSON client may write it
  const given = (key: string) => b[key] !== undefined && b[key] !== null;
  if (given('maxAttempts')) options.retryLimit = int('maxAttempts', b.maxAttempts, 1, 1_000_001) - 1;
  if (given('runAt')) options.startAfter = runAtOf(b.runAt);
  if (given('delay')) {
    const ms = int('delay', b.delay, 0, MAX_SECONDS * 1000);
    if (options.startAfter === undefined) options.startAfter = Math.ceil(ms / 1000);
  }
  // checked here, so that an error names the body's field as the request wrote it
  if (given('dedupeKey')) options.dedupeKey = optKey('dedupeKey', b.dedupeKey);
  if (given('priority')) options.priority = int('priority', b.priority, -2_147_483_648);
  return { data: b.payload, options };
}

/** runAt as a time: an RFC 3339 date-time with its offset, whose date exists (no 30 February rolled into March). */
function runAtOf(value: unknown): Date {
  const m = typeof value === 'string' ? RFC_3339.exec(value) : null;
  const at = m ? new Date(value as string) : null;
  const [y, mo, d] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (!at || Number.isNaN(at.getTime()) || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d)
    throw new InvalidOptionError('runAt', 'an ISO-8601/RFC 3339 date-time with an offset, such as "2026-01-02T03:04:05Z"', value);
  return at;
}

/** A job's status as seed 002 names it; `state` keeps the engine's (a cancelled job is failed here: it will not run). */
export type ReferenceStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

/** Seed 002's status of an engine state. */
export function referenceStatus(state: JobState): ReferenceStatus {
  switch (state) {
    case 'created':
    case 'retry':
      return 'pending';
    case 'active':
      return 'in_progress';
    case 'completed':
      return 'completed';
    case 'failed':
    case 'cancelled':
      return 'failed';
  }
}

/** enqueue()'s answer with seed 002's fields beside it: `status` and `runAfter`. */
export function enqueueAnswer(result: EnqueueResult): EnqueueResult & { status: ReferenceStatus | null; runAfter: Date | null } {
  return { ...result, status: result.state === null ? null : referenceStatus(result.state), runAfter: result.startAfter };
}

/** A job as the admin API answers it: the engine's fields, as `redact` lets them out, and seed 002's beside them. */
export type AdminJob = Omit<JobWithMetadata, 'data' | 'output' | 'sourceOutput' | 'lastError'> & {
  data?: unknown;
  output?: unknown;
  sourceOutput?: unknown;
  /** Seed 002's fields. */
  payload?: unknown;
  status: ReferenceStatus;
  /** Attempts begun in the job's current budget (retry() starts a fresh one), and how many the budget holds. */
  attempts: number;
  maxAttempts: number;
  runAfter: Date | null;
  startedAt: Date | null;
  /** The message of the last failed attempt (null: none failed, or redact hid it). */
  lastError: string | null;
  /** The last error as the engine keeps it (name, message, stack, own fields, `on`, `attempt`), as redact lets it out. */
  lastErrorDetail?: JobWithMetadata['lastError'] | { name: string; message: string; stack?: string };
};

/** Errors the engine fails a waiting job with: its last attempt never began. */
const NEVER_BEGUN = new Set(['RetentionExpiredError', 'ParentFailedError']);

/**
 * Whether the job's attempt at retryCount began (retryCount counts the attempts that failed and were retried): a
 * running or finished one did, unless the engine failed it while it waited; a cancelled one did if it was claimed
 * after its last failure.
 */
function lastAttemptBegun(job: JobWithMetadata): boolean {
  switch (job.state) {
    case 'created':
    case 'retry':
      return false;
    case 'active':
    case 'completed':
      return true;
    case 'failed':
      return !(job.lastError !== null && NEVER_BEGUN.has(job.lastError.name));
    case 'cancelled':
      return job.startedOn !== null && (job.lastError === null || job.startedOn > job.lastError.on);
  }
}

/** `job` as the admin API answers it, through `redact`. */
export function adminJob(job: JobWithMetadata, redact: Redact | undefined): AdminJob {
  const fields: Partial<JobWithMetadata> = { ...job };
  delete fields.data;
  delete fields.output;
  delete fields.sourceOutput;
  delete fields.lastError;
  const shown = redactJob(job, redact);
  // retry() moves retryLimit up and starts the count again from retryBase
  const begun = lastAttemptBegun(job) ? 1 : 0;
  const out: AdminJob = {
    ...(fields as Omit<JobWithMetadata, 'data' | 'output' | 'sourceOutput' | 'lastError'>),
    status: referenceStatus(job.state),
    attempts: job.retryCount - job.retryBase + begun,
    maxAttempts: job.retryLimit - job.retryBase + 1,
    runAfter: job.startAfter,
    startedAt: job.startedOn,
    lastError: 'value' in shown.lastError ? (shown.lastError.value?.message ?? null) : null,
  };
  if ('value' in shown.data) {
    out.data = shown.data.value;
    out.payload = shown.data.value;
  }
  if ('value' in shown.output) out.output = shown.output.value;
  if ('value' in shown.sourceOutput) out.sourceOutput = shown.sourceOutput.value;
  if ('value' in shown.lastError) out.lastErrorDetail = shown.lastError.value;
  return out;
}

const FIND_KEYS = new Set(['state', 'after', 'limit', 'maxBytes', 'singletonKey', 'dedupeKey']);

/**
 * The query of `GET {prefix}/queues/:name/jobs` as findJobs' options: `state` once, repeated or comma-separated,
 * `after` (a page's `next`), `limit`, `maxBytes`, `singletonKey`, `dedupeKey`. Numbers arrive as text and are read as such.
 */
export function parseFindQuery(query: Record<string, unknown>): FindJobsOptions {
  const out: FindJobsOptions = {};
  for (const [key, raw] of Object.entries(query)) {
    if (!FIND_KEYS.has(key)) throw new InvalidOptionError(key, `absent: the query takes ${[...FIND_KEYS].join(', ')}`, raw);
    const values = (Array.isArray(raw) ? raw : [raw]) as unknown[];
    if (key === 'state') {
      const states = values.flatMap((v) => String(v).split(',')) as JobState[];
      // one state as one value, so that an error names `state`, not `state[0]`
      out.state = states.length === 1 ? states[0] : states;
      continue;
    }
    if (values.length !== 1) throw new InvalidOptionError(key, 'given once', raw);
    const value = values[0];
    if (key === 'limit' || key === 'maxBytes') {
      const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
      out[key] = Number.isNaN(n) ? (value as number) : n;
    } else out[key as 'after' | 'singletonKey' | 'dedupeKey'] = value as string;
  }
  return out;
}

/** findJobs for a request's query: its errors name the query's parameter (`state`), not the option (`options.state`). */
export async function findJobsByQuery(queue: PgQueue, name: string, query: Record<string, unknown>): Promise<JobPage> {
  const options = parseFindQuery(query);
  try {
    return await queue.findJobs(name, options);
  } catch (err) {
    if (err instanceof InvalidOptionError && err.field.startsWith('options.'))
      throw new InvalidOptionError(err.field.slice('options.'.length), err.expected, err.value);
    throw err;
  }
}

/** A job id from a path: refused naming `id` when it is none. */
export function jobIdOf(id: unknown): string {
  if (!isJobId(id)) throw new InvalidOptionError('id', 'a job id (a string of digits from 1 to 9223372036854775807)', id);
  return id;
}

/** The queue of job `id` (ids are unique across queues); JobNotFoundError when no job has it. */
export async function queueOfJob(queue: PgQueue, id: string): Promise<string> {
  const rt = runtimeOf(queue);
  const [row] = await (await rt.db()).query<{ name: string }>(rt.statements.getJobQueue, [jobIdOf(id)]);
  if (!row) throw new JobNotFoundError(null, id);
  return row.name;
}
