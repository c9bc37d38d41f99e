// The dashboard's snapshots as `redact` lets them be seen. A snapshot carries jobs' failure messages (the feed, the
// problems); these go through redact once per snapshot, however many pages are open, and once per feed event, however
// many snapshots it stays in. Without redact a snapshot is shown as the sampler took it.
import { redactMessage, type Redact } from '../http/redact.js';
import type { DashboardSnapshot, FeedEvent, Problem } from './model.js';

export class SnapshotRedactor {
  private readonly views = new WeakMap<DashboardSnapshot, DashboardSnapshot>();
  /** Feed events are kept from one snapshot to the next as the same objects: each is redacted once. */
  private readonly events = new WeakMap<FeedEvent, FeedEvent>();
  /** The problems of the snapshot before, by job and message: a problem stays listed for many snapshots. */
  private problems = new Map<string, string>();

  constructor(private readonly redact: Redact | undefined) {}

  /** `s` as it may be seen: the same object for the same snapshot. */
  view(s: DashboardSnapshot): DashboardSnapshot {
    if (!this.redact) return s;
    let seen = this.views.get(s);
    if (!seen) {
      seen = { ...s, feed: s.feed.map((e) => this.event(e)), problems: this.redactProblems(s.problems) };
      this.views.set(s, seen);
    }
    return seen;
  }

  private event(e: FeedEvent): FeedEvent {
    if (e.message === undefined) return e;
    let seen = this.events.get(e);
    if (!seen) {
      seen = { ...e, message: redactMessage({ id: e.id, queue: e.queue, message: e.message, at: e.at, attempt: null }, this.redact) };
      this.events.set(e, seen);
    }
    return seen;
  }

  private redactProblems(problems: readonly Problem[]): Problem[] {
    const kept = new Map<string, string>();
    const out = problems.map((p) => {
      const key = `${p.id}\u0000${p.error}`;
      let error = this.problems.get(key);
      if (error === undefined)
        error = redactMessage({ id: p.id, queue: p.queue, message: p.error, at: p.at, attempt: p.attempts }, this.redact);
      kept.set(key, error);
      return { ...p, error };
    });
    this.problems = kept;
    return out;
  }
}
