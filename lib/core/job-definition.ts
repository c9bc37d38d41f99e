// Typed jobs: a job declared once, `defineJob<T>(name, options)`, names its queue and the type of its payload
// wherever a queue name goes (send, enqueue, insert, work, @QueueHandler), so a wrong payload is a compile error;
// with a `schema` (any object with `parse`: zod's, or one of your own) it is also checked at run time, at the send and
// before the handler runs.
import { InvalidOptionError, InvalidPayloadError, PermanentJobError } from './errors.js';
import { DEFINE_JOB_OPTIONS } from './config/option-keys.js';
import { parseQueueOptions } from './config/options.js';
import type { QueueOptions, SendOptions } from './types.js';
import { noUnknownKeys, queueName } from './config/validate.js';

/**
 * What a payload is checked with: `parse` returns the payload (maybe cleaned) or throws. What it returns is stored,
 * and a worker parses it again before the handler runs (a job sent by its plain name was never checked): a schema
 * must accept its own output (zod's transforms that change a value's type do not).
 */
export interface JobSchema<T> {
  parse(data: unknown): T;
}

/** A declared job: its queue's name, the queue's options, and the schema its payloads must pass, if any. */
export interface JobDefinition<T = unknown> {
  readonly name: string;
  /** The queue's options: @QueueHandler(job) creates its queue with them (send and work need the queue to exist). */
  readonly options: QueueOptions;
  readonly schema: JobSchema<T> | null;
  /** Never set: carries the payload's type. */
  readonly __data?: T;
}

/** A queue by its name, or a declared job (which also gives the payload's type). */
export type JobName<T = unknown> = string | JobDefinition<T>;

/** The payload type of a declared job. */
export type JobData<J> = J extends JobDefinition<infer T> ? T : never;

/**
 * Declares a job: `defineJob<{ userId: string }>('welcome-email', { retryLimit: 5 })`, or with a schema the type
 * comes from, `defineJob('welcome-email', { schema: z.object({ userId: z.string() }) })`.
 */
export function defineJob<T = unknown>(name: string, options: QueueOptions & { schema?: JobSchema<T> } = {}): JobDefinition<T> {
  queueName('name', name);
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'an object of queue options', options);
  noUnknownKeys('options', options as Record<string, unknown>, DEFINE_JOB_OPTIONS.keys, DEFINE_JOB_OPTIONS.hints);
  const { schema, ...queueOptions } = options;
  if (schema !== undefined && (schema === null || typeof (schema as { parse?: unknown }).parse !== 'function'))
    throw new InvalidOptionError('options.schema', 'an object with a parse(data) method (a zod schema, or one of your own)', schema);
  // checked here, where they are written, and not first where a @QueueHandler or forFeature uses them
  parseQueueOptions(queueOptions, 'options');
  return Object.freeze({ name, options: Object.freeze({ ...queueOptions }), schema: schema ?? null });
}

/** Whether `value` is a declared job (a name is a string). */
export function isJobDefinition(value: unknown): value is JobDefinition {
  return typeof value === 'object' && value !== null && typeof (value as JobDefinition).name === 'string' && 'schema' in value;
}

/** The message of what a schema threw, on one line. */
function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

/** The queue's name of a name or a declared job. */
export function jobNameOf(job: JobName<unknown>): string {
  if (typeof job === 'string') return job;
  if (!isJobDefinition(job)) throw new InvalidOptionError('name', 'a queue name or a job of defineJob()', job);
  return job.name;
}

/** The queue's name, and `data` as its schema returns it: InvalidPayloadError (naming `field`) when it refuses. */
export function resolveJob<T>(job: JobName<T>, data: unknown, field = 'data'): { name: string; data: unknown } {
  if (typeof job === 'string') return { name: job, data };
  const name = jobNameOf(job);
  if (!job.schema) return { name, data };
  try {
    return { name: job.name, data: job.schema.parse(data) };
  } catch (err) {
    throw new InvalidPayloadError(field, messageOf(err), `accepted by the schema of job "${job.name}"`);
  }
}

/** A worker's check of a claimed job's payload: a payload the schema refuses fails the job for good (no retry). */
export function parseForHandler<T>(job: JobDefinition<T>, data: unknown): unknown {
  if (!job.schema) return data;
  try {
    return job.schema.parse(data);
  } catch (err) {
    throw new PermanentJobError(`the payload is not accepted by the schema of job "${job.name}": ${messageOf(err)}`);
  }
}

/**
 * A worker's handler for a declared job: each claimed job's payload passes the job's schema before the handler
 * sees it (as the schema returns it). One it refuses fails for good: a single job's handler does not run; in a
 * batch, that job is failed on its own and the handler gets the others (none left: it is not called).
 */
export function checkedHandler<H extends (arg: never) => unknown>(job: JobDefinition<unknown>, handler: H, batch: boolean): H {
  if (!job.schema) return handler;
  const checked = wrapped(job, handler, batch);
  // the task the cluster registry and the dashboard show is the handler's name
  Object.defineProperty(checked, 'name', { value: handler.name });
  return checked;
}

function wrapped<H extends (arg: never) => unknown>(job: JobDefinition<unknown>, handler: H, batch: boolean): H {
  const parse = (j: { data: unknown }) => (j.data = parseForHandler(job, j.data));
  if (!batch)
    return ((j: { data: unknown }) => {
      parse(j);
      return (handler as unknown as (j: unknown) => unknown)(j);
    }) as unknown as H;
  return (async (jobs: { data: unknown; fail(error: unknown): Promise<void> }[]) => {
    const accepted = [];
    for (const j of jobs) {
      try {
        parse(j);
        accepted.push(j);
      } catch (err) {
        await j.fail(err);
      }
    }
    if (accepted.length > 0) return (handler as unknown as (jobs: unknown) => unknown)(accepted);
  }) as unknown as H;
}

/**
 * send()'s payload and options: the payload may be left out only where it may be undefined (a queue named by a
 * string, a job declared without a type); a declared job's payload must be given.
 */
export type PayloadArgs<T> = undefined extends T ? [data?: T, options?: SendOptions] : [data: T, options?: SendOptions];
