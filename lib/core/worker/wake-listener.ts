// The LISTEN connection of an engine's loops: opened with the first loop (when useListenNotify is on), it hands
// each wake-up to the loops of its queue and, after a reconnect, tells every loop to look (notifications sent
// while it was down are gone). The connection itself, with its reconnects, is the Notifier (notifier.ts).
import type { Runtime } from '../runtime/runtime.js';
import { Notifier } from './notifier.js';

/** What the listener needs of a loop. */
export interface WakeableLoop {
  readonly queue: string;
  /** A NOTIFY for its queue: a job is ready, or due in `dueInMs`. */
  heard(dueInMs: number): void;
  /** The connection is back: look for jobs whose NOTIFY was missed. */
  reconnected(): void;
}

/** One engine's LISTEN connection for its loops: opened with the first loop, closed by stopWorkers() and close(). */
export class WakeListener {
  private notifier: Notifier | null = null;

  constructor(
    private readonly rt: Runtime,
    private readonly loops: () => Iterable<WakeableLoop>,
  ) {}

  /**
   * Opens the connection unless it is open, off (useListenNotify false) or the engine closing. A failure to open
   * is reported, not thrown: polling still finds every job, and the notifier keeps trying in the background.
   */
  async open(): Promise<void> {
    if (!this.rt.config.useListenNotify || this.notifier || this.rt.closing) return;
    this.notifier = new Notifier(
      this.rt.connectionOptions,
      this.rt.config.channel,
      (queue, dueInMs) => {
        for (const loop of this.loops()) if (loop.queue === queue) loop.heard(dueInMs);
      },
      () => {
        for (const loop of this.loops()) loop.reconnected();
      },
      this.rt.log,
      {
        lost: (err) =>
          this.rt.events.error(err ?? new Error('the connection ended'), 'LISTEN connection lost; reconnecting, and polling meanwhile'),
        regained: () => this.rt.events.warning('the LISTEN connection is back'),
      },
    );
    try {
      await this.notifier.start();
    } catch (err) {
      this.rt.events.error(err, 'opening the LISTEN connection');
    }
  }

  /** Closes the connection; open() opens a new one. */
  async close(): Promise<void> {
    await this.notifier?.stop();
    this.notifier = null;
  }
}
