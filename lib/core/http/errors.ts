// The one table that turns the engine's typed errors into HTTP answers, for the admin API and for any controller
// of the user's (QueueErrorFilter, lib/nest/error-filter.ts).
import { QueueError } from '../errors.js';
import { sqlState } from '../runtime/pg-errors.js';

/** An HTTP answer for an error: its status and a JSON body that names the field where there is one. */
export interface HttpError {
  status: number;
  body: { statusCode: number; code: string; message: string; field?: string };
}

/** Status by the engine's error code; the codes not listed are the server's fault (500). */
const STATUS: Readonly<Record<string, number>> = {
  INVALID_OPTION: 400,
  INVALID_PAYLOAD: 400,
  // the job is in a state that does not allow the change (retrying one that is not failed)
  JOB_STATE: 409,
  PAYLOAD_TOO_LARGE: 413,
  QUEUE_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  QUEUE_EXISTS: 409,
  KEY_TAKEN: 409,
  JOB_RACE: 409,
  QUEUE_RACE: 409,
  QUEUE_CLOSED: 503,
  OPERATOR_BUSY: 503,
};

/** Node's codes of a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * The HTTP answer for what an engine call threw: the engine's typed errors by their code (`statuses` changes some:
 * `{ JOB_STATE: 400 }`), a database that cannot be reached (or ended the statement: a restart, a timeout) as 503;
 * null for anything else, which is a bug to report.
 */
export function httpErrorOf(err: unknown, statuses: Readonly<Record<string, number>> = {}): HttpError | null {
  if (err instanceof QueueError) {
    const status = statuses[err.code] ?? STATUS[err.code];
    if (status === undefined) return null;
    // InvalidOptionError, InvalidPayloadError and PayloadTooLargeError name the field
    const field = (err as { field?: unknown }).field;
    return answer(status, err.code, err.message, typeof field === 'string' ? field : undefined);
  }
  const state = sqlState(err);
  const lost =
    (state !== undefined && (CONNECTION_CODES.has(state) || /^(08|57)/.test(state))) ||
    (err instanceof Error && /Connection terminated|timeout exceeded when trying to connect/i.test(err.message));
  return lost ? answer(503, 'DATABASE_UNAVAILABLE', 'the database cannot be reached now; try again') : null;
}

function answer(status: number, code: string, message: string, field?: string): HttpError {
  return { status, body: { statusCode: status, code, message, ...(field === undefined ? {} : { field }) } };
}
