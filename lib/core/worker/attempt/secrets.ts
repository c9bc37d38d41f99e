// What a stored error must not keep: credentials. A failed attempt's error is served by the dashboard, the admin API
// and the CLI to anyone who may read jobs, so an HTTP client's error (axios, got, ofetch…) must not bring along the
// request's Authorization header, its cookies, its body or the response's body. Pure; storable.ts and failure.ts use it
// while they make a thrown value storable, so nothing here walks more than they do.

/** What a masked value is stored as. */
export const REDACTED = '[redacted]';

/**
 * Words that make a key secret when they are one of its segments. A segment may also end with one (`accesstoken`,
 * `PGPASSWORD`, `apikey`), and a plural counts (`cookies`, `tokens`).
 */
const SECRET_WORDS = ['password', 'passwd', 'secret', 'token', 'authorization', 'cookie', 'apikey', 'privatekey'] as const;

/** Two segments in a row that make a key secret: `api-key`, `apiKey`, `API_KEY`, `private_key`, `privateKey`. */
const SECRET_PAIRS: readonly (readonly [string, string])[] = [
  ['api', 'key'],
  ['private', 'key'],
];

/** What every secret key holds, whatever its case and separators: a test before the split (isSecretKey). */
const MAY_BE_SECRET = /passw|secret|token|authorization|cookie|key/i;

/** Keys that are never looked at as longer than this (a key is cut at 200 characters where it is stored). */
const KEY_LOOKED_AT = 200;

/**
 * The lower-case segments of a key: split at anything that is not a letter or digit (`-`, `_`, `.`, a space) and at
 * camelCase boundaries (`apiKey` → api, key; `XAuthToken` → x, auth, token; `HTTPCookie` → http, cookie).
 */
export function keySegments(key: string): string[] {
  return key
    .slice(0, KEY_LOOKED_AT)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((s) => s.length > 0);
}

/** True when a segment is, or ends with, a secret word (with or without a plural s). */
function secretSegment(segment: string): boolean {
  const word = segment.endsWith('s') ? segment.slice(0, -1) : segment;
  return SECRET_WORDS.some((w) => segment.endsWith(w) || word.endsWith(w));
}

/**
 * Whether the value under `key` may be a credential: a segment of the key is (or ends with) password, passwd,
 * secret, token, authorization, cookie, apikey or privatekey (a plural too), or two segments in a row are api+key or
 * private+key. Case does not matter; segments are split at `-`, `_`, `.`, spaces and camelCase. So `Authorization`,
 * `set-cookie`, `x-api-key`, `client_secret`, `accessToken`, `PGPASSWORD` and `tokens_used` are secret, and `key`,
 * `tokenizer`, `secretary`, `passage`, `author` and `cookieless` are not.
 */
export function isSecretKey(key: string): boolean {
  // most keys (code, status, errno, details) hold none of the words: one test, without splitting the key
  if (!MAY_BE_SECRET.test(key.length > KEY_LOOKED_AT ? key.slice(0, KEY_LOOKED_AT) : key)) return false;
  const segments = keySegments(key);
  for (let i = 0; i < segments.length; i++) {
    if (secretSegment(segments[i]!)) return true;
    const next = segments[i + 1];
    if (next !== undefined && SECRET_PAIRS.some(([a, b]) => segments[i] === a && next === b)) return true;
  }
  return false;
}

/**
 * Whether a value under a secret key is masked: text, objects and arrays are; a number, a boolean or null is kept, since
 * none can hold a credential string and such keys often name counts and flags (`tokens_used: 1200`, `passwordSet`).
 */
export function masks(value: unknown): boolean {
  return value !== null && typeof value !== 'number' && typeof value !== 'boolean' && typeof value !== 'undefined';
}

/**
 * Fields that are never stored, wherever they are in an error (its own fields, its cause, what they hold): an HTTP
 * client's request options (`config`: headers, auth, body), its request (a socket and the headers sent), its response
 * (the headers received, set-cookie among them, and the body), and any `headers`. Those names in an error come from
 * HTTP clients (axios, got, ofetch, superagent…) far more often than from anything worth keeping, and an HTTP
 * exchange nested in a field of a wrapper error leaks as much as one at the top. Compared in lower case.
 */
const DROPPED_FIELDS: ReadonlySet<string> = new Set(['config', 'request', 'response', 'headers']);

/** Whether the field `key` of a stored error, at any depth, is left out (DROPPED_FIELDS). */
export function dropsField(key: string): boolean {
  return DROPPED_FIELDS.has(key.toLowerCase());
}

/**
 * What a socket, a stream, an HTTP agent, a pg client or any other event emitter is stored as, or null for other
 * objects. Such objects hold connections and their settings (a pg client's password, a request's headers) and mean
 * nothing once the process is gone. Found by shape (`on` and `emit` functions), whatever realm made them.
 */
export function describeEmitter(object: object): string | null {
  const o = object as { on?: unknown; emit?: unknown };
  if (typeof o.on !== 'function' || typeof o.emit !== 'function') return null;
  let name = 'event emitter';
  try {
    const ctor = (object as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof ctor === 'string' && /^[A-Za-z0-9_$]{1,50}$/.test(ctor) && ctor !== 'Object') name = ctor;
  } catch {
    // a Proxy or a getter that throws: the generic name will do
  }
  return `[${name}: not stored]`;
}

/** `scheme://user:password@` in text: the password part. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*:)[^\s@/]+@/gi;

/**
 * `text` with the password of every URL in it masked (`postgres://app:[redacted]@db/app`): a client's error message
 * may quote the connection string it was given.
 */
export function maskUrlPasswords(text: string): string {
  return text.includes('://') ? text.replace(URL_PASSWORD, `$1${REDACTED}@`) : text;
}
