// What the dashboard's event stream sends for each snapshot, serialised once for every viewer: a viewer's first
// event is the whole snapshot; each later one leaves out the depth history (120 points per queue, most of a
// snapshot's bytes with many queues) and carries only the points added since the snapshot before. Every viewer
// gets every snapshot the sampler sends after its first, in order, so the points before are those it holds.
import type { DashboardSnapshot } from './model.js';

export type DepthPoint = DashboardSnapshot['depth'][number];

export class SnapshotEncoder {
  private current: DashboardSnapshot | null = null;
  private previous: DashboardSnapshot | null = null;
  private fullText: string | null = null;
  private deltaText: string | null = null;

  /** The whole snapshot as JSON (a viewer's first event). */
  full(s: DashboardSnapshot): string {
    this.track(s);
    return (this.fullText ??= JSON.stringify(s));
  }

  /** The snapshot without its depth history, with `depthAppend`: the points since the snapshot before it. */
  delta(s: DashboardSnapshot): string {
    this.track(s);
    if (this.deltaText === null) {
      const since = this.previous?.depth.at(-1)?.at ?? -Infinity;
      const { depth, ...rest } = s;
      this.deltaText = JSON.stringify({ ...rest, depthAppend: depth.filter((p) => p.at > since) });
    }
    return this.deltaText;
  }

  private track(s: DashboardSnapshot): void {
    if (s === this.current) return;
    this.previous = this.current;
    this.current = s;
    this.fullText = null;
    this.deltaText = null;
  }
}
