// What a failed attempt records about a handler's throw: the error as jsonb can store it, with what the thrower
// gave (an error's own fields and cause, a value that is not an Error), and whether and when the job may run again.
// Pure: the worker and fail() by hand both use it. It never throws, whatever was thrown (a Proxy, throwing getters):
// a throw here would leave the attempt unsettled until its lease ran out. It keeps no credentials (secrets.ts), and
// the record fits in MAX_ERROR_BYTES (error-size.ts).
import { PermanentJobError } from '../../errors.js';
import { fitError } from './error-size.js';
import { describeEmitter, dropsField, isSecretKey, masks, REDACTED } from './secrets.js';
import { cutText, describeSized, maskedText, ownKeys, put, safely, storableValue, textOf, whyUnreadable, type Budget } from './storable.js';

/**
 * What a failed attempt stores, and how it asks to be retried. `error` holds `name`, `message`, `stack` (an Error's),
 * `retryCount`, the thrown error's own enumerable fields (`code`, `statusCode`, `details`, …) and its `cause`; for a
 * throw that is not an Error, `thrown` (its JavaScript type) and `value` (it, as stored; a plain object's fields are
 * kept as an error's are instead). Without `config`, `request`, `response` and `headers` (a response's numeric
 * `status` is kept as `status` when the error has none), sockets, and with the values of secret-looking keys masked
 * (secrets.ts); at most MAX_ERROR_BYTES as JSON.
 */
export interface FailureInfo {
  error: { name: string; message: string; stack?: string; retryCount?: number; [field: string]: unknown };
  permanent: boolean;
  retryAfterSeconds: number | null;
}

const STACK_LINES = 20;
/** Characters kept of a stack line, of the message, and of the name. */
const STACK_LINE_MAX = 500;
const MESSAGE_MAX = 8_000;
const NAME_MAX = 200;

/** Characters the fields, cause and value may take in all (as counted by storableValue), and one field at most. */
const EXTRAS_MAX = 8_192;
const FIELD_MAX = 2_048;

/** Fields the record sets itself: a thrown value's fields of these names are not copied over them. */
const RESERVED: ReadonlySet<string> = new Set(['name', 'message', 'stack', 'retryCount', 'thrown', 'value', 'cause']);

/** Fields of a thrown value looked at, at most (the rest are not walked). */
const FIELDS_LOOKED_AT = 100;

/** Coerces anything thrown (strings, objects, undefined) into the error record a failed attempt keeps. */
export function describeFailure(thrown: unknown, retryCount?: number): FailureInfo {
  return safely(
    () => describe(thrown, retryCount),
    (err) => ({
      error: { name: 'Error', message: `non-Error thrown, and it could not be read: ${whyUnreadable(err)}`, retryCount },
      permanent: false,
      retryAfterSeconds: null,
    }),
  );
}

