// Reports a worker's slow claims: a `slow-claim` warning when a claim takes longer than the engine's threshold,
// at most once per minute per loop, so a database that stays slow does not flood the listeners.
import type { EngineEvents } from '../../events.js';

/** A queue's slow claims are reported at most this often per loop. */
const SLOW_CLAIM_REPORT_MS = 60_000;

export class SlowClaims {
  /** When this loop last reported a slow claim (performance.now()). */
  private reportedAt = -Infinity;

  /** `thresholdMs`: a claim slower than this is reported; 0: never. */
  constructor(
    private readonly queue: string,
    private readonly thresholdMs: number,
    private readonly events: Pick<EngineEvents, 'warning'>,
  ) {}

  /** A claim took `ms` milliseconds. */
  timed(ms: number): void {
    const threshold = this.thresholdMs;
    if (threshold <= 0 || ms <= threshold || performance.now() - this.reportedAt < SLOW_CLAIM_REPORT_MS) return;
    this.reportedAt = performance.now();
    this.events.warning({
      type: 'slow-claim',
      message: `a claim of queue "${this.queue}" took ${Math.round(ms)} ms (warningSlowClaimMs: ${threshold})`,
      queue: this.queue,
      milliseconds: ms,
      thresholdMs: threshold,
    });
  }
}
