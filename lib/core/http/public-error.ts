// What an error says where anyone may read it (/health, the dashboard): its code and a sentence of what happened,
// never its text. A driver's message names what an attacker wants to know: `connect ECONNREFUSED 10.0.0.5:5432`, `password
// authentication failed for user "app"`, `database "billing" does not exist`, `relation "pgqueue.jobs" does not
// exist`; the engine's own errors of a failed start quote the connection's user, database and address. A log may keep
// the whole error; this is the public half. Pure.
import { DeadlineError } from '../runtime/deadline.js';
import { QueueError } from '../errors.js';
import { sqlState } from '../runtime/pg-errors.js';

/** Node's codes of a server that could not be reached. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EADDRNOTAVAIL']);

/** Node's codes of a connection lost while in use. */
const LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** The engine's codes whose messages quote the connection (startup-error.ts), by what they mean. */
const ENGINE_DATABASE_CODES: Readonly<Record<string, string>> = {
  DATABASE_UNREACHABLE: 'the database cannot be reached',
  LOGIN_FAILED: 'the database refused the login',
  DATABASE_NOT_FOUND: 'the database named by the connection does not exist',
};

/** SQLSTATE codes with a sentence of their own, before their class's. */
const BY_STATE: Readonly<Record<string, string>> = {
  '3D000': 'the database named by the connection does not exist',
  '53300': 'the database has no connection slot free',
  '57014': 'the database cancelled a statement (a timeout or a cancel)',
  '57P01': 'the database ended the connection (an administrator or a shutdown)',
  '57P02': 'the database ended the connection (a crash of another session)',
  '57P03': 'the database is starting up or shutting down',
  '57P04': 'the database was dropped',
  '42P01': 'the database lacks a table of the queue (is the schema installed and up to date?)',
  '42501': 'the database refused the statement: insufficient privilege',
};

/** SQLSTATE classes (their first two characters), by what they mean. */
const BY_CLASS: Readonly<Record<string, string>> = {
  '08': 'the connection to the database failed',
  '28': 'the database refused the login',
  '40': 'the database rolled a transaction back (a serialization failure or a deadlock); it may be tried again',
  '53': 'the database ran out of a resource (connections, memory or disk)',
  '54': 'the database refused a statement past one of its limits',
  '55': 'the database could not run a statement in its present state (a lock not granted in time)',
  '57': 'the database stopped a statement or a connection',
  '58': 'the database met an error of its system',
  XX: 'the database met an internal error',
};

/** The driver's messages for a connection that ended or was never made, which carry no code. */
const DRIVER_MESSAGES: readonly [RegExp, string][] = [
  [/timeout exceeded when trying to connect|connection timeout/i, 'no connection to the database could be made in time'],
  [/Connection terminated|not queryable|Client was closed/i, 'the connection to the database was lost'],
  [/does not support SSL|SSL|TLS|certificate/i, 'the TLS connection to the database failed'],
];

/**
 * A description of `err` that is safe to show to anyone: a sentence and, in parentheses, the SQLSTATE, the Node or
 * the engine's code when there is one; never the error's own text, so no host, port, user, database, schema or pid.
 * The engine's typed errors (QueueError) keep their message, which the engine wrote (but those of a failed start,
 * which quote the connection); a DeadlineError keeps its message (how long was waited). Anything else is "an
 * unexpected error" with its name. Whoever calls it logs the whole error where only operators read it.
 */
export function publicError(err: unknown): string {
  if (err instanceof DeadlineError) return err.message;
  if (err instanceof QueueError) {
    const sentence = ENGINE_DATABASE_CODES[err.code];
    if (sentence === undefined) return err.message;
    const cause = codeOf((err as { cause?: unknown }).cause);
    return `${sentence} (${cause ?? err.code})`;
  }
  const code = codeOf(err);
  if (code !== undefined) return `${sentenceOf(code)} (${code})`;
  const message = err instanceof Error && typeof err.message === 'string' ? err.message : '';
  for (const [pattern, sentence] of DRIVER_MESSAGES) if (pattern.test(message)) return sentence;
  return `an unexpected error (${nameOf(err)})`;
}

/** The SQLSTATE or Node code of `err` (or of its cause, as Drizzle wraps the driver's), when it looks like one. */
function codeOf(err: unknown): string | undefined {
  const code = sqlState(err);
  // a code is a few capitals, digits and underscores; anything else is not shown
  return code !== undefined && /^[A-Z0-9_]{2,40}$/.test(code) ? code : undefined;
}

/** The sentence for a code: a SQLSTATE's, by itself or by its class, or a Node code's. */
function sentenceOf(code: string): string {
  if (UNREACHABLE.has(code)) return 'the database cannot be reached';
  if (LOST.has(code)) return 'the connection to the database was lost';
  if (code.startsWith('ERR_TLS') || code.includes('CERT')) return 'the TLS connection to the database failed';
  // SQLSTATE classes are 00-58, F0, HV, P0 and XX: none starts with E, as Node's codes do
  if (/^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code)) return BY_STATE[code] ?? BY_CLASS[code.slice(0, 2)] ?? 'the database failed a statement';
  return 'the connection to the database failed';
}

/** An error's constructor name when it is a plain identifier (TypeError, DatabaseError), else its kind. */
function nameOf(err: unknown): string {
  try {
    const name = err instanceof Error ? err.name : typeof err;
    return typeof name === 'string' && /^[A-Za-z0-9_$]{1,60}$/.test(name) ? name : 'Error';
  } catch {
    return 'Error';
  }
}