function describe(thrown: unknown, retryCount: number | undefined): FailureInfo {
  const isError = thrown instanceof Error;
  const object = typeof thrown === 'object' && thrown !== null ? (thrown as Record<string, unknown>) : null;
  const read = (key: string): unknown => (object ? safely(() => object[key], whyUnreadable) : undefined);
  // Read once each (getters may be costly or change). An Error's name and message as text (never converted in
  // full: a message may be a 100 MB Buffer); another object's only when they are strings.
  const rawName = read('name');
  const rawMessage = read('message');
  const text = (v: unknown): string | null => (isError ? textOf(v) : typeof v === 'string' ? v : null);
  // A plain object's (or an error's) fields; an array, a Map, a Set, a Date, a Buffer, a typed array or an event
  // emitter (a socket, a client: describeEmitter) is kept as a value below.
  const budget: Budget = { left: EXTRAS_MAX };
  const byFields =
    object !== null &&
    !Array.isArray(object) &&
    !(object instanceof Map || object instanceof Set || object instanceof Date) &&
    describeSized(object) === null &&
    (isError || describeEmitter(object) === null);
  const fields: Record<string, unknown> = {};
  if (byFields) copyFields(fields, object, budget);
  const message = isError
    ? text(rawMessage)!
    : typeof thrown === 'string'
      ? thrown
      : (text(rawMessage) ??
        `non-Error thrown: ${JSON.stringify(byFields ? fields : storableValue(thrown, { left: 200 })) ?? typeof thrown}`);
  const error: FailureInfo['error'] = { name: cutText(text(rawName) ?? 'Error', NAME_MAX), message: maskedText(message, MESSAGE_MAX) };
  // V8 writes an Error's stack when it is first read, from its name and message: when either is not text (a
  // Buffer, say), reading it would convert that in full, so it is left out.
  const stack = isError && typeof rawName === 'string' && typeof rawMessage === 'string' ? read('stack') : undefined;
  if (typeof stack === 'string') {
    error.stack = stack
      .split('\n', STACK_LINES)
      .map((line) => maskedText(line, STACK_LINE_MAX))
      .join('\n');
  }
  error.retryCount = retryCount;
  for (const key of Object.keys(fields)) put(error, key, fields[key]);
  const cause = isError ? read('cause') : undefined;
  if (cause !== undefined) error.cause = storableValue(cause, budget);
  if (!isError) {
    error.thrown = thrown === null ? 'null' : Array.isArray(thrown) ? 'array' : typeof thrown;
    // A plain object's fields are kept above; any other value is kept as it is.
    if (!byFields) error.value = storableValue(thrown, budget) ?? null;
  }
  const retryAfter = read('retryAfterSeconds');
  return {
    error: fitError(error),
    permanent: thrown instanceof PermanentJobError || read('retryable') === false,
    retryAfterSeconds:
      typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter >= 0
        ? Math.min(Math.ceil(retryAfter), 2_147_483_647)
        : null,
  };
}

/**
 * Copies the own enumerable fields of what was thrown into the record, made storable: each within FIELD_MAX, all
 * within the budget; a field that finds the budget spent is left out (and counted), and the next is still tried.
 * Its `config`, `request`, `response` and `headers` are left out (dropsField), and the values of its secret-looking
 * keys masked (isSecretKey).
 */
function copyFields(error: Record<string, unknown>, object: Record<string, unknown>, budget: Budget): void {
  let left = 0;
  const keys = ownKeys(object, FIELDS_LOOKED_AT + 1);
  // one more than are looked at: whether there are more
  const more = keys.length > FIELDS_LOOKED_AT;
  if (more) keys.pop();
  for (const key of keys) {
    if (RESERVED.has(key)) continue;
    if (dropsField(key)) {
      if (key === 'response') keepStatus(error, object);
      continue;
    }
    const name = cutText(key, NAME_MAX);
    const share: Budget = { left: Math.min(FIELD_MAX, budget.left - name.length) };
    if (share.left <= 0) {
      left++;
      continue;
    }
    const before = share.left;
    const raw = safely(() => object[key], whyUnreadable);
    const value = isSecretKey(key) && masks(raw) ? REDACTED : storableValue(raw, share);
    budget.left -= before - share.left;
    if (value === undefined) continue;
    budget.left -= name.length;
    put(error, name, value);
  }
  if (left > 0 || more) put(error, '…', `${left > 0 ? `${left} field(s)${more ? ' and more' : ''}` : 'more fields'} not stored`);
}

/**
 * The HTTP status of a response that is not stored (an HTTP client's error, whose own `status` older clients do not
 * set), as the record's `status`, when the thrown value has no `status` of its own: what failed stays readable.
 */
function keepStatus(error: Record<string, unknown>, object: Record<string, unknown>): void {
  if (
    Object.hasOwn(error, 'status') ||
    safely(
      () => Object.hasOwn(object, 'status'),
      () => true,
    )
  )
    return;
  const status = safely(
    () => (object.response as { status?: unknown } | null | undefined)?.status,
    () => undefined,
  );
  if (typeof status === 'number' && Number.isInteger(status)) put(error, 'status', status);
}
