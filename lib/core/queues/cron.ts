// Cron expressions and the slots of a schedule, as pure functions: croner parses and steps the expression (never a
// parser of our own), and slotsDue decides which slots a scheduler pass fires. The scheduler (scheduler.ts) feeds
// them the database's clock, so the slots are the same whichever instance computes them and whatever its clock.
import { Cron } from 'croner';
import { InvalidOptionError } from '../errors.js';

/** A parsed expression in its time zone: the first slot after a time, and the last one at or before it. */
export interface CronSlots {
  /** The first slot strictly after `afterMs` (ms since the epoch), or null when the expression has none left. */
  next(afterMs: number): number | null;
  /** The last slot at or before `atMs`, or null when the expression had none. */
  previous(atMs: number): number | null;
}

/**
 * How long after its slot a new schedule still fires that slot, as pg-boss does for a schedule created within the
 * minute of its slot: created inside a slot, a schedule fires it at once, as itself (slotsDue), not as missed.
 */
export const CURRENT_SLOT_MS = 60_000;

/** The slot a schedule made at `nowMs` starts from: the one it was made inside (CURRENT_SLOT_MS), else the next. */
export function firstSlot(cron: CronSlots, nowMs: number): number | null {
  const current = cron.previous(nowMs);
  return current !== null && nowMs - current < CURRENT_SLOT_MS ? current : cron.next(nowMs);
}

/** An IANA time zone name as the platform knows it (`UTC`, `Europe/Paris`), else an InvalidOptionError naming `field`. */
export function timeZone(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new InvalidOptionError(field, 'an IANA time zone name such as "Europe/Paris"', value);
  try {
    // as the platform spells it ('utc' is 'UTC'): a zone declared again in other letters is no change
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    throw new InvalidOptionError(field, 'an IANA time zone name such as "Europe/Paris"', value);
  }
}

const CRON_EXPECTED = 'a cron expression of 5 fields (minute hour day month weekday) or 6 (seconds first), with a run to come';

/**
 * Parses `expression` in time zone `tz` (already checked with timeZone). Five fields, or six with seconds first;
 * croner's extensions (L, W, #, nicknames such as @hourly) are accepted. An expression that cannot be parsed, or
 * that has no run after now, is an InvalidOptionError naming `field` and the expression.
 */
export function parseCron(field: string, expression: unknown, tz: string): CronSlots {
  if (typeof expression !== 'string' || expression.trim() === '') throw new InvalidOptionError(field, CRON_EXPECTED, expression);
  let cron: Cron;
  try {
    cron = new Cron(expression.trim(), { paused: true, timezone: tz, mode: '5-or-6-parts' });
  } catch (err) {
    throw new InvalidOptionError(field, `${CRON_EXPECTED} (${(err as Error).message})`, expression);
  }
  if (cron.nextRun() === null) throw new InvalidOptionError(field, CRON_EXPECTED, expression);
  return {
    next: (afterMs) => cron.nextRun(new Date(afterMs))?.getTime() ?? null,
    // croner counts a run earlier in the reference's own second: one millisecond on makes a slot at `atMs` count
    previous: (atMs) => cron.previousRuns(1, new Date(Math.floor(atMs) + 1))[0]?.getTime() ?? null,
  };
}

/**
 * A slot older than this when a pass reaches it was missed (nothing fired it in time: no instance ran, the
 * database was away): the schedule's `missed` setting says what becomes of it. A later slot fires, late, as itself.
 */
export const MISSED_AFTER_MS = 15_000;

/**
 * How many missed slots a pass counts for its warning: each is a step of the expression, and a month of a
 * per-second schedule must not hold a pass (they are passed over at once whatever their number).
 */
export const MISSED_COUNTED_MAX = 100;

/** What a pass does with one due schedule. */
export interface DuePlan {
  /** The slots to fire, each as its own job (ms since the epoch), oldest first. */
  fire: number[];
  /** Missed slots fire as one job, sent now (missed: 'once', and there were missed slots). */
  missedOnce: boolean;
  /** How many missed slots were passed over (fired as one, or skipped), counted up to MISSED_COUNTED_MAX. */
  missedCount: number;
  /** The schedule's next slot once these have fired: the first not fired, or null when it has none left. */
  next: number | null;
}

/**
 * Which slots a pass at `nowMs` fires for a schedule whose first unfired slot is `fromMs`; `lastFiredMs` is the
 * last slot (or missed-slot job) that fired, and no slot at or before it fires again, whatever `fromMs` says (a
 * schedule replaced while a pass fired it). Slots within MISSED_AFTER_MS of now fire one job each; older ones
 * were missed: with `'once'` they fire one job together, with `'skip'` none. The slot a schedule was created inside
 * (`createdMs`, firstSlot) fires as itself in a pass within MISSED_AFTER_MS of the creation, however old the slot.
 */
export function slotsDue(
  cron: CronSlots,
  fromMs: number,
  nowMs: number,
  missed: 'once' | 'skip',
  lastFiredMs: number | null = null,
  createdMs: number | null = null,
): DuePlan {
  // whole milliseconds: croner steps whole seconds, and a fractional bound could count one slot as both missed and due
  const now = Math.floor(nowMs);
  const lateFrom = now - MISSED_AFTER_MS;
  let slot: number | null = lastFiredMs !== null && fromMs <= lastFiredMs ? cron.next(lastFiredMs) : fromMs;
  const fire: number[] = [];
  // the slot the schedule was created inside (firstSlot; created_on is the clock firstSlot read), not fired yet, while
  // the schedule is new: a pass later than MISSED_AFTER_MS after the creation finds it missed, as any other
  if (
    slot !== null &&
    createdMs !== null &&
    slot <= createdMs &&
    createdMs - slot < CURRENT_SLOT_MS &&
    now - createdMs <= MISSED_AFTER_MS &&
    slot <= now
  ) {
    fire.push(slot);
    slot = cron.next(slot);
  }
  let missedCount = 0;
  if (slot !== null && slot < lateFrom) {
    for (let s: number | null = slot; s !== null && s < lateFrom && missedCount < MISSED_COUNTED_MAX; s = cron.next(s)) missedCount++;
    slot = cron.next(lateFrom - 1);
  }
  while (slot !== null && slot <= now) {
    fire.push(slot);
    slot = cron.next(slot);
  }
  return { fire, missedOnce: missed === 'once' && missedCount > 0, missedCount, next: slot };
}
