// The LISTEN connection of an engine's loops: opened with the first loop (when useListenNotify is on), it hands
// each wake-up to the loops of its queue and, after a reconnect, tells every loop to look (notifications sent
// while it was down are gone). The connection itself, with its reconnects, is the Notifier (notifier.ts).
import type { Runtime } from '../runtime/runtime.js';
import { hearingCheck } from '../sql/notify.js';
import { Notifier } from './notifier.js';

/** The hearing check's payload: a name no queue has (queue names are [A-Za-z0-9_.-/:]), so no loop wakes for it. */
const HEARING = '#hearing';

/** How long the hearing check's NOTIFY may take to come back before the LISTEN connection is taken as deaf. */
export const HEARING_WAIT_MS = 10_000;

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
  /** Settle the hearing check under way: heard (its NOTIFY, or another instance's, came back) or given up (close). */
  private hearing: (() => void) | null = null;
  private givingUp: (() => void) | null = null;
  /** Where the hearing check stands: run until it concludes, and again after a prepared statement is lost. */
  #check: 'unchecked' | 'checking' | 'heard' | 'deaf' = 'unchecked';

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
    // a LISTEN on the pool's way found deaf (as through a transaction-mode pooler): the loops poll
    const target = this.rt.listenTarget();
    if (target === null) return;
    if (!this.watching) {
      this.watching = true;
      this.rt.watchListen({
        // a prepared statement lost: what the pool's way allows is in doubt again
        check: () => {
          if (this.#check !== 'checking') this.#check = 'unchecked';
          if (this.notifier) void this.checkHearing(this.notifier);
        },
        deaf: () => {
          if (this.rt.listenTarget() === null) void this.close();
        },
      });
    }
    this.notifier = new Notifier(
      target,
      this.rt.config.channel,
      (queue, dueInMs) => {
        if (queue === HEARING) this.hearing?.();
        else for (const loop of this.loops()) if (loop.queue === queue) loop.heard(dueInMs);
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
      return;
    }
    // Beside the engine's own pool, with its session settings found in place at start (openEnginePool), LISTEN hears
    // what the pool sends. Otherwise it must show it: a NOTIFY sent through the pool must come back.
    if (this.rt.listenUnproven) void this.checkHearing(this.notifier);
  }

  /**
   * Sends a NOTIFY through the pool and waits up to HEARING_WAIT_MS for the LISTEN connection to hear it (or any
   * instance's check). Heard: done. Not heard while the connection stayed open and the NOTIFY went out: the
   * connection is deaf, as behind a transaction-mode pooler, and the runtime is told (Runtime.listenDeaf). A failed
   * NOTIFY or a reconnect meanwhile proves nothing: the check runs again at the next open().
   */
  private async checkHearing(notifier: Notifier): Promise<void> {
    if (this.#check !== 'unchecked') return;
    this.#check = 'checking';
    const opened = notifier.opened;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      this.hearing = () => resolve(true);
      this.givingUp = () => resolve(false);
      timer = setTimeout(() => resolve(false), HEARING_WAIT_MS);
    });
    try {
      await this.rt.background.query(hearingCheck, [this.rt.config.channel, HEARING]);
      const ok = await heard;
      if (ok) this.#check = 'heard';
      else if (this.notifier === notifier && notifier.connected && notifier.opened === opened && !this.rt.closing) {
        this.#check = 'deaf';
        this.rt.listenDeaf(HEARING_WAIT_MS);
      }
    } catch {
      // the NOTIFY did not go out (the database away, the engine closing): nothing is known
    } finally {
      clearTimeout(timer);
      this.hearing = null;
      this.givingUp = null;
      if (this.#check === 'checking') this.#check = 'unchecked';
    }
  }

  /** Whether the LISTEN connection is open, or opening (tests read it through the loop registry). */
  get listening(): boolean {
    return this.notifier !== null;
  }

  /** Where the hearing check stands (tests read it through the loop registry). */
  get hearingCheck(): 'unchecked' | 'checking' | 'heard' | 'deaf' {
    return this.#check;
  }

  /** Closes the connection; open() opens a new one. */
  async close(): Promise<void> {
    const notifier = this.notifier;
    this.notifier = null;
    // a check under way ends now, concluding nothing (its notifier is gone), and keeps no timer running
    this.givingUp?.();
    await notifier?.stop();
  }
}
