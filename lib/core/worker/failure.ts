// What a failed attempt records about a handler's throw: the error as jsonb can store it, with what the thrower
// gave (an error's own fields, a value that is not an Error), and whether and when the job may run again. Pure:
// the worker and fail() by hand both use it.
import { describeValue, PermanentJobError } from '../errors.js';
import { storableText, storableValue } from './storable.js';

/**
 * What a failed attempt stores, and how it asks to be retried. `error` holds `name`, `message`, `stack` (an Error's),
 * `retryCount`, the thrown error's own enumerable fields (`code`, `statusCode`, `details`, …) and its `cause`; for a
 * throw that is not an Error, `thrown` (its JavaScript type) and `value` (it, as stored; a plain object's fields are
 * kept as an error's are instead).
 */
export interface FailureInfo {
  error: { name: string; message: string; stack?: string; retryCount?: number; [field: string]: unknown };
  permanent: boolean;
  retryAfterSeconds: number | null;
}

const STACK_LINES = 20;

/** Characters the thrown value's fields may take, as JSON, in all; fields past it are counted, not stored. */
const FIELDS_MAX_CHARS = 8_192;

/** The record's own keys: a thrown value's fields of these names are not copied over them. */
const RESERVED: ReadonlySet<string> = new Set(['name', 'message', 'stack', 'retryCount', 'thrown', 'value', 'cause']);

/** Coerces anything thrown (strings, objects, undefined) into the error record a failed attempt keeps. */
export function describeFailure(thrown: unknown, retryCount?: number): FailureInfo {
  const isError = thrown instanceof Error;
  const object = typeof thrown === 'object' && thrown !== null ? (thrown as Record<string, unknown>) : null;
  const text = (key: 'name' | 'message') => (object && typeof object[key] === 'string' ? object[key] : null);
  const name = isError ? String(thrown.name) : (text('name') ?? 'Error');
  const message = isError
    ? String(thrown.message)
    : typeof thrown === 'string'
      ? thrown
      : (text('message') ?? `non-Error thrown: ${describeValue(thrown)}`);
  const error: FailureInfo['error'] = { name: storableText(name), message: storableText(message) };
  if (isError && thrown.stack !== undefined) error.stack = storableText(thrown.stack.split('\n').slice(0, STACK_LINES).join('\n'));
  error.retryCount = retryCount;
  if (object && !Array.isArray(object)) Object.assign(error, ownFields(object));
  if (isError && thrown.cause !== undefined) error.cause = storableValue(thrown.cause);
  if (!isError) {
    error.thrown = thrown === null ? 'null' : Array.isArray(thrown) ? 'array' : typeof thrown;
    // A plain object's fields are kept above; any other value is kept as it is.
    if (!object || Array.isArray(object)) error.value = storableValue(thrown) ?? null;
  }
  const retryAfter = object?.retryAfterSeconds;
  return {
    error,
    permanent: thrown instanceof PermanentJobError || object?.retryable === false,
    retryAfterSeconds:
      typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter >= 0
        ? Math.min(Math.ceil(retryAfter), 2_147_483_647)
        : null,
  };
}

/** The own enumerable fields of what was thrown, made storable, within FIELDS_MAX_CHARS. */
function ownFields(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let used = 0;
  const keys = Object.keys(object).filter((key) => !RESERVED.has(key));
  for (const [i, key] of keys.entries()) {
    let value: unknown;
    try {
      value = storableValue(object[key]);
    } catch (err) {
      value = `[a getter threw: ${err instanceof Error ? err.message : String(err)}]`;
    }
    if (value === undefined) continue;
    used += key.length + JSON.stringify(value).length;
    if (used > FIELDS_MAX_CHARS) {
      out['…'] = `${keys.length - i} more field(s) not stored`;
      break;
    }
    out[storableText(key)] = value;
  }
  return out;
}
