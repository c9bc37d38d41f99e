// How expectSent compares a job's data with what the test expects: a partial deep match, where a value of the
// expected shape may also be a test of its own. Pure logic, free of the database (test/unit/testing-match.spec.ts).
import { InvalidOptionError } from '../core/errors.js';

/**
 * A test of one value inside an expected shape: a function (passes when it returns truthy), a RegExp (a string it
 * matches), a Date (the same instant, or its ISO text: dates travel in a job's data as text), or a test runner's
 * asymmetric matcher (any object with `asymmetricMatch`, as Jest's and Vitest's `expect.any(String)`).
 */
export type ValueTest = ((value: unknown) => unknown) | RegExp | Date | { asymmetricMatch(value: unknown): boolean };

/**
 * The expected shape of a job's data: an object matches when each of its keys matches (keys it leaves out are not
 * looked at; a key set to `undefined` must be missing), an array when it has the same length and each item matches,
 * anything else when it is equal. Any value may be a ValueTest instead.
 */
export type Shape<T> =
  ValueTest | (T extends readonly (infer I)[] ? readonly Shape<I>[] : T extends object ? { [K in keyof T]?: Shape<T[K]> } : T);

function isAsymmetric(value: unknown): value is { asymmetricMatch(value: unknown): boolean } {
  return typeof value === 'object' && value !== null && typeof (value as { asymmetricMatch?: unknown }).asymmetricMatch === 'function';
}

/** The path to a key, as code would write it. */
function child(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Whether `value` has the shape `expected`: null when it does, else where and how the first difference lies
 * (`data.user.id: expected "u1", received "u2"`), `path` naming the value's root.
 */
export function mismatch(value: unknown, expected: unknown, path = 'data'): string | null {
  const differs = (): string => `${path}: expected ${render(expected)}, received ${render(value)}`;
  if (typeof expected === 'function') {
    let passed: unknown;
    try {
      passed = (expected as (v: unknown) => unknown)(value);
    } catch (err) {
      return `${path}: ${render(expected)} threw ${err instanceof Error ? err.message : String(err)} on ${render(value)}`;
    }
    refusePromise(passed, path);
    return passed ? null : `${path}: ${render(value)} did not pass ${render(expected)}`;
  }
  if (isAsymmetric(expected)) return expected.asymmetricMatch(value) ? null : differs();
  if (expected instanceof RegExp) return typeof value === 'string' && value.search(expected) !== -1 ? null : differs();
  if (expected instanceof Date) {
    const same =
      (typeof value === 'string' && !Number.isNaN(expected.getTime()) && value === expected.toISOString()) ||
      (value instanceof Date && value.getTime() === expected.getTime());
    return same ? null : differs();
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(value)) return differs();
    if (value.length !== expected.length) return `${path}: expected an array of ${expected.length} item(s), received ${render(value)}`;
    for (let i = 0; i < expected.length; i++) {
      const found = mismatch(value[i], expected[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return differs();
    for (const key of Object.keys(expected)) {
      const want = (expected as Record<string, unknown>)[key];
      const has = Object.prototype.hasOwnProperty.call(value, key);
      const got = has ? (value as Record<string, unknown>)[key] : undefined;
      if (want === undefined) {
        if (got !== undefined) return `${child(path, key)}: expected no value, received ${render(got)}`;
        continue;
      }
      if (!has) return `${child(path, key)}: expected ${render(want)}, but the key is missing`;
      const found = mismatch(got, want, child(path, key));
      if (found) return found;
    }
    return null;
  }
  return value === expected ? null : differs();
}

/**
 * A value, or an expected shape, as a line of a message: JSON where JSON fits, and the tests as code names them
 * (`/^u\d+$/`, `[Function isEmail]`, `expect.any(String)`); cut at `max` characters.
 */
export function render(value: unknown, max = 200): string {
  const text = renderFull(value, new Set());
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function renderFull(value: unknown, seen: Set<object>): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return value.name ? `[Function ${value.name}]` : '[Function]';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof RegExp) return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : `Date(${value.toISOString()})`;
  if (isAsymmetric(value)) {
    const named = value as { toAsymmetricMatcher?: () => string; toString: () => string };
    return typeof named.toAsymmetricMatcher === 'function' ? named.toAsymmetricMatcher() : named.toString();
  }
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((v) => renderFull(v, seen)).join(',')}]`;
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${renderFull(v, seen)}`);
    return `{${entries.join(',')}}`;
  } finally {
    seen.delete(value);
  }
}

/**
 * Throws when a matcher answered with a promise: a promise is truthy whatever it settles to, so an async matcher
 * would pass every job (and with `times: 0` fail none). Its rejection, if any, is caught here, not left unhandled.
 */
export function refusePromise(answer: unknown, field: string): void {
  if (typeof (answer as { then?: unknown } | null)?.then !== 'function') return;
  Promise.resolve(answer).catch(() => undefined);
  throw new InvalidOptionError(field, 'a matcher that answers at once (not an async function)', 'a promise');
}
