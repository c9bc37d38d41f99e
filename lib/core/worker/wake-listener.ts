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
  /** Whether open() asked the runtime to be told of a pooler. */
  private watching = false;

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
    // behind a transaction-mode pooler without the listen option, LISTEN would hear nothing: the loops poll
    const target = this.rt.listenTarget();
    if (target === null) return;
    if (!this.watching) {
      this.watching = true;
      // a pooler found later (a prepared statement lost) makes a LISTEN through the pool deaf: closed then
      this.rt.onPooler(() => {
        if (this.rt.listenTarget() === null) void this.close();
      });
    }
    this.notifier = new Notifier(
      target,
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
