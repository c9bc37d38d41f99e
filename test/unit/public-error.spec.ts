import { DeadlineError } from '../../lib/core/runtime/deadline.js';
import { InvalidOptionError, QueueError } from '../../lib/core/errors.js';
import { publicError } from '../../lib/core/http/public-error.js';
import { startupError } from '../../lib/core/runtime/startup-error.js';

/** An error as the driver gives it: a message and a code (a SQLSTATE, or Node's), with the server's fields. */
function driverError(message: string, code?: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code }, fields);
}

/** What must never be shown: addresses, ports, users, databases, schemas, pids. */
const PRIVATE = /10\.0\.0\.5|5432|db\.internal|"app"|\bapp\b|billing|pgqueue|\bpid\b|4242/;

describe('publicError: an error as anyone may read it', () => {
  it.each([
    [
      driverError('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED', { address: '10.0.0.5', port: 5432 }),
      'the database cannot be reached (ECONNREFUSED)',
    ],
    [
      driverError('getaddrinfo ENOTFOUND db.internal', 'ENOTFOUND', { hostname: 'db.internal' }),
      'the database cannot be reached (ENOTFOUND)',
    ],
    [driverError('read ECONNRESET', 'ECONNRESET'), 'the connection to the database was lost (ECONNRESET)'],
    [driverError('password authentication failed for user "app"', '28P01'), 'the database refused the login (28P01)'],
    [
      driverError('no pg_hba.conf entry for host "10.0.0.5", user "app", database "billing"', '28000'),
      'the database refused the login (28000)',
    ],
    [driverError('database "billing" does not exist', '3D000'), 'the database named by the connection does not exist (3D000)'],
    [
      driverError('terminating connection due to administrator command', '57P01'),
      'the database ended the connection (an administrator or a shutdown) (57P01)',
    ],
    [
      driverError('canceling statement due to statement timeout', '57014'),
      'the database cancelled a statement (a timeout or a cancel) (57014)',
    ],
    [driverError('sorry, too many clients already', '53300'), 'the database has no connection slot free (53300)'],
    [
      driverError('relation "pgqueue.jobs" does not exist', '42P01'),
      'the database lacks a table of the queue (is the schema installed and up to date?) (42P01)',
    ],
    [
      driverError('deadlock detected', '40P01', { detail: 'Process 4242 waits for ShareLock' }),
      expect.stringMatching(/^the database rolled a transaction back .* \(40P01\)$/),
    ],
    [driverError('could not connect to server', '08006'), 'the connection to the database failed (08006)'],
    [driverError('syntax error at or near "app"', '42601'), 'the database failed a statement (42601)'],
    [
      driverError("Hostname/IP does not match certificate's altnames: Host: db.internal", 'ERR_TLS_CERT_ALTNAME_INVALID'),
      'the TLS connection to the database failed (ERR_TLS_CERT_ALTNAME_INVALID)',
    ],
    [driverError('connect ENOENT /var/run/postgresql/.s.PGSQL.5432', 'ENOENT'), 'the connection to the database failed (ENOENT)'],
    [driverError('Connection terminated unexpectedly'), 'the connection to the database was lost'],
    [driverError('timeout exceeded when trying to connect'), 'no connection to the database could be made in time'],
    [new TypeError('Cannot read properties of undefined (reading "app")'), 'an unexpected error (TypeError)'],
    ['a thrown string naming db.internal', 'an unexpected error (string)'],
    [driverError('weird', 'not a code: 10.0.0.5'), 'an unexpected error (Error)'],
  ])('%s', (err, expected) => {
    const shown = publicError(err);
    expect(shown).toEqual(expected);
    expect(shown).not.toMatch(PRIVATE);
  });

  it('reads the code of a driver error that Drizzle wrapped as a cause', () => {
    const wrapped = Object.assign(new Error('Failed query: select 1 from "billing"'), { cause: driverError('x', '57P01') });
    expect(publicError(wrapped)).toMatch(/\(57P01\)$/);
  });

  it("says the engine's failed starts by their code, without the connection they quote", () => {
    const url = 'postgres://app:pw@10.0.0.5:5432/billing';
    const refused = startupError(driverError('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED'), url);
    expect((refused as Error).message).toMatch(/10\.0\.0\.5/);
    expect(publicError(refused)).toBe('the database cannot be reached (ECONNREFUSED)');
    const login = startupError(driverError('password authentication failed for user "app"', '28P01'), url);
    expect(publicError(login)).toBe('the database refused the login (28P01)');
    expect(publicError(Object.assign(new QueueError('database "billing" does not exist', 'DATABASE_NOT_FOUND'), {}))).toBe(
      'the database named by the connection does not exist (DATABASE_NOT_FOUND)',
    );
  });

  it("keeps the engine's own messages, and a deadline's", () => {
    const invalid = new InvalidOptionError('thresholds.maxQueued', 'an integer >= 0', -1);
    expect(publicError(invalid)).toBe(invalid.message);
    expect(publicError(new DeadlineError('the database did not answer within 5000 ms'))).toBe('the database did not answer within 5000 ms');
  });
});
