// The admin HTTP API's work, without HTTP: what a request may hold (parsed into the engine's own calls, refused
// with the engine's typed errors naming the field), and the few calls that take a job by id alone
// (lib/nest/admin.ts mounts the routes; http-errors.ts turns the errors into answers).
import { isJobId } from './job-refs.js';
import { InvalidOptionError, JobNotFoundError } from './errors.js';
import type { FindJobsOptions, JobPage } from './job-finder.js';
import { runtimeOf, type PgQueue } from './pg-queue.js';
import type { JobState, SendOptions } from './types.js';
import { queueName } from './validate.js';

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
