/** The channel is derived from the validated schema name at configuration time, never from input. */
export const listen = (channel: string) => `LISTEN "${channel}"`;

/**
 * A NOTIFY sent through the engine's pool on the LISTEN channel ($1) with a payload that names no queue ($2), to
 * check that the LISTEN connection hears what the pool sends (WakeListener's hearing check).
 */
export const hearingCheck = `SELECT pg_notify($1, $2)`;
