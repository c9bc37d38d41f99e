// What an engine that cannot start says: the driver's errors for the usual mistakes of a connection string (a
// database that does not exist, a refused login, no server at the address) as one line that names what to fix,
// instead of a driver's stack. The driver's error stays as the cause.
import { QueueError } from '../errors.js';
import { sqlState } from './pg-errors.js';

/** Where a connection string points, for a message: user, host:port and database (never the password). */
function target(connectionString: string | null): { user: string; address: string; database: string } | null {
  if (!connectionString) return null;
  try {
    const url = new URL(connectionString);
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || '(default)';
    return {
      user: decodeURIComponent(url.username) || '(default)',
      address: `${url.hostname || 'localhost'}:${url.port || 5432}`,
      database,
    };
  } catch {
    return null;
  }
}

/**
 * The engine's error for a start that failed on `err`: a QueueError with code DATABASE_NOT_FOUND, LOGIN_FAILED or
 * DATABASE_UNREACHABLE (no server at the address, or a pooler there whose server does not answer) for those cases,
 * else `err` itself.
 */
export function startupError(err: unknown, connectionString: string | null): unknown {
  const t = target(connectionString);
  const state = sqlState(err);
  const cause = { cause: err };
  if (state === '3D000') {
    // the server's message names the database it was asked for (libpq's defaults and PGDATABASE included)
    const named = err instanceof Error ? /database "(.+)" does not exist/.exec(err.message)?.[1] : undefined;
    const database = named ?? t?.database ?? 'named by the connection';
    return Object.assign(
      new QueueError(
        `database "${database}" does not exist${t ? ` on ${t.address}` : ''}: create it (createdb ${database}) or name another in the connection string`,
        'DATABASE_NOT_FOUND',
      ),
      cause,
    );
  }
  if (state === '28P01' || state === '28000')
    return Object.assign(
      new QueueError(
        `PostgreSQL refused the login${t ? ` of user "${t.user}" to database "${t.database}" on ${t.address}` : ''}: ${err instanceof Error ? err.message : String(err)}`,
        'LOGIN_FAILED',
      ),
      cause,
    );
  if (state === 'ECONNREFUSED' || state === 'ENOTFOUND' || state === 'EHOSTUNREACH' || state === 'ETIMEDOUT')
    return Object.assign(
      new QueueError(
        `no PostgreSQL answers${t ? ` at ${t.address}` : ''} (${state}): is it running, and is that its address?`,
        'DATABASE_UNREACHABLE',
      ),
      cause,
    );
  // PgBouncer answers, but the server behind it does not: it ends the login with a protocol error saying so
  if (
    state === '08P01' &&
    err instanceof Error &&
    /server down|server_login_retry|server login|cannot connect to server/i.test(err.message)
  )
    return Object.assign(
      new QueueError(
        `a pooler answers${t ? ` at ${t.address}` : ''}, but the PostgreSQL behind it does not (${err.message}): is the server running, and is it the pooler's?`,
        'DATABASE_UNREACHABLE',
      ),
      cause,
    );
  return err;
}
