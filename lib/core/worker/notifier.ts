import pg from 'pg';
import { listen } from '../sql/notify.js';
import type { QueueLogger } from '../types.js';

/**
 * Reads a wake-up NOTIFY's payload (WAKE_PAYLOAD in sql/fragments.ts): a queue name, or a queue name, a space and
 * the milliseconds until its job becomes due. `dueInMs` is 0 for a job that may run now.
 */
export function parseWake(payload: string): { queue: string; dueInMs: number } {
  const space = payload.indexOf(' ');
  if (space < 0) return { queue: payload, dueInMs: 0 };
  const ms = Number(payload.slice(space + 1));
  return { queue: payload.slice(0, space), dueInMs: Number.isFinite(ms) && ms > 0 ? ms : 0 };
}

/**
 * Holds one dedicated connection that LISTENs on the schema's channel and hands each wake-up (a queue, and when
 * its job is due) to `onWake`. The connection is re-opened with backoff when it drops; after each (re)connect
 * `onConnected` runs, because notifications sent while it was down are gone and loops must look.
 */
export class Notifier {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelayMs = 0;
  private opening: Promise<void> | null = null;
  /** A connection being opened (first or reconnect); stop() ends it so that it cannot outlive us. */
  private connecting: pg.Client | null = null;

  constructor(
    private readonly clientConfig: pg.ClientConfig,
    private readonly channel: string,
    private readonly onWake: (queue: string, dueInMs: number) => void,
    private readonly onConnected: () => void,
    private readonly log: QueueLogger,
    /** Told when the connection is lost (`err` null: it ended) and when it is back after a loss. */
    private readonly report: { lost(err: Error | null): void; regained(): void } = {
      lost: (err) => log.warn(`LISTEN connection lost${err ? `: ${err.message}` : ''}; reconnecting (polling continues meanwhile)`),
      regained: () => log.log('LISTEN connection is back'),
    },
  ) {}

  /** Set from a loss until the connection is back. */
  private wasLost = false;
  /** Connections opened so far: a check that spans a reconnect sees it change. */
  #opened = 0;

  /** How many times the connection has been opened (first and reconnects). */
  get opened(): number {
    return this.#opened;
  }

  /** Whether the connection is open now. */
  get connected(): boolean {
    return this.client !== null;
  }

  /** Opens the connection; resolves once LISTEN is in place (or throws if the first attempt fails). */
  start(): Promise<void> {
    this.opening ??= this.open().catch((err: unknown) => {
      // Polling covers the gap; keep trying in the background.
      this.scheduleReconnect();
      throw err;
    });
    return this.opening;
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ ...this.clientConfig, connectionTimeoutMillis: this.clientConfig.connectionTimeoutMillis || 10_000 });
    this.connecting = client;
    client.on('notification', (msg) => {
      if (msg.channel !== this.channel || !msg.payload) return;
      const { queue, dueInMs } = parseWake(msg.payload);
      this.onWake(queue, dueInMs);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(listen(this.channel));
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    } finally {
      if (this.connecting === client) this.connecting = null;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.#opened++;
    this.retryDelayMs = 0;
    if (this.wasLost) {
      this.wasLost = false;
      try {
        this.report.regained();
      } catch {
        // as in lost(): the connection is open whatever the report does
      }
    }
    this.onConnected();
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client || this.stopped) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.wasLost = true;
    this.scheduleReconnect();
    // after the reconnect is scheduled: a report that throws must not stop it (nor reach pg's event handler)
    try {
      this.report.lost(err);
    } catch {
      // the engine's reports never throw; a custom one is not ours to crash on
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryDelayMs = Math.min(Math.max(this.retryDelayMs * 2, 100), 5000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.open().catch((err: Error) => {
        this.log.warn(`LISTEN reconnect failed: ${err.message}`);
        this.scheduleReconnect();
      });
    }, this.retryDelayMs);
  }

  /** Closes the connection and cancels any pending reconnect. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.connecting?.end().catch(() => undefined);
    await this.opening?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
