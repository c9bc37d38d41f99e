/**
 * Runs passes one after another, however many timers ask: an instance's maintenance and monitor passes share one,
 * so that they never hold two of the pool's connections at once (a pass holds one for its transaction).
 */
export class PassLane {
  private tail: Promise<void> = Promise.resolve();

  run(pass: () => Promise<void>): Promise<void> {
    const run = this.tail.then(pass);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/**
 * Runs a pass on a timer: once soon after start, then every interval, never two at once (and, through a shared
 * PassLane, never beside another timer's pass). A failing pass is reported and the next one runs on schedule.
 */
export class Supervisor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
    private readonly lane: PassLane = new PassLane(),
  ) {}

  start(): void {
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    // unref: a pending pass never keeps the process alive (close() stops it; a failed boot may never call close()).
    this.timer = setTimeout(() => {
      this.timer = null;
      // a pass that waited in the lane while stop() began does not start
      this.running = this.lane
        .run(() => (this.stopped ? Promise.resolve() : this.pass()))
        .catch(this.onError)
        .finally(() => {
          this.running = null;
          this.schedule(this.intervalMs);
        });
    }, delayMs).unref();
  }

  /** Cancels the next pass and waits for a running one to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
