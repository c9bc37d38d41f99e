// The due clock: when the next job of a worker's queue becomes claimable without anyone sending a NOTIFY for it
// at that moment (a deferred job, a retry that waits for its delay, a rate-limit window that opens), so that the
// loop sleeps until then instead of until its next poll.
import type { Executor } from '../runtime/db.js';
import type { Statements } from '../sql/index.js';

/** What the due clock reads: the queue's next due time (nextDue), where the queue's jobs are now. */
export interface DueClockScope {
  readonly exec: Executor;
  readonly statements: Statements;
  readonly queue: string;
}

/**
 * Keeps the earliest moment (on this process's clock) at which a job of the queue becomes due, as far as it is
 * known. It is learnt two ways: read from the database (`read`, a few index probes) when what is known may be out
 * of date, and announced by the NOTIFY of whoever made such a job (`announce`). It goes out of date when it is
 * reached (the job it stood for was claimed or taken), at each poll (a job nobody announced: an older writer, a
 * write by hand, a rate window another process filled), and when the LISTEN connection was lost.
 *
 * Times travel as "milliseconds from now", measured on the database's clock when the statement ran: no clock
 * of this process is compared with the database's, so a skew between them costs nothing.
 */
export class DueClock {
  /** Date.now() at which the earliest known waiting job is due; null when none is known. */
  private dueAt: number | null = null;
  private stale = true;
  /** The database's time of the last read, as nextDue returned it: the next read looks for jobs due since. */
  private lastReadAt: string | null = null;

  constructor(private readonly scope: DueClockScope) {}

  /** A NOTIFY said a job is due in `ms`. Whether that is earlier than anything known (a sleeping loop re-arms). */
  announce(ms: number): boolean {
    const at = Date.now() + ms;
    if (this.dueAt !== null && this.dueAt <= at) return false;
    this.dueAt = at;
    return true;
  }

  /** What is known may be out of date: the next `refresh` reads it again. */
  expire(): void {
    this.stale = true;
  }

  /**
   * Before the loop sleeps, after a claim: reads the due time again when what is known is out of date or was
   * reached. A job that became due since the previous read and is still waiting is due now (it may have become
   * due after the claim looked). A read that fails leaves what is known out of date (the loop polls meanwhile),
   * and rethrows.
   */
  async refresh(): Promise<void> {
    if (this.dueAt !== null && this.dueAt <= Date.now()) this.stale = true;
    if (!this.stale) return;
    this.stale = false;
    // Cleared while the read is in flight: what NOTIFYs announce meanwhile lands here, and is kept beside what the
    // read says (its snapshot may predate them).
    const known = this.dueAt;
    this.dueAt = null;
    try {
      const rows = await this.scope.exec.query<{ due_in_ms: number | null; read_at: string }>(this.scope.statements.nextDue, [
        this.scope.queue,
        this.lastReadAt,
      ]);
      const ms = rows[0]?.due_in_ms ?? null;
      this.lastReadAt = rows[0]?.read_at ?? this.lastReadAt;
      this.dueAt = earlier(ms === null ? null : Date.now() + Math.max(0, ms), this.dueAt);
    } catch (err) {
      // A time that was reached is forgotten (it would wake the loop at once, again and again); one ahead is kept.
      this.dueAt = earlier(known !== null && known > Date.now() ? known : null, this.dueAt);
      this.stale = true;
      throw err;
    }
  }

  /** How long a loop waiting for work sleeps: until the due time, at most `pollMs`. */
  sleepFor(pollMs: number): number {
    return this.dueAt === null ? pollMs : Math.min(pollMs, Math.max(0, this.dueAt - Date.now()));
  }
}

function earlier(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
