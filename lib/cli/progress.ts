// A progress bar for long commands (retry --failed), drawn on one line of a terminal's stderr. It is drawn only when
// stderr is a terminal and the output is not JSON: in a pipe or a log file, carriage returns would only pile up.

/** The bar's line: `retried 40/100 [######--------------]  40%`. A total passed by the count grows with it. */
export function renderProgress(label: string, done: number, total: number, width = 30): string {
  const of = Math.max(total, done);
  const ratio = of === 0 ? 1 : done / of;
  const filled = Math.round(ratio * width);
  const percent = String(Math.floor(ratio * 100)).padStart(3);
  return `${label} ${done}/${of} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent}%`;
}

/** A bar redrawn in place; `end()` leaves the last drawing on its line. Does nothing when not `enabled`. */
export class ProgressBar {
  private drawn = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly label: string,
    private readonly enabled: boolean,
  ) {}

  update(done: number, total: number): void {
    if (!this.enabled) return;
    // back to the line's start, and clear what a longer drawing left after it
    this.write(`\r${renderProgress(this.label, done, total)}\x1b[K`);
    this.drawn = true;
  }

  end(): void {
    if (this.drawn) this.write('\n');
    this.drawn = false;
  }
}
