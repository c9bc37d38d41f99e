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

/** The running jobs of a loop per group, against their local limits. */
export class LocalGroups {
  /** Jobs of each group this loop runs now, whatever their tiers. */
  private readonly running = new Map<string, number>();
  private readonly tierNames: string[];
  private readonly tierLimits: number[];
  /**
   * A group running this many jobs has room for no job of any tier (the highest limit; Infinity when a tier or the
   * groups of no listed tier have none): the claim passes over it altogether.
   */
  private readonly highest: number;
  /** A group running this many jobs has had jobs of some tier passed over (the lowest limit). */
  private readonly lowest: number;

  /** `freed`: a group at some tier's limit has room again (the loop claims again: its jobs were passed over). */
  constructor(
    private readonly limits: LocalGroupLimits,
    private readonly freed: () => void,
  ) {
    this.tierNames = Object.keys(limits.tiers);
    this.tierLimits = this.tierNames.map((t) => limits.tiers[t]!);
    const all = [...this.tierLimits, limits.default ?? Infinity];
    this.highest = Math.max(...all);
    this.lowest = Math.min(...all);
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
    this.running.set(id, (this.running.get(id) ?? 0) + 1);
  }

  /** A job's handler returned, or its attempt was cut off or handed back: its slot is free. */
  end(row: ClaimedRow): void {
    const id = row.group_id;
    if (id == null) return;
    const count = this.running.get(id);
    if (count === undefined) return;
    if (count <= 1) this.running.delete(id);
    else this.running.set(id, count - 1);
    if (count >= this.lowest) this.freed();
  }

  /** Jobs of group `id` running now. */
  count(id: string): number {
    return this.running.get(id) ?? 0;
  }

  /**
   * What the next claim leaves out: the groups with room for no tier, and the counts of the others that run (the
   * claim gives each candidate its own tier's limit less its group's count: LOCAL_ROOM in sql/claim.ts).
   */
  claimArgs(): LocalGroupArgs {
    const saturated: string[] = [];
    const busy: string[] = [];
    const counts: number[] = [];
    for (const [id, count] of this.running) {
      if (count >= this.highest) saturated.push(id);
      else if (count >= 1) {
        busy.push(id);
        counts.push(count);
      }
    }
    return { saturated, busy, counts, default: this.limits.default, tiers: this.tierNames, limits: this.tierLimits };
  }
}
