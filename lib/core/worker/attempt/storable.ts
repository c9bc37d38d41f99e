// Values made storable in a jsonb column, whatever a handler threw: the fields of an error (`code`, `statusCode`, a
// validation's `details`), its cause, or a thrown value that is not an Error. Pure; used by describeFailure
// (failure.ts). Nothing here throws, and nothing converts or walks more than it keeps: a thrown value may be a
// Proxy, carry throwing getters, hold a 50 MB Buffer or share one array from many places, and this runs on the
// worker's event loop. (Listing an object's own keys is the one walk JavaScript cannot bound: an object with a
// million own keys costs a second or so.) Nor does it keep credentials (secrets.ts): headers, an HTTP client's
// request and response, sockets, and values under secret-looking keys are left out or masked as it walks.
import { describeEmitter, dropsField, isSecretKey, maskUrlPasswords, masks, REDACTED } from './secrets.js';

/** Text as jsonb can store it: NUL written out, lone surrogates replaced (U+FFFD). */
export function storableText(text: string): string {
  return (text.replaceAll('\u0000', '\\u0000') as unknown as { toWellFormed(): string }).toWellFormed();
}

/** Characters `text` takes written as JSON (control characters are escaped), without its quotes. */
function jsonLength(text: string): number {
  return JSON.stringify(text).length - 2;
}

/**
 * `text` made storable and cut so that, written as JSON, it takes at most `max` characters (an ellipsis marks a
 * cut). Only the first `max` characters are ever looked at, however long the text.
 */
export function cutText(text: string, max: number): string {
  if (max <= 0) return text.length === 0 ? '' : '…';
  let keep = Math.min(text.length, max);
  for (;;) {
    const cut = storableText(keep < text.length ? `${text.slice(0, keep)}…` : text.slice(0, keep));
    const length = jsonLength(cut);
    if (length <= max || keep === 0) return cut;
    // escapes take more than a character each: keep the share of the text that fits
    keep = Math.max(0, Math.min(keep - 1, Math.floor((keep * max) / length) - 1));
  }
}

/**
 * cutText of `text` with the passwords of its URLs masked (maskUrlPasswords). The mask reads a little past the cut
 * (MASK_LOOKAHEAD), never the whole of a long text.
 */
export function maskedText(text: string, max: number): string {
  const head = text.length > max + MASK_LOOKAHEAD ? text.slice(0, max + MASK_LOOKAHEAD) : text;
  return cutText(maskUrlPasswords(head), max);
}

/** Reads `read()`, or what `fallback` makes of its throw: a getter, a Proxy trap or a conversion may throw. */
export function safely<T>(read: () => T, fallback: (err: unknown) => T): T {
  try {
    return read();
  } catch (err) {
    return fallback(err);
  }
}

/** What a throw while reading a value says, as stored text: never itself a throw, and never a long conversion. */
export function whyUnreadable(err: unknown): string {
  const message = safely(
    () => (typeof err === 'string' ? err : err instanceof Error && typeof err.message === 'string' ? err.message : typeof err),
    () => 'unreadable',
  );
  return `[could not be read: ${cutText(message, 200)}]`;
}

/** How deep objects and arrays are followed; deeper ones are described in one line. */
const MAX_DEPTH = 4;
/** Entries kept of one object, array, Map or Set; the rest are not walked. */
const MAX_ENTRIES = 50;
/** Characters (as JSON) kept of one string value, and of one key. */
const MAX_STRING = 2_000;
const MAX_KEY = 200;
/**
 * Characters past a cut that the mask of URL passwords still reads, so that a cut falling inside a URL's password
 * cannot keep its start (maskedText).
 */
const MASK_LOOKAHEAD = 256;
/** Digits past which a bigint is described rather than written out (writing it costs more than its size). */
const BIGINT_LIMIT = 10n ** 100n;

/**
 * How many characters a value may still take as JSON. Every value visited costs at least VISIT (punctuation, a
 * null, a marker), so the walk itself is bounded by the budget, not only what it keeps: a shared array reached
 * from many places is paid for at each. Once spent, what is left is stored as "[…]".
 */
export interface Budget {
  left: number;
}
const VISIT = 2;

/**
 * `value` as JSON that jsonb stores, within `budget`: strings made storable and cut (MAX_STRING, and what the budget
 * leaves, URL passwords masked); numbers that JSON cannot hold (NaN, Infinity) as text; a bigint as text up to 100
 * digits; a Date as ISO text; a value with its own `toJSON` (Decimal, a Luxon date) as what that returns, but an
 * Error as its name, message and own fields (an HTTP client's error's toJSON returns its request's settings); a
 * Buffer, typed array or ArrayBuffer as its kind and size; a socket or other event emitter as its kind; a Map or Set
 * as an array of its entries; cycles as "[Circular]"; functions and symbols left out (undefined). Objects and arrays
 * are followed MAX_DEPTH deep and keep MAX_ENTRIES entries. What may hold credentials is not kept (secrets.ts:
 * dropsField, isSecretKey). Never throws: what cannot be read is described (whyUnreadable).
 */
