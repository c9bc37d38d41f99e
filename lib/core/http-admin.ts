// The admin HTTP API's work, without HTTP: what a request may hold (parsed into the engine's own calls, refused
// with the engine's typed errors naming the field), the few calls that take a job by id alone, and the one table
// that turns the engine's errors into HTTP answers (lib/nest/admin.ts mounts the routes).
import { isJobId } from './job-refs.js';
import { InvalidOptionError, JobNotFoundError, QueueError } from './errors.js';
import type { FindJobsOptions, JobPage } from './job-finder.js';
import { runtimeOf, type PgQueue } from './pg-queue.js';
import { sqlState } from './pg-errors.js';
import type { JobState, SendOptions } from './types.js';
import { queueName } from './validate.js';

/** An HTTP answer for an error: its status and a JSON body that names the field where there is one. */
export interface HttpError {
  status: number;
  body: { statusCode: number; code: string; message: string; field?: string };
}

/** Status by the engine's error code; the codes not listed are the server's fault (500). */
const STATUS: Readonly<Record<string, number>> = {
  INVALID_OPTION: 400,
  INVALID_PAYLOAD: 400,
  // retrying a job that is not failed: the reference API answers 400 (the job is in the wrong state for it)
  JOB_STATE: 400,
  PAYLOAD_TOO_LARGE: 413,
  QUEUE_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  QUEUE_EXISTS: 409,
  KEY_TAKEN: 409,
  JOB_RACE: 409,
  QUEUE_RACE: 409,
  QUEUE_CLOSED: 503,
};

/** Node's codes of a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * The HTTP answer for what an engine call threw: the engine's typed errors by their code, a database that cannot be
 * reached (or ended the statement: a restart, a timeout) as 503; null for anything else, which is a bug to report.
 */
export function httpErrorOf(err: unknown): HttpError | null {
  if (err instanceof QueueError) {
    const status = STATUS[err.code];
    if (status === undefined) return null;
    // InvalidOptionError, InvalidPayloadError and PayloadTooLargeError name the field
    const field = (err as { field?: unknown }).field;
    return answer(status, err.code, err.message, typeof field === 'string' ? field : undefined);
  }
  const state = sqlState(err);
  const lost =
    (state !== undefined && (CONNECTION_CODES.has(state) || /^(08|57)/.test(state))) ||
    (err instanceof Error && /Connection terminated|timeout exceeded when trying to connect/i.test(err.message));
  return lost ? answer(503, 'DATABASE_UNAVAILABLE', 'the database cannot be reached now; try again') : null;
}

function answer(status: number, code: string, message: string, field?: string): HttpError {
  return { status, body: { statusCode: status, code, message, ...(field === undefined ? {} : { field }) } };
}

const ENQUEUE_KEYS = new Set(['queue', 'data', 'options']);

/** The body of `POST {prefix}/enqueue`: `{ queue, data?, options? }`. */
export function parseEnqueueBody(body: unknown): { queue: string; data: unknown; options: SendOptions | undefined } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidOptionError('body', 'a JSON object { queue, data, options }', body);
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b))
    if (!ENQUEUE_KEYS.has(key)) throw new InvalidOptionError(key, 'absent: the body holds queue, data and options only', b[key]);
  const queue = queueName('queue', b.queue);
  const options = b.options;
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options)))
    throw new InvalidOptionError('options', 'an object of send options', options);
  // a connection cannot come over HTTP, and a JSON object in its place must not be taken for one
  if (options && 'db' in options) throw new InvalidOptionError('options.db', 'absent: the API sends on its own connection', options.db);
  // send() takes the payload as its own argument: one given here would be dropped
  if (options && 'data' in options) throw new InvalidOptionError('options.data', "absent: the payload is the body's data", options.data);
  return { queue, data: b.data, options };
}

const FIND_KEYS = new Set(['state', 'after', 'limit', 'singletonKey', 'dedupeKey']);

/**
 * The query of `GET {prefix}/queues/:name/jobs` as findJobs' options: `state` once, repeated or comma-separated,
 * `after` (a page's `next`), `limit`, `singletonKey`, `dedupeKey`. Numbers arrive as text and are read as such.
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
    if (key === 'limit') {
      const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
      out.limit = Number.isNaN(n) ? (value as number) : n;
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
