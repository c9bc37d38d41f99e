import { InvalidOptionError, InvalidPayloadError, PayloadTooLargeError } from '../errors.js';

/** Queue names: what may appear in a URL path segment, a log line and a NOTIFY payload without quoting. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_.\-/:]{1,100}$/;

/** Longest a single option may defer or keep something: ten years, in seconds. */
export const MAX_SECONDS = 315_360_000;

const INT4_MAX = 2_147_483_647;

function range(min: number, max: number): string {
  if (max >= INT4_MAX) return `an integer >= ${min}`;
  return `an integer from ${min} to ${max}`;
}

/** An integer within [min, max]; rejects NaN, Infinity, fractions and non-numbers. */
export function int(field: string, value: unknown, min: number, max = INT4_MAX): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(field, range(min, max), value);
  }
  return value;
}

/** Like `int`, but `undefined` stays `undefined` (the option falls back to its default). */
export function optInt(field: string, value: unknown, min: number, max = INT4_MAX): number | undefined {
  return value === undefined ? undefined : int(field, value, min, max);
}

/** Like `optInt`, but `null` is kept: it means "none" (for example no heartbeat). */
export function nullableInt(field: string, value: unknown, min: number, max = INT4_MAX): number | null | undefined {
  if (value === null) return null;
  return optInt(field, value, min, max);
}

export function optBool(field: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new InvalidOptionError(field, 'true or false', value);
  return value;
}

export function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidOptionError(field, `one of ${allowed.map((a) => `"${a}"`).join(', ')}`, value);
  }
  return value as T;
}

export function queueName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !QUEUE_NAME_PATTERN.test(value)) {
    throw new InvalidOptionError(field, 'a string of 1 to 100 characters from [A-Za-z0-9_.-/:]', value);
  }
  return value;
}

/**
 * A non-empty string of at most `max` characters, or undefined. A key is stored in a text column and compared: a NUL
 * character is refused (PostgreSQL's text cannot hold one, and the driver's error would say nothing of the field), and
 * so is a lone UTF-16 surrogate (the driver would store U+FFFD instead, and two keys would become one).
 */
export function optKey(field: string, value: unknown, max = 1000): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new InvalidOptionError(field, `a string of 1 to ${max} characters`, value);
  }
  storableKey(field, value);
  return value;
}

/** `value`, a string stored as text, refused (InvalidOptionError naming `field`) when PostgreSQL cannot store it as given. */
export function storableKey(field: string, value: string): string {
  const bad = badJsonbText(value);
  if (bad !== null) throw new InvalidOptionError(field, 'text without NUL characters (\\u0000) or lone UTF-16 surrogates', value);
  return value;
}

/** Rejects anything that is not a plain options object (arrays, strings, class instances are mistakes). */
export function record(field: string, value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidOptionError(field, 'an object', value);
  return value as Record<string, unknown>;
}

/**
 * Names the first key of `value` that is not in `known`: a misspelt option must not pass silently. `hints` says what
 * to write instead of a key a user is likely to bring (another library's name for one of ours, an option given in
 * the wrong place); a key one or two letters off a known one gets "did you mean".
 */
export function noUnknownKeys(
  field: string,
  value: Record<string, unknown>,
  known: ReadonlySet<string>,
  hints: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(value)) {
    if (known.has(key) || value[key] === undefined) continue;
    const list = [...known].join(', ');
    const hint = Object.hasOwn(hints, key) ? hints[key] : undefined;
    if (hint !== undefined) throw new InvalidOptionError(`${field}.${key}`, `left out: ${hint} (known options: ${list})`, value[key]);
    const near = closestKey(key, known);
    throw new InvalidOptionError(
      `${field}.${key}`,
      `one of the known options (${list})${near === null ? '' : `; did you mean ${near}?`}`,
      value[key],
    );
  }
}

/** The known key a typo most likely meant: another case, one edit away, or two from a name of six letters or more. */
export function closestKey(key: string, known: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance && (d <= 1 || (d === 2 && candidate.length >= 6))) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, with a swap of two neighbouring letters counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * Deepest nesting of arrays and objects accepted in a job's data (or a handler's output): deeper, Node's JSON.stringify
 * and PostgreSQL's jsonb parser (whose limit follows max_stack_depth) run out of stack, as a RangeError or a 54001
 * that names no field. 10,000 levels failed both on the machine of docs/options.md; 1,000 passed both.
 */
export const MAX_PAYLOAD_DEPTH = 1_000;

/** What a payload nested past MAX_PAYLOAD_DEPTH must be. */
const DEPTH_EXPECTED = `JSON nested at most ${MAX_PAYLOAD_DEPTH} levels deep (arrays and objects)`;

/**
 * Serialises a job's data (or a handler's output) to JSON text, refusing what JSON.stringify would
 * silently change or drop at the top level: BigInt, cycles, functions, symbols, non-finite numbers; and what
 * PostgreSQL's jsonb refuses: NUL characters and lone surrogates, in strings and keys, and in what a `toJSON`
 * returns; nesting deeper than MAX_PAYLOAD_DEPTH. One walk, one JSON.stringify, one byte count: the text a
 * `toJSON` made is searched only when the walk met one (other than a Date's). The depth and toJSON checks cost
 * nothing measurable: 0.73-0.75 µs for a small payload, 33-35 µs for 100 order lines, before and after them
 * (`node bench/input-checks.mjs --dist <each build>`, 2026-12-06, 2 cores).
 */
