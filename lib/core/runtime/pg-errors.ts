// What the engine reads from PostgreSQL's errors: the SQLSTATE codes it acts on, and one way to read a code
// from anything thrown (a pg DatabaseError carries `code`; a connection error or a thrown value may not).

/** The SQLSTATE codes the engine acts on. */
export const SQLSTATE = {
  /** A unique index refused a change: a policy's or a dedupe key's. */
  uniqueViolation: '23505',
  /** PostgreSQL ended a transaction to break a deadlock: it may be tried again. */
  deadlockDetected: '40P01',
  /** A foreign key refused a row: a schedule of a queue that does not exist. */
  foreignKeyViolation: '23503',
  /** A statement named a table that is gone: a queue's partition, after the queue was made again. */
  undefinedTable: '42P01',
  /** A statement that needs a transaction block (SAVEPOINT) ran outside one. */
  noActiveTransaction: '25P01',
  /** A lock was not granted within lock_timeout: the statement was cancelled, and may be tried again. */
  lockNotAvailable: '55P03',
  /**
   * A prepared statement the session does not have (26000) or already has (42P05): behind a transaction-mode pooler
   * the statements a client prepared stay on the server connections it was given then, not the one it has now.
   */
  preparedStatementMissing: '26000',
  preparedStatementExists: '42P05',
  /** Not supported: among others, a prepared statement whose result's columns changed under it (db.ts). */
  featureNotSupported: '0A000',
  /** A protocol violation: how PgBouncer refuses a startup parameter it does not know (`options`). */
  protocolViolation: '08P01',
} as const;

/** The SQLSTATE of `err`, or undefined when it carries none. */
export function sqlState(err: unknown): string | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const { code, cause } = err as { code?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  // Drizzle wraps the driver's error (DrizzleQueryError), with the driver's as its cause
  const inner = cause !== null && typeof cause === 'object' ? (cause as { code?: unknown }).code : undefined;
  return typeof inner === 'string' ? inner : undefined;
}

/** SQLSTATE class 22, data exception: the database refused a value (e.g. a NUL character in JSON); retrying cannot help. */
export function isDataException(err: unknown): boolean {
  return sqlState(err)?.startsWith('22') ?? false;
}
