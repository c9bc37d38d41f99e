// Where a command writes and what it reads of its environment: the process's streams when run, strings in tests.
import type { QueueLogger } from '../core/types.js';
import { printable } from './printable.js';

/** The command's streams and environment. */
export interface CliIo {
  /** Results: tables, JSON, scripts. */
  out(text: string): void;
  /** Messages, warnings and the progress bar. */
  err(text: string): void;
  /** Whether stderr is a terminal (the progress bar is drawn only there). */
  readonly errIsTty: boolean;
  /** The environment, for DATABASE_URL. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The process's own streams and environment. */
export function processIo(): CliIo {
  // A reader that stops early (`pgqueue jobs q | head`) closes the pipe: what is left to write has no one to read it,
  // which is no failure of the command.
  // Any other failure to write the results is said in one line on stderr, and the command fails (exit 1).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') return;
    process.stderr.write(`pgqueue: could not write the results: ${err.message}\n`);
    process.exitCode = 1;
  });
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    errIsTty: process.stderr.isTTY === true,
    env: process.env,
  };
}

/**
 * The engine's logger for a command: its warnings and errors on stderr, one line each with control characters escaped
 * (a warning may quote a stored value or a driver's text); its progress notes are the command's to say.
 */
export function cliLogger(io: CliIo): QueueLogger {
  return {
    log: () => undefined,
    warn: (message) => io.err(`pgqueue: warning: ${printable(message)}\n`),
    error: (message) => io.err(`pgqueue: ${printable(message)}\n`),
  };
}

/** `value` as indented JSON on stdout, for scripts (dates as ISO 8601 strings); JSON escapes its control characters. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
