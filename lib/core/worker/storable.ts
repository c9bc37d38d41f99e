// Values made storable in a jsonb column, whatever a handler threw: the fields of an error (`code`, `statusCode`, a
// validation's `details`), its cause, or a thrown value that is not an Error. Pure; used by describeFailure
// (failure.ts). Nothing here throws, and nothing walks more than it keeps: a thrown value may be a Proxy, carry
// throwing getters, or hold a 50 MB Buffer, and this runs on the worker's event loop.

/** Text as jsonb can store it: NUL written out, lone surrogates replaced (U+FFFD). */
export function storableText(text: string): string {
  return (text.replaceAll('\u0000', '\\u0000') as unknown as { toWellFormed(): string }).toWellFormed();
}

/** `text` cut to `max` characters (with an ellipsis), then made storable; a cut never leaves half a surrogate pair. */
export function cutText(text: string, max: number): string {
  return storableText(text.length > max ? `${text.slice(0, Math.max(0, max))}…` : text);
}

/** Reads `read()`, or describes why it could not be read: a getter, a Proxy trap or a conversion may throw. */
export function safely<T>(read: () => T, fallback: (err: unknown) => T): T {
  try {
    return read();
  } catch (err) {
    return fallback(err);
  }
}

/** What a throw while reading a value says, as stored text: never itself a throw. */
export function whyUnreadable(err: unknown): string {
  const message = safely(
    () => (err instanceof Error ? String(err.message) : typeof err === 'string' ? err : typeof err),
    () => 'unreadable',
  );
  return `[could not be read: ${cutText(message, 200)}]`;
}

/** How deep objects and arrays are followed; deeper ones are described in one line. */
const MAX_DEPTH = 4;
/** Entries kept of one object, array, Map or Set; the rest are not walked. */
const MAX_ENTRIES = 50;
/** Characters kept of one string value. */
const MAX_STRING = 2_000;
/** Characters kept of one key. */
const MAX_KEY = 200;

/**
 * How many characters a value may still take as JSON (roughly: strings and keys are counted, punctuation is not).
 * Shared by one value's whole walk; once spent, what is left is stored as "[…]".
 */
export interface Budget {
  left: number;
}

/**
 * `value` as JSON that jsonb stores, within `budget`: strings made storable and cut (MAX_STRING, and what the budget
 * leaves); numbers that JSON cannot hold (NaN, Infinity) and bigints as text; a Date as ISO text; a value with its
 * own `toJSON` (Decimal, a Luxon date) as what that returns; an Error as its name, message and own fields; a
 * Buffer, typed array or ArrayBuffer as its kind and size; a Map or Set as an array of its entries; cycles as
 * "[Circular]"; functions and symbols left out (undefined). Objects and arrays are followed MAX_DEPTH deep and keep
 * MAX_ENTRIES entries. Never throws: what cannot be read is described (whyUnreadable).
 */
export function storableValue(value: unknown, budget: Budget, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (budget.left <= 0) return '[…]';
  switch (typeof value) {
    case 'string': {
      const text = cutText(value, Math.min(MAX_STRING, budget.left));
      budget.left -= text.length;
      return text;
    }
    case 'number':
      budget.left -= 8;
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return storableValue(value.toString(), budget, depth, seen);
    case 'boolean':
      budget.left -= 5;
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
    (err) => whyUnreadable(err),
  );
}

function storableObject(object: object, budget: Budget, depth: number, seen: WeakSet<object>): unknown {
  if (object instanceof Date) return storableValue(Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString(), budget);
  if (ArrayBuffer.isView(object)) return storableValue(`[${object.constructor.name} of ${object.byteLength} bytes]`, budget);
  if (object instanceof ArrayBuffer) return storableValue(`[ArrayBuffer of ${object.byteLength} bytes]`, budget);
  if (seen.has(object)) return '[Circular]';
  if (depth >= MAX_DEPTH) return storableValue(Array.isArray(object) ? `[an array of ${object.length}]` : '[an object]', budget);
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return storableValue(toJSON.call(object) as unknown, budget, depth + 1, seen);
  seen.add(object);
  try {
    if (Array.isArray(object)) return storableList(object.slice(0, MAX_ENTRIES + 1), budget, depth, seen);
    if (object instanceof Map) return storableList(firstOf(object.entries(), MAX_ENTRIES + 1), budget, depth, seen);
    if (object instanceof Set) return storableList(firstOf(object.values(), MAX_ENTRIES + 1), budget, depth, seen);
    const out: Record<string, unknown> = {};
    if (object instanceof Error) {
      put(
        out,
        'name',
        storableValue(
          safely(() => String(object.name), whyUnreadable),
          budget,
        ),
      );
      put(
        out,
        'message',
        storableValue(
          safely(() => String(object.message), whyUnreadable),
          budget,
        ),
      );
    }
    let kept = 0;
    for (const key of ownKeys(object, MAX_ENTRIES + 1)) {
      if (kept === MAX_ENTRIES) {
        put(out, '…', 'more entries, not stored');
        break;
      }
      const field = storableValue(
        safely(() => (object as Record<string, unknown>)[key], whyUnreadable),
        budget,
        depth + 1,
        seen,
      );
      if (field === undefined) continue;
      const name = cutText(key, MAX_KEY);
      budget.left -= name.length;
      put(out, name, field);
      kept++;
    }
    return out;
  } finally {
    seen.delete(object);
  }
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

/** Up to `n` own enumerable string keys of `object`, without listing them all (a typed array's are its indices). */
export function ownKeys(object: object, n: number): string[] {
  const keys: string[] = [];
  for (const key in object) {
    if (keys.length >= n) break;
    if (Object.prototype.hasOwnProperty.call(object, key)) keys.push(key);
  }
  return keys;
}

/** Sets an own enumerable property, whatever its name (`__proto__` included: a plain assignment would set the prototype). */
export function put(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}
