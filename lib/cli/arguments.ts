// The checks of the command line's values, as commander's argument parsers: a value out of range stops the command
// before it connects, with a usage error (exit code 2) that names the option, the accepted range and the value.
// Where the engine has a check of its own (queue names, schema names, job ids), this applies it, so that the command
// line accepts exactly what the engine does.
import { InvalidArgumentError } from 'commander';
import { schemaName } from '../core/config/config.js';
import { InvalidOptionError } from '../core/errors.js';
import { JOB_STATES } from '../core/jobs/finder.js';
import { isJobId } from '../core/jobs/refs.js';
import type { JobState } from '../core/types.js';
import { queueName } from '../core/config/validate.js';
import { UsageError } from './failure.js';

/** The engine's verdict on a value, as commander's usage error (it prefixes the option or argument and the value). */
function engineCheck<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof InvalidOptionError) throw new InvalidArgumentError(`It must be ${err.expected}.`);
    throw err;
  }
}

/** A parser of a whole number from `min` to `max`: digits only, so "1e3", "10.0" and " 5" are refused. */
export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`It must be an integer from ${min} to ${max}.`);
    return n;
  };
}

/** A queue's name, as the engine accepts it. */
export function queueArgument(value: string): string {
  return engineCheck(() => queueName('queue', value));
}

/** A schema name, as the engine accepts it. */
export function schemaArgument(value: string): string {
  return engineCheck(() => schemaName('--schema', value));
}

/** One job id of a variadic argument, added to those before it. */
export function jobIdArgument(value: string, previous: string[] = []): string[] {
  return [...previous, jobId(value)];
}

/** A job id: a positive bigint written in digits. */
export function jobId(value: string): string {
  if (!isJobId(value)) throw new InvalidArgumentError('It must be a job id: digits, from 1 to 9223372036854775807.');
  return value;
}

/** One job state or several, comma-separated (`failed,cancelled`). */
export function statesArgument(value: string): JobState[] {
  const states = value.split(',').map((s) => s.trim());
  for (const s of states) {
    if (!(JOB_STATES as readonly string[]).includes(s))
      throw new InvalidArgumentError(`Each state must be one of ${JOB_STATES.join(', ')}.`);
  }
  return [...new Set(states as JobState[])];
}

/**
 * The database URL (from --url or DATABASE_URL), checked before any connection: a postgres:// or postgresql:// URL,
 * or a socket: one (a Unix socket's directory). A refused value is not echoed, only its scheme: it may hold a password.
 */
export function checkUrl(value: string, source: string): string {
  if (/^socket:/i.test(value)) return value;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  const postgres = scheme === 'postgres' || scheme === 'postgresql';
  if (postgres && URL.canParse(value)) return value;
  const got = postgres
    ? `a ${scheme}: URL that does not parse (a port that is not a number, or characters of the password to percent-encode?)`
    : scheme
      ? `a ${scheme}: URL`
      : 'a value that is not a URL';
  throw new UsageError(`${source} must be a PostgreSQL URL (postgres://user:password@host:port/database), got ${got}`);
}
