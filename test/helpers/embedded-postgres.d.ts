// Types of embedded-postgres.js (plain JS, so that Jest's global setup and child processes load it too).

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number>;

/** A server in a new temporary directory, created and not started; the caller removes `dir`. */
export function createEmbeddedPostgres(options: {
  prefix: string;
  persistent: boolean;
  maxConnections: number;
  durable?: boolean;
  /** More server flags: `['-c', 'name=value', …]`. */
  flags?: string[];
}): Promise<{
  server: { initialise(): Promise<void>; start(): Promise<void>; stop(): Promise<void> };
  dir: string;
  url: string;
}>;

/** Whether the embedded binaries ship the server library `name` (e.g. pg_stat_statements). */
export function embeddedShipsLibrary(name: string): Promise<boolean>;
