/** Base class of every error the queue throws on purpose; `code` is stable for programs to branch on. */
export class QueueError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The named queue does not exist (create it first with `createQueue`). */
export class QueueNotFoundError extends QueueError {
  constructor(readonly queue: string) {
    super(`queue "${queue}" does not exist`, 'QUEUE_NOT_FOUND');
  }
}

/** `createQueue` was called for an existing queue with different settings. */
export class QueueExistsError extends QueueError {
  constructor(
    readonly queue: string,
    readonly differences: string[],
  ) {
    super(`queue "${queue}" already exists with other settings: ${differences.join(', ')}`, 'QUEUE_EXISTS');
  }
}

/** Renders a rejected value for an error message without throwing on cycles or BigInt. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 120 ? `${value.slice(0, 117)}...` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value === null || typeof value !== 'object') return String(value);
  try {
    const text = JSON.stringify(value);
    return text.length > 120 ? `${text.slice(0, 117)}...` : text;
  } catch {
    return Array.isArray(value) ? 'an array' : 'an object';
  }
}

/** An option or argument is outside what is accepted; the message names the field, the range and the value. */
export class InvalidOptionError extends QueueError {
  constructor(
    readonly field: string,
    readonly expected: string,
    readonly value: unknown,
  ) {
    super(`${field} must be ${expected}, got ${describeValue(value)}`, 'INVALID_OPTION');
  }
}

/** A job's serialised `data` is larger than `maxPayloadBytes`. */
export class PayloadTooLargeError extends QueueError {
  constructor(
    readonly field: string,
    readonly maxBytes: number,
    readonly bytes: number,
  ) {
    super(`${field} must serialise to at most ${maxBytes} bytes of JSON, got ${bytes} bytes`, 'PAYLOAD_TOO_LARGE');
  }
}

/** A job's `data` (or a handler's output) cannot be stored as JSON. */
export class InvalidPayloadError extends QueueError {
  constructor(
    readonly field: string,
    readonly reason: string,
    /** What the payload must be (a job's schema may say more than JSON does). */
    expected = 'JSON-serialisable (plain objects, arrays, strings, finite numbers, booleans, null)',
  ) {
    super(`${field} must be ${expected}, got ${reason}`, 'INVALID_PAYLOAD');
  }
}

/** Thrown by a handler to fail the job at once, with no retry. */
export class PermanentJobError extends QueueError {
  /** Read by the worker: an error with `retryable === false` is never retried. */
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'PERMANENT_JOB_ERROR');
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** No job with that id exists in that queue. */
export class JobNotFoundError extends QueueError {
  constructor(
    /** null: the job was looked for by its id alone, in every queue. */
    readonly queue: string | null,
    readonly id: string,
  ) {
    super(`job ${id} does not exist${queue === null ? '' : ` in queue "${queue}"`}`, 'JOB_NOT_FOUND');
  }
}

/** The job exists but its state does not allow the requested change. */
export class JobStateError extends QueueError {
  constructor(
    readonly queue: string,
    readonly id: string,
    readonly state: string,
    readonly expected: string,
  ) {
    super(`job ${id} in queue "${queue}" is ${state}; this needs a job that is ${expected}`, 'JOB_STATE');
  }
}

/** The PostgreSQL server is older than the oldest the queue runs on; the start refuses it before it changes anything. */
export class UnsupportedServerError extends QueueError {
  constructor(
    /** The server's version, as people write it: `14.11`. */
    readonly serverVersion: string,
    /** The oldest major version the queue runs on. */
    readonly requiredVersion: number,
  ) {
    super(
      `PostgreSQL ${serverVersion} is not supported: nestjs-pgqueue needs PostgreSQL ${requiredVersion} or later (its unique keys use NULLS NOT DISTINCT)`,
      'UNSUPPORTED_SERVER',
    );
  }
}

/**
 * A dashboard or admin API call found every connection the operators may hold busy, and waited its turn too long
 * (or too many calls waited already): answered 503, try again. The workers' connections are never taken by them.
 */
export class OperatorBusyError extends QueueError {
  constructor(
    readonly waitedMs: number,
    readonly running: number,
  ) {
    super(`${running} operator calls are running and this one waited ${waitedMs} ms for its turn: try again`, 'OPERATOR_BUSY');
  }
}
