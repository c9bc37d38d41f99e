// Values made storable in a jsonb column, whatever a handler threw: the fields of an error (`code`, `statusCode`, a
// validation's `details`), or a thrown value that is not an Error. Pure; used by describeFailure (failure.ts).

/** Text as jsonb can store it: NUL written out, lone surrogates replaced (U+FFFD). */
export function storableText(text: string): string {
  return (text.replaceAll('\u0000', '\\u0000') as unknown as { toWellFormed(): string }).toWellFormed();
}

/** How deep objects and arrays are followed; deeper ones are described in one line. */
const MAX_DEPTH = 4;
/** Entries kept of one object or array; the rest are counted, not stored. */
const MAX_ENTRIES = 50;
/** Characters kept of one string. */
const MAX_STRING = 2_000;

/**
 * `value` as JSON that jsonb stores: strings made storable and cut at MAX_STRING, numbers that JSON cannot hold
 * (NaN, Infinity) and bigints as text, a Date as ISO text, an Error as its name, message and own fields, cycles
 * as "[Circular]", functions and symbols left out (undefined). Objects and arrays are followed MAX_DEPTH deep and
 * keep MAX_ENTRIES entries (an array's rest counted in a last "… n more" entry, an object's in a "…" key).
 */
export function storableValue(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  switch (typeof value) {
    case 'string':
      return storableText(value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value);
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
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
  const object = value;
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString();
  if (seen.has(object)) return '[Circular]';
  if (depth >= MAX_DEPTH) return Array.isArray(object) ? `[an array of ${object.length}]` : '[an object]';
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const kept = object.slice(0, MAX_ENTRIES).map((v) => storableValue(v, depth + 1, seen) ?? null);
      return object.length > MAX_ENTRIES ? [...kept, `… ${object.length - MAX_ENTRIES} more`] : kept;
    }
    const out: Record<string, unknown> = {};
    if (object instanceof Error) {
      out.name = storableText(String(object.name));
      out.message = storableValue(String(object.message), depth + 1, seen);
    }
    const keys = Object.keys(object);
    for (const key of keys.slice(0, MAX_ENTRIES)) {
      const v = storableValue(readField(object, key), depth + 1, seen);
      if (v !== undefined) out[storableText(key)] = v;
    }
    if (keys.length > MAX_ENTRIES) out['…'] = `${keys.length - MAX_ENTRIES} more`;
    return out;
  } finally {
    seen.delete(object);
  }
}

/** A field read that a throwing getter cannot turn into a second failure. */
function readField(object: object, key: string): unknown {
  try {
    return (object as Record<string, unknown>)[key];
  } catch (err) {
    return `[a getter threw: ${err instanceof Error ? err.message : String(err)}]`;
  }
}