export function toJson(field: string, value: unknown, maxBytes?: number): string | null {
  if (value === undefined || value === null) return null;
  const walk: Walk = { ancestors: [], ownJson: false, tooDeep: false };
  if (!storableJson(value, walk)) {
    throw walk.tooDeep
      ? new InvalidPayloadError(field, `deeper nesting at ${pathOf(walk.ancestors)}`, DEPTH_EXPECTED)
      : new InvalidPayloadError(field, findNonJson(value, new Set()) ?? 'a value JSON cannot hold');
  }
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    // only a toJSON's result was not walked: it may nest too deep (RangeError), hold a BigInt, or throw
    if (err instanceof RangeError)
      throw new InvalidPayloadError(field, 'deeper nesting in what a toJSON() method returned', DEPTH_EXPECTED);
    throw new InvalidPayloadError(field, `what a toJSON() method returned, which JSON.stringify refused (${(err as Error).message})`);
  }
  if (walk.ownJson && ESCAPED_UNSTORABLE.test(text)) {
    throw new InvalidPayloadError(
      field,
      'a NUL character (\\u0000) or a lone UTF-16 surrogate in what a toJSON() method returned, which PostgreSQL cannot store',
    );
  }
  if (maxBytes !== undefined) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) throw new PayloadTooLargeError(field, maxBytes, bytes);
  }
  return text;
}

/**
 * In JSON.stringify's text, the escape of a NUL or of a surrogate (an escaped backslash before `u` does not count).
 * JSON.stringify writes a surrogate pair as it is and escapes only a lone half, so any such escape is one.
 */
const ESCAPED_UNSTORABLE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/;

/** What PostgreSQL's jsonb refuses in a string: a NUL character, or half of a surrogate pair. */
function badJsonbText(text: string): string | null {
  if (text.includes('\u0000')) return 'a string with a NUL character (\\u0000), which PostgreSQL cannot store';
  if (!(text as unknown as { isWellFormed(): boolean }).isWellFormed()) return 'a string with a lone UTF-16 surrogate';
  return null;
}

/**
 * The state of storableJson's walk: the objects and arrays above the value (for cycles, and their count is the
 * depth), whether it met a value with its own `toJSON` (other than a Date), whose result it did not walk, and whether
 * it stopped at MAX_PAYLOAD_DEPTH (`ancestors` then holds the way down).
 */
interface Walk {
  ancestors: object[];
  ownJson: boolean;
  tooDeep: boolean;
}

/**
 * True when findNonJson would find nothing and the value nests at most MAX_PAYLOAD_DEPTH deep: the same walk without
 * building paths and entry lists, which it would build at every value of every job it checks. A value it refuses
 * goes through findNonJson (or pathOf) for the message. The depth bounds its recursion, and findNonJson's, which
 * stops at the same first problem.
 */
function storableJson(value: unknown, walk: Walk): boolean {
  switch (typeof value) {
    case 'string':
      return !value.includes('\u0000') && (value as unknown as { isWellFormed(): boolean }).isWellFormed();
    case 'number':
      return Number.isFinite(value);
    case 'bigint':
    case 'function':
    case 'symbol':
      return false;
    case 'object': {
      if (value === null) return true;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        if (!(value instanceof Date)) walk.ownJson = true;
        return true;
      }
      const ancestors = walk.ancestors;
      if (ancestors.length >= MAX_PAYLOAD_DEPTH) {
        walk.tooDeep = true;
        return false;
      }
      if (ancestors.includes(value)) return false;
      ancestors.push(value);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!storableJson(value[i], walk)) return false;
      } else {
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          const child = record[key];
          if (child === undefined) continue;
          if (key.includes('\u0000') || !(key as unknown as { isWellFormed(): boolean }).isWellFormed()) return false;
          if (!storableJson(child, walk)) return false;
        }
      }
      ancestors.pop();
      return true;
    }
    default:
      return true;
  }
}

/**
 * The keys from the payload down the containers `ancestors` (each the child of the one before), for a message: the
 * first few, then how many in all.
 */
function pathOf(ancestors: readonly object[]): string {
  const keys: string[] = [];
  for (let i = 1; i < ancestors.length; i++) {
    const parent = ancestors[i - 1] as Record<string, unknown>;
    const child = ancestors[i];
    keys.push(Array.isArray(parent) ? String(parent.indexOf(child)) : (Object.keys(parent).find((k) => parent[k] === child) ?? '?'));
  }
  const shown = keys.slice(0, 8).join('.');
  return keys.length > 8 ? `${shown}… (${keys.length} keys down)` : shown;
}

function findNonJson(value: unknown, seen: Set<object>, path = ''): string | null {
  const at = path ? ` at ${path}` : '';
  switch (typeof value) {
    case 'string': {
      const bad = badJsonbText(value);
      return bad ? `${bad}${at}` : null;
    }
    case 'bigint':
      return `a BigInt${at}`;
    case 'function':
      return `a function${at}`;
    case 'symbol':
      return `a symbol${at}`;
    case 'number':
      return Number.isFinite(value) ? null : `${value}${at}`;
    case 'object': {
      if (value === null) return null;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return null;
      if (seen.has(value)) return `a circular reference${at}`;
      seen.add(value);
      const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
      for (const [key, child] of entries) {
        if (child === undefined && !Array.isArray(value)) continue;
        const badKey = Array.isArray(value) ? null : badJsonbText(key);
        if (badKey) return `${badKey} in a key${at}`;
        const found = findNonJson(child, seen, path ? `${path}.${key}` : key);
        if (found) return found;
      }
      seen.delete(value);
      return null;
    }
    default:
      return null;
  }
}
