// The engine's errors for a start that failed, from the driver's, without a server.
import { QueueError } from '../../lib/core/errors.js';
import { startupError } from '../../lib/core/runtime/startup-error.js';

const url = 'postgres://app:s3cret@db.internal:6543/orders';
const pgError = (code: string, message = 'driver says no') => Object.assign(new Error(message), { code });

describe('startupError', () => {
  it('a database that does not exist: one line naming it and where, never the password', () => {
    const err = startupError(pgError('3D000', 'database "orders" does not exist'), url) as QueueError;
    expect(err).toBeInstanceOf(QueueError);
    expect(err.code).toBe('DATABASE_NOT_FOUND');
    expect(err.message).toBe(
      'database "orders" does not exist on db.internal:6543: create it (createdb orders) or name another in the connection string',
    );
    expect(err.message).not.toContain('s3cret');
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('a refused login and an address where nothing answers say so; anything else is left as it was', () => {
    const login = startupError(pgError('28P01', 'password authentication failed for user "app"'), url) as QueueError;
    expect(login.code).toBe('LOGIN_FAILED');
    expect(login.message).toContain('user "app" to database "orders" on db.internal:6543');
    expect(login.message).not.toContain('s3cret');
    const refused = startupError(pgError('ECONNREFUSED'), 'postgres://localhost/x') as QueueError;
    expect(refused.message).toBe('no PostgreSQL answers at localhost:5432 (ECONNREFUSED): is it running, and is that its address?');
    const pooled = startupError(pgError('08P01', 'client_login_timeout (server down)'), url) as QueueError;
    expect(pooled.code).toBe('DATABASE_UNREACHABLE');
    expect(pooled.message).toBe(
      "a pooler answers at db.internal:6543, but the PostgreSQL behind it does not (client_login_timeout (server down)): is the server running, and is it the pooler's?",
    );
    expect((startupError(pgError('08P01', 'pgbouncer cannot connect to server'), url) as QueueError).code).toBe('DATABASE_UNREACHABLE');
    // PgBouncer's refusal of a startup parameter is no unreachable server: the engine handles it (openEnginePool)
    const refusal = pgError('08P01', 'unsupported startup parameter: options');
    expect(startupError(refusal, url)).toBe(refusal);
    const other = pgError('42501');
    expect(startupError(other, url)).toBe(other);
    // a pool given by the caller: the server's message names the database
    expect((startupError(pgError('3D000', 'database "from_env" does not exist'), null) as QueueError).message).toBe(
      'database "from_env" does not exist: create it (createdb from_env) or name another in the connection string',
    );
  });
});
