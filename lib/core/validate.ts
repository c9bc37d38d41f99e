import { InvalidOptionError, InvalidPayloadError, PayloadTooLargeError } from './errors.js';

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

/** A non-empty string of at most `max` characters, or undefined. */
export function optKey(field: string, value: unknown, max = 1000): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new InvalidOptionError(field, `a string of 1 to ${max} characters`, value);
  }
  return value;
}

/** Rejects anything that is not a plain options object (arrays, strings, class instances are mistakes). */
export function record(field: string, value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidOptionError(field, 'an object', value);
  return value as Record<string, unknown>;
}

/** Names the first key of `value` that is not in `known`: a misspelt option must not pass silently. */
export function noUnknownKeys(field: string, value: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const key of Object.keys(value)) {
    if (!known.has(key) && value[key] !== undefined) {
      throw new InvalidOptionError(`${field}.${key}`, `one of the known options (${[...known].join(', ')})`, value[key]);
    }
  }
}

/**
 * Serialises a job's data (or a handler's output) to JSON text, refusing what JSON.stringify would
 * silently change or drop at the top level: BigInt, cycles, functions, symbols, non-finite numbers.
 */
export function toJson(field: string, value: unknown, maxBytes?: number): string | null {
  if (value === undefined || value === null) return null;
  if (!storableJson(value, [])) throw new InvalidPayloadError(field, findNonJson(value, new Set()) ?? 'a value JSON cannot hold');
  const text = JSON.stringify(value);
  if (maxBytes !== undefined) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) throw new PayloadTooLargeError(field, maxBytes, bytes);
  }
  return text;
}

/** What PostgreSQL's jsonb refuses in a string: a NUL character, or half of a surrogate pair. */
function badJsonbText(text: string): string | null {
  if (text.includes('\u0000')) return 'a string with a NUL character (\\u0000), which PostgreSQL cannot store';
  if (!(text as unknown as { isWellFormed(): boolean }).isWellFormed()) return 'a string with a lone UTF-16 surrogate';
  return null;
}

/**
 * True when findNonJson would find nothing: the same walk without building paths and entry lists, which
 * were most of the cost of an insert of 1,000 small jobs in Node (a CPU profile: findNonJson 49 ms of 320).
 * A value it refuses goes through findNonJson for the message.
 */
function storableJson(value: unknown, ancestors: object[]): boolean {
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
      if (value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
      if (ancestors.includes(value)) return false;
      ancestors.push(value);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!storableJson(value[i], ancestors)) return false;
      } else {
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          const child = record[key];
          if (child === undefined) continue;
          if (key.includes('\u0000') || !(key as unknown as { isWellFormed(): boolean }).isWellFormed()) return false;
          if (!storableJson(child, ancestors)) return false;
        }
      }
      ancestors.pop();
      return true;
    }
    default:
      return true;
  }
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