export function storableValue(value: unknown, budget: Budget, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  budget.left -= VISIT;
  if (budget.left < 0) return '[…]';
  switch (typeof value) {
    case 'string':
      return spend(maskedText(value, Math.min(MAX_STRING, budget.left)), budget);
    case 'number':
      budget.left -= 8;
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return spend(value > -BIGINT_LIMIT && value < BIGINT_LIMIT ? value.toString() : '[a bigint of more than 100 digits]', budget);
    case 'boolean':
      return value;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break;
  }
  if (value === null) return null;
  return safely(
    () => storableObject(value, budget, depth, seen),
    (err) => spend(whyUnreadable(err), budget),
  );
}

/** Charges a stored string to the budget. */
function spend(text: string, budget: Budget): string {
  budget.left -= text.length;
  return text;
}

function storableObject(object: object, budget: Budget, depth: number, seen: WeakSet<object>): unknown {
  if (object instanceof Date) return storableValue(Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString(), budget);
  const sized = describeSized(object);
  if (sized !== null) return spend(sized, budget);
  const emitter = describeEmitter(object);
  if (emitter !== null) return spend(emitter, budget);
  if (seen.has(object)) return spend('[Circular]', budget);
  if (depth >= MAX_DEPTH) return spend(Array.isArray(object) ? '[an array]' : '[an object]', budget);
  const isError = object instanceof Error;
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function' && !isError) return storableValue(toJSON.call(object) as unknown, budget, depth + 1, seen);
  seen.add(object);
  try {
    if (Array.isArray(object)) return storableList(object.slice(0, MAX_ENTRIES + 1), budget, depth, seen);
    if (object instanceof Map) return storableList(maskedEntries(firstOf(object.entries(), MAX_ENTRIES + 1)), budget, depth, seen);
    if (object instanceof Set) return storableList(firstOf(object.values(), MAX_ENTRIES + 1), budget, depth, seen);
    const out: Record<string, unknown> = {};
    if (isError) {
      put(out, 'name', storableValue(textOf(safely(() => object.name, whyUnreadable)), budget));
      put(out, 'message', storableValue(textOf(safely(() => object.message, whyUnreadable)), budget));
    }
    const keys = ownKeys(object, MAX_ENTRIES + 1);
    for (const key of keys.slice(0, MAX_ENTRIES)) {
      if (dropsField(key)) continue;
      const raw = safely(() => (object as Record<string, unknown>)[key], whyUnreadable);
      const field = isSecretKey(key) && masks(raw) ? REDACTED : storableValue(raw, budget, depth + 1, seen);
      if (field === undefined) continue;
      put(out, spend(cutText(key, MAX_KEY), budget), field);
    }
    if (keys.length > MAX_ENTRIES) put(out, '…', 'more entries, not stored');
    return out;
  } finally {
    seen.delete(object);
  }
}

/** A Map's entries with the values of secret-looking string keys masked, and the dropped fields left out (as an object's). */
function maskedEntries(entries: [unknown, unknown][]): [unknown, unknown][] {
  const out: [unknown, unknown][] = [];
  for (const [key, value] of entries) {
    if (typeof key !== 'string') out.push([key, value]);
    else if (!dropsField(key)) out.push([key, isSecretKey(key) && masks(value) ? REDACTED : value]);
  }
  return out;
}

/** A Buffer, typed array, DataView or ArrayBuffer as its kind and size (never its bytes); null for anything else. */
export function describeSized(object: object): string | null {
  if (ArrayBuffer.isView(object))
    return `[${safely(
      () => object.constructor.name,
      () => 'a view',
    )} of ${object.byteLength} bytes]`;
  if (object instanceof ArrayBuffer) return `[ArrayBuffer of ${object.byteLength} bytes]`;
  return null;
}

/** A name or message as text: a string as it is; anything else described by its type, never converted in full. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : `[${value === null ? 'null' : typeof value}]`;
}

/** The entries of a list, made storable, the one past MAX_ENTRIES said to be more. */
function storableList(items: readonly unknown[], budget: Budget, depth: number, seen: WeakSet<object>): unknown[] {
  const out = items.slice(0, MAX_ENTRIES).map((v) => storableValue(v, budget, depth + 1, seen) ?? null);
  if (items.length > MAX_ENTRIES) out.push('… more entries, not stored');
  return out;
}

/** The first `n` values of an iterator (a Map's or Set's), without walking the rest. */
function firstOf<T>(values: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  for (const v of values) {
    if (out.length >= n) break;
    out.push(v);
  }
  return out;
}

/** Up to `n` own enumerable string keys of `object` (inherited ones are not listed); none when they cannot be read. */
export function ownKeys(object: object, n: number): string[] {
  return safely(
    () => Object.keys(object).slice(0, n),
    () => [],
  );
}

/** Sets an own enumerable property, whatever its name (`__proto__` included: a plain assignment would set the prototype). */
export function put(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}
