/**
 * The forced passes of one instance, shared: a caller asked for a pass that starts after its call (its work is of
 * now), and however many ask at once, one pass runs and at most one waits behind it, which every caller that comes
 * meanwhile shares. So a burst of forced calls holds at most two of the pool's connections, not one each.
 */
export class ForcedTurn<T> {
  private running: Promise<T> | null = null;
  private next: Promise<T> | null = null;

  /** A pass of `pass` that starts after this call: the one about to start, or one queued behind the one running. */
  take(pass: () => Promise<T>): Promise<T> {
    if (!this.running) {
      this.running = pass().finally(() => (this.running = null));
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return this.take(pass);
      });
    return this.next;
  }
}
