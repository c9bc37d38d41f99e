// The oldest PostgreSQL the queue runs on, and the decision every start makes with the server's version. The version
// is read in a statement the start sends anyway (sql/migrate.ts: sessionSettings for migrate(), migrationsTablePresent
// for installedVersion()), so the check costs no round trip, and none on any later call.
import { UnsupportedServerError } from '../errors.js';

/**
 * The oldest major version supported: 15, the first with NULLS NOT DISTINCT, which the unique indexes of the
 * singleton, stately, exclusive, short and throttle policies need so that jobs without a key share the one null
 * key (schema/migrations/0001_init.ts). On 14 the first migration would fail with a syntax error.
 */
export const MIN_SERVER_MAJOR = 15;

/** `server_version_num` as people write the version: 150020 is 15.20; before 10 it had three parts, 90624 is 9.6.24. */
export function serverVersionText(versionNum: number): string {
  const major = Math.floor(versionNum / 10_000);
  if (major >= 10) return `${major}.${versionNum % 10_000}`;
  return `${major}.${Math.floor(versionNum / 100) % 100}.${versionNum % 100}`;
}

/** The error that refuses a server whose `server_version_num` is older than MIN_SERVER_MAJOR, else null. */
export function unsupportedServer(versionNum: number): UnsupportedServerError | null {
  if (versionNum >= MIN_SERVER_MAJOR * 10_000) return null;
  return new UnsupportedServerError(serverVersionText(versionNum), MIN_SERVER_MAJOR);
}
