// Types of pgbouncer.js (plain JS, so that bench/pooler.mjs loads it too).

/** The pgbouncer executable, or null when this machine has none. */
export function pgBouncerBinary(): string | null;

/** Why no PgBouncer can run here (no executable; root with no postgres user to run it as), or null. */
export function pgBouncerUnavailable(): string | null;

export interface PgBouncer {
  /** The server's URL, through the bouncer. */
  readonly url: string;
  /** What the bouncer logged so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Startup parameters it lets through without passing them on (`options` makes it drop the engine's session settings). */
  ignoreStartupParameters?: string[];
  /** Server connections per database and user (default 20). */
  poolSize?: number;
  /** Its pool_mode (default transaction). */
  poolMode?: 'session' | 'transaction';
}

/** Starts a PgBouncer (transaction mode by default) in front of `targetUrl`'s server; resolves once a query passes through it. */
export function startPgBouncer(targetUrl: string, options?: PgBouncerOptions): Promise<PgBouncer>;
