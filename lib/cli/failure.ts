// How a command that did not succeed ends: one line on stderr and an exit code a script can branch on. The database's
// usual failures read as the engine words them at its start (startup-error.ts), never as a driver's stack.
import { QueueError, InvalidOptionError } from '../core/errors.js';
import { startupError } from '../core/runtime/startup-error.js';

/** The exit codes of `pgqueue`. */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** The command ran and could not do it: no such queue or job, a job in another state, the schema not installed. */
  failed: 1,
  /** The command line is wrong: an unknown command or option, a value out of range, no database URL. */
  usage: 2,
  /**
   * The database: not reachable, the login refused, no such database, a server older than PostgreSQL 15, a lock held
   * past the migration's tries, or a statement it failed.
   */
  database: 3,
} as const;

/** The exit codes, as the help shows them. */
export const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  the command ran and could not do it: no such queue or job, a job in another state, the schema not installed
  2  usage: an unknown command or option, a value out of range, no database URL
  3  the database: not reachable, the login refused, no such database, a server older than
     PostgreSQL 15, a lock another session held past the migration's tries, or a statement it failed

Results go to stdout (as JSON with --json); messages, warnings and the progress bar to stderr.`;

/** A mistake in how the command was called, found after commander parsed it (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What the command found that stops it, though it reached the database (exit code 1). */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/**
 * The database codes of startupError (what the database said to a connection, not to a command), UNSUPPORTED_SERVER
 * (a server older than the queue runs on, refused by migrate and by every command's look at the schema), and
 * migrate's MIGRATION_LOCK_TIMEOUT: another session held a lock the migration needed.
 */
const DATABASE_CODES = new Set([
  'DATABASE_NOT_FOUND',
  'LOGIN_FAILED',
  'DATABASE_UNREACHABLE',
  'UNSUPPORTED_SERVER',
  'MIGRATION_LOCK_TIMEOUT',
]);

/** Errors of this code itself rather than of the database: a bug, reported as a failure, not as the database's. */
const PROGRAM_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError];

/**
 * The exit code and the one line that `err` ends a command with. The database's errors arrive mapped by the
 * connection that met them (connection.ts), with the server's address; one that was not is mapped here, without it.
 */
export function describeFailure(err: unknown): { exitCode: number; message: string } {
  if (err instanceof UsageError || err instanceof InvalidOptionError) return { exitCode: EXIT.usage, message: err.message };
  if (err instanceof CommandError) return { exitCode: EXIT.failed, message: err.message };
  const mapped = startupError(err, null);
  if (mapped instanceof QueueError) {
    return { exitCode: DATABASE_CODES.has(mapped.code) ? EXIT.database : EXIT.failed, message: mapped.message };
  }
  const message = err instanceof Error ? err.message : String(err);
  if (PROGRAM_ERRORS.some((kind) => err instanceof kind)) return { exitCode: EXIT.failed, message };
  return { exitCode: EXIT.database, message: `the database failed the command: ${message}` };
}
