// What an operator's screen or script may see of a job: the dashboard and the admin API both pass every job's data,
// output and error through the user's `redact` before it leaves the process. Pure; no HTTP, no Nest.
import { InvalidOptionError } from '../errors.js';
import type { JobWithMetadata } from '../types.js';

/** A job's last error as redact may show it: its name, message and stack (null hides them). */
export type RedactedError = Pick<NonNullable<JobWithMetadata['lastError']>, 'name' | 'message' | 'stack'> | null;

/**
 * What may be shown of a job: `redact(job)`'s answer, whose `data`, `output` and `sourceOutput` (a dead-letter copy's
 * source's output) are shown in place of the stored ones (a field it leaves out is not shown at all); a `lastError` in
 * it replaces the stored error's name, message and stack (null hides them). Called with a copy, synchronously: a
 * promise as the answer hides everything.
 */
export type Redact = (job: Readonly<JobWithMetadata>) => {
  data?: unknown;
  output?: unknown;
  sourceOutput?: unknown;
  lastError?: RedactedError;
};

/** A value that may be shown, or why it is not. */
export type Shown<T> = { value: T } | { hidden: string };

/** A job's data, output and last error, as redact lets them out. */
export interface RedactedJob {
  data: Shown<unknown>;
  output: Shown<unknown>;
  sourceOutput: Shown<unknown>;
  lastError: Shown<RedactedError>;
}

/** How the kinds of function that answer later are named in the refusal. */
const FUNCTION_KINDS: Readonly<Record<string, string>> = {
  '[object AsyncFunction]': 'an async function',
  '[object GeneratorFunction]': 'a generator function',
  '[object AsyncGeneratorFunction]': 'an async generator function',
};

/** Checks the `redact` option of a module: a synchronous function, or absent. */
export function redactOption(value: unknown): Redact | undefined {
  if (value === undefined) return undefined;
  const kind = typeof value === 'function' ? Object.prototype.toString.call(value) : '';
  if (kind !== '[object Function]')
    throw new InvalidOptionError(
      'redact',
      'a synchronous function (job) => ({ data?, output?, lastError? }): every page and answer is made from what it returns at once',
      kind === '' ? value : (FUNCTION_KINDS[kind] ?? kind),
    );
  return value as Redact;
}

/**
 * `job`'s data, outputs and last error as `redact` lets them out (all as stored without it). A throw hides them all
 * and says only the thrown error's name (its message may quote what redact was hiding, as JSON.parse's does); so
 * does an answer that is not an object or is a promise.
 */
export function redactJob(job: JobWithMetadata, redact: Redact | undefined): RedactedJob {
  if (!redact)
    return {
      data: { value: job.data },
      output: { value: job.output },
      sourceOutput: { value: job.sourceOutput },
      lastError: { value: job.lastError },
    };
  let answer: unknown;
  try {
    answer = redact(structuredClone(job));
  } catch (err) {
    return hideAll(`hidden: redact(job) threw ${err instanceof Error ? err.name : typeof err}`);
  }
  if (answer !== null && typeof answer === 'object' && typeof (answer as { then?: unknown }).then === 'function') {
    // nothing waits for it, so its failure must not become an unhandled rejection
    (answer as Promise<unknown>).then(undefined, () => undefined);
    return hideAll('hidden: redact(job) returned a promise (it must answer at once)');
  }
  if (answer === null || typeof answer !== 'object')
    return hideAll(`hidden: redact(job) returned ${answer === null ? 'null' : typeof answer}`);
  const a = answer as Record<string, unknown>;
  const pick = (key: 'data' | 'output' | 'sourceOutput'): Shown<unknown> =>
    Object.hasOwn(a, key) ? { value: a[key] } : { hidden: 'hidden by redact(job)' };
  return {
    data: pick('data'),
    output: pick('output'),
    sourceOutput: pick('sourceOutput'),
    lastError: Object.hasOwn(a, 'lastError') ? { value: errorOf(a.lastError) } : { value: job.lastError },
  };
}

function hideAll(why: string): RedactedJob {
  return { data: { hidden: why }, output: { hidden: why }, sourceOutput: { hidden: why }, lastError: { hidden: why } };
}

/** redact's lastError as shown: only its name, message and stack, as text. */
function errorOf(value: unknown): RedactedError {
  if (value === null || typeof value !== 'object') return null;
  const e = value as Record<string, unknown>;
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : '',
    ...(typeof e.stack === 'string' ? { stack: e.stack } : {}),
  };
}

/**
 * A failure's message as a list (the dashboard's feed and problems, which hold only the message) may show it:
 * redact is called with the job as far as the list knows it (id, name, state and lastError; no data or output).
 */
export function redactMessage(
  item: { id: string; queue: string; message: string; at: number | null; attempt: number | null },
  redact: Redact | undefined,
): string {
  if (!redact) return item.message;
  const lastError = { name: 'Error', message: item.message, on: item.at === null ? null : new Date(item.at), attempt: item.attempt };
  const partial = { id: item.id, name: item.queue, state: 'failed', lastError } as unknown as JobWithMetadata;
  const shown = redactJob(partial, redact).lastError;
  if ('hidden' in shown) return shown.hidden;
  return shown.value === null ? 'hidden by redact(job)' : shown.value.message;
}
