// A loop's localGroupConcurrency: how many jobs of each group its handlers run now, counted in the process as
// attempts take and free their slots, and what the next claim must leave out. Counting here costs the claim
// nothing: the database is told the counts instead of counting active rows.
import type { LocalGroupArgs } from '../../sql/index.js';
import type { ClaimedRow } from './claim.js';

/** The limits as parsed: one for groups of any tier not listed (`default`, null: none), and per tier. */
export interface LocalGroupLimits {
  default: number | null;
  tiers: Record<string, number>;
}

/** A group this loop runs jobs of: how many, and the tier its limit is read from (its latest job's). */
interface Running {
  count: number;
  limit: number;
}

/** The running jobs of a loop per group, against their local limits. */
export class LocalGroups {
  private readonly running = new Map<string, Running>();
  private readonly tierNames: string[];
  private readonly tierLimits: number[];

  /** `freed`: a group at its limit has room again (the loop claims again: its jobs were passed over). */
  constructor(
    private readonly limits: LocalGroupLimits,
    private readonly freed: () => void,
  ) {
    this.tierNames = Object.keys(limits.tiers);
    this.tierLimits = this.tierNames.map((t) => limits.tiers[t]!);
  }

  /** The limit of a job of tier `tier` (null: the tier has none). */
  limitOf(tier: string | null | undefined): number | null {
    // own tiers only: a job's tier may be `constructor` or `__proto__`
    return (tier != null && Object.hasOwn(this.limits.tiers, tier) ? this.limits.tiers[tier] : undefined) ?? this.limits.default;
  }

  /** A job's handler takes a slot. */
  start(row: ClaimedRow): void {
    const id = row.group_id;
    if (id == null) return;
    const limit = this.limitOf(row.group_tier) ?? Infinity;
    const r = this.running.get(id);
    if (r) {
      r.count++;
      r.limit = limit;
    } else this.running.set(id, { count: 1, limit });
  }

  /** A job's handler returned, or its attempt was cut off or handed back: its slot is free. */
  end(row: ClaimedRow): void {
    const id = row.group_id;
    if (id == null) return;
    const r = this.running.get(id);
    if (!r) return;
    const wasFull = r.count >= r.limit;
    if (--r.count <= 0) this.running.delete(id);
    if (wasFull) this.freed();
  }

  /** Jobs of group `id` running now. */
  count(id: string): number {
    return this.running.get(id)?.count ?? 0;
  }

  /** What the next claim leaves out: the groups at their limit, and the room of the others that run. */
  claimArgs(): LocalGroupArgs {
    const saturated: string[] = [];
    const busy: string[] = [];
    const rooms: number[] = [];
    for (const [id, r] of this.running) {
      if (r.count >= r.limit) saturated.push(id);
      else if (r.limit !== Infinity) {
        busy.push(id);
        rooms.push(r.limit - r.count);
      }
    }
    return { saturated, busy, rooms, default: this.limits.default, tiers: this.tierNames, limits: this.tierLimits };
  }
}
