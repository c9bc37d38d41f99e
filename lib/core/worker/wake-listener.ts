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

/** Where the hearing check stands (see WakeListener.checkHearing). */
export type HearingCheck = 'unchecked' | 'checking' | 'heard' | 'deaf';

/** How long after a check that proved nothing (its NOTIFY failed, the connection came back meanwhile) it runs again. */
const RECHECK_MS = 5_000;

/** One engine's LISTEN connection for its loops: opened with the first loop, closed by stopWorkers() and close(). */
export class WakeListener {
  private notifier: Notifier | null = null;
  #check: HearingCheck = 'unchecked';
  /** Whether a hearing check is due: LISTEN is unproven (Runtime.listenUnproven) or a prepared statement was lost. */
  private due = false;
  /** Settle the reply a check waits for: heard (its NOTIFY, or another instance's, came back) or given up (close). */
  private hearing: (() => void) | null = null;
  private givingUp: (() => void) | null = null;
  private recheck: NodeJS.Timeout | null = null;

  constructor(
    private readonly rt: Runtime,
    private readonly loops: () => Iterable<WakeableLoop>,
  ) {
    rt.watchListen({
      // a prepared statement lost: what the pool's way allows is in doubt again (a deaf LISTEN stays deaf)
      check: () => {
        if (this.#check === 'deaf') return;
        if (this.#check === 'heard') this.#check = 'unchecked';
        this.due = true;
        this.maybeCheck();
      },
      deaf: () => {
        if (this.rt.listenTarget() === null) void this.close();
      },
    });
  }

  /**
   * Opens the connection unless it is open, off (useListenNotify false) or the engine closing. A failure to open
   * is reported, not thrown: polling still finds every job, and the notifier keeps trying in the background.
   */
  async open(): Promise<void> {
    if (!this.rt.config.useListenNotify || this.notifier || this.rt.closing) return;
    // a LISTEN on the pool's way found deaf (as through a transaction-mode pooler): the loops poll
    const target = this.rt.listenTarget();
    if (target === null) return;
    // Beside the engine's own pool, with its session settings found in place at start (openEnginePool), LISTEN hears
    // what the pool sends. Otherwise it must show it: a NOTIFY sent through the pool must come back.
    if (this.rt.listenUnproven && this.#check === 'unchecked') this.due = true;
    const notifier = new Notifier(
      target,
      this.rt.config.channel,
      (queue, dueInMs) => {
        if (queue === HEARING) this.hearing?.();
        else for (const loop of this.loops()) if (loop.queue === queue) loop.heard(dueInMs);
      },
      () => {
        for (const loop of this.loops()) loop.reconnected();
        // on each (re)connect: a check that is due runs now
        this.maybeCheck();
      },
      this.rt.log,
      {
        lost: (err) =>
          this.rt.events.error(err ?? new Error('the connection ended'), 'LISTEN connection lost; reconnecting, and polling meanwhile'),
        regained: () => this.rt.events.warning('the LISTEN connection is back'),
      },
    );
    this.notifier = notifier;
    try {
      await notifier.start();
    } catch (err) {
      this.rt.events.error(err, 'opening the LISTEN connection');
    }
  }

  /** Starts the hearing check when one is due, none is under way, and the connection is open. */
  private maybeCheck(): void {
    const notifier = this.notifier;
    if (!this.due || this.#check !== 'unchecked' || !notifier?.connected || this.rt.closing) return;
    void this.checkHearing(notifier);
  }

  /**
   * Sends a NOTIFY through the pool and waits HEARING_WAIT_MS, from its return, for the LISTEN connection to hear it
   * (or another instance's); twice, so that a stall of the pool or of this process (a long synchronous handler) is
   * not taken for deafness. Heard: done. Heard neither time while the connection stayed open: deaf, as behind a
   * transaction-mode pooler, and the runtime is told (Runtime.listenDeaf). A failed NOTIFY, or a reconnect meanwhile,
   * proves nothing: the check runs again at the next connect, or after RECHECK_MS.
   */
  private async checkHearing(notifier: Notifier): Promise<void> {
    this.#check = 'checking';
    try {
      const opened = notifier.opened;
      const unchanged = () => this.notifier === notifier && notifier.connected && notifier.opened === opened && !this.rt.closing;
      for (let attempt = 0; attempt < 2; attempt++) {
        const reply = this.awaitReply();
        try {
          await this.rt.background.query(hearingCheck, [this.rt.config.channel, HEARING]);
          reply.arm(HEARING_WAIT_MS);
          if (await reply.heard) {
            this.#check = 'heard';
            this.due = false;
            return;
          }
        } finally {
          reply.done();
        }
        if (!unchanged()) return;
      }
      this.#check = 'deaf';
      this.due = false;
      this.rt.listenDeaf(HEARING_WAIT_MS);
    } catch {
      // the NOTIFY did not go out (the database away, the engine closing): nothing is known
    } finally {
      if (this.#check === 'checking') {
        this.#check = 'unchecked';
        if (this.due && !this.rt.closing && this.recheck === null) {
          this.recheck = setTimeout(() => {
            this.recheck = null;
            this.maybeCheck();
          }, RECHECK_MS);
          this.recheck.unref();
        }
      }
    }
  }

  /**
   * The reply one NOTIFY of the check waits for: `heard` resolves true when a `#hearing` NOTIFY arrives, false once
   * `arm(ms)`'s time has passed (after a turn of the event loop, so that a NOTIFY already in the socket is read first)
   * or the listener closes. Its timer never keeps the process alive.
   */
  private awaitReply(): { heard: Promise<boolean>; arm(ms: number): void; done(): void } {
    let settle!: (heard: boolean) => void;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => (settle = resolve));
    this.hearing = () => settle(true);
    this.givingUp = () => settle(false);
    return {
      heard,
      arm: (ms) => {
        timer = setTimeout(() => setImmediate(() => settle(false)), ms);
        timer.unref();
      },
      done: () => {
        clearTimeout(timer);
        this.hearing = null;
        this.givingUp = null;
      },
    };
  }

  /** Whether the LISTEN connection is open, or opening (tests read it through the loop registry). */
  get listening(): boolean {
    return this.notifier !== null;
  }

  /** Where the hearing check stands (tests read it through the loop registry). */
  get hearingCheck(): HearingCheck {
    return this.#check;
  }

  /** Closes the connection; open() opens a new one. */
  async close(): Promise<void> {
    const notifier = this.notifier;
    this.notifier = null;
    if (this.recheck) clearTimeout(this.recheck);
    this.recheck = null;
    // a check under way ends now, concluding nothing (its notifier is gone)
    this.givingUp?.();
    await notifier?.stop();
  }
}
