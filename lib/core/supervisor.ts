/**
 * Runs the maintenance pass on a timer: once soon after start, then every interval, never two at once.
 * A failing pass is reported and the next one runs on schedule.
 */
export class Supervisor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    // unref: a pending pass never keeps the process alive (close() stops it; a failed boot may never call close()).
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass()
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
