import {
  CURRENT_SLOT_MS,
  firstSlot,
  MISSED_AFTER_MS,
  MISSED_COUNTED_MAX,
  parseCron,
  slotsDue,
  timeZone,
} from '../../lib/core/queues/cron.js';
import { InvalidOptionError } from '../../lib/core/errors.js';
import { parseDeclaredSchedule, parseSchedule } from '../../lib/core/queues/schedules.js';

const at = (iso: string) => Date.parse(iso);

describe('parseCron', () => {
  it('steps a five-field expression by minutes and a six-field one by seconds, strictly after the time given', () => {
    const every5min = parseCron('cron', '*/5 * * * *', 'UTC');
    expect(every5min.next(at('2026-03-01T10:02:30Z'))).toBe(at('2026-03-01T10:05:00Z'));
    expect(every5min.next(at('2026-03-01T10:05:00Z'))).toBe(at('2026-03-01T10:10:00Z'));
    const everySecond = parseCron('cron', '* * * * * *', 'UTC');
    expect(everySecond.next(at('2026-03-01T10:00:00.400Z'))).toBe(at('2026-03-01T10:00:01Z'));
  });

  it('reads the expression in its time zone, daylight saving included', () => {
    const nineInParis = parseCron('cron', '0 9 * * *', 'Europe/Paris');
    expect(nineInParis.next(at('2026-01-15T00:00:00Z'))).toBe(at('2026-01-15T08:00:00Z')); // UTC+1 in winter
    expect(nineInParis.next(at('2026-07-15T00:00:00Z'))).toBe(at('2026-07-15T07:00:00Z')); // UTC+2 in summer
  });

  it.each([
    ['61 * * * *', /cron must be a cron expression.*Invalid value for minute/],
    ['* * *', /cron must be a cron expression/],
    ['', /cron must be a cron expression/],
    [42, /cron must be a cron expression/],
    ['0 0 30 2 *', /with a run to come.*got "0 0 30 2 \*"/], // February 30th never comes
  ])('refuses %j, naming the value', (expression, message) => {
    expect(() => parseCron('cron', expression, 'UTC')).toThrow(InvalidOptionError);
    expect(() => parseCron('cron', expression, 'UTC')).toThrow(message);
  });

  it('refuses a time zone the platform does not know', () => {
    expect(timeZone('options.tz', 'Europe/Paris')).toBe('Europe/Paris');
    expect(timeZone('options.tz', 'utc')).toBe('UTC'); // as the platform spells it
    expect(() => timeZone('options.tz', 'Mars/Olympus')).toThrow(/options\.tz must be an IANA time zone name.*got "Mars\/Olympus"/);
    expect(() => timeZone('options.tz', '')).toThrow(InvalidOptionError);
  });
});

describe('slotsDue', () => {
  const everySecond = parseCron('cron', '* * * * * *', 'UTC');
  const now = at('2026-03-01T10:00:00Z');

  it('fires every slot from the first unfired one up to now, each once, and says the next', () => {
    const plan = slotsDue(everySecond, now - 3000, now, 'once');
    expect(plan.fire).toEqual([now - 3000, now - 2000, now - 1000, now]);
    expect(plan).toMatchObject({ missedOnce: false, missedCount: 0, next: now + 1000 });
  });

  it('fires a late slot as itself while it is within MISSED_AFTER_MS', () => {
    const plan = slotsDue(everySecond, now - MISSED_AFTER_MS, now, 'skip');
    expect(plan.fire).toHaveLength(MISSED_AFTER_MS / 1000 + 1);
    expect(plan.missedCount).toBe(0);
  });

  it("missed slots fire as one job with 'once', as none with 'skip'; the recent ones still fire each", () => {
    const from = now - 600_000; // ten minutes without a scheduler
    const once = slotsDue(everySecond, from, now, 'once');
    expect(once.missedOnce).toBe(true);
    expect(once.missedCount).toBe(MISSED_COUNTED_MAX); // 585 missed, counted up to the cap
    expect(once.fire[0]).toBe(now - MISSED_AFTER_MS);
    expect(once.fire.at(-1)).toBe(now);
    const skip = slotsDue(everySecond, from, now, 'skip');
    expect(skip.missedOnce).toBe(false);
    expect(skip.fire).toEqual(once.fire);
    expect(skip.next).toBe(now + 1000);
  });

  it('an hourly schedule back after a day fires its missed slots once, and the next is the coming hour', () => {
    const hourly = parseCron('cron', '0 * * * *', 'UTC');
    const plan = slotsDue(hourly, at('2026-02-28T09:00:00Z'), at('2026-03-01T10:20:00Z'), 'once');
    expect(plan).toEqual({ fire: [], missedOnce: true, missedCount: 26, next: at('2026-03-01T11:00:00Z') });
  });

  it('counts at most MISSED_COUNTED_MAX missed slots, and passes over all of them at once', () => {
    const plan = slotsDue(everySecond, now - 30 * 86_400_000, now, 'skip');
    expect(plan.missedCount).toBe(MISSED_COUNTED_MAX);
    expect(plan.fire[0]).toBe(now - MISSED_AFTER_MS);
    expect(plan.next).toBe(now + 1000);
  });
});

describe('slotsDue, edges', () => {
  const everySecond = parseCron('cron', '* * * * * *', 'UTC');
  const now = at('2026-03-01T10:00:00Z');

  it('never counts one slot as both missed and due when the clock reads a fraction of a millisecond', () => {
    // the database's clock has microseconds: the bound of the missed slots falls just past a slot
    const plan = slotsDue(everySecond, now - 16_000, now + 0.5, 'skip');
    expect(plan.missedCount).toBe(1);
    expect(plan.fire[0]).toBe(now - MISSED_AFTER_MS);
    expect(new Set(plan.fire).size).toBe(plan.fire.length);
  });

  it('never fires again a slot at or before the last one fired, whatever the next slot says', () => {
    // a schedule replaced while a pass fired it: its next slot was counted from a clock read before that pass
    const plan = slotsDue(everySecond, now - 2000, now, 'once', now - 1000);
    expect(plan.fire).toEqual([now]);
    expect(slotsDue(everySecond, now - 2000, now, 'once', now).fire).toEqual([]);
  });
});

describe("a new schedule's first slot", () => {
  const everyMinute = parseCron('cron', '* * * * *', 'UTC');
  const daily = parseCron('cron', '0 9 * * *', 'UTC');

  it('is the slot it is made inside (within CURRENT_SLOT_MS after it), else the next', () => {
    expect(everyMinute.previous(at('2026-03-01T10:00:00Z'))).toBe(at('2026-03-01T10:00:00Z'));
    expect(firstSlot(everyMinute, at('2026-03-01T10:00:42Z'))).toBe(at('2026-03-01T10:00:00Z'));
    expect(firstSlot(daily, at('2026-03-01T09:00:59.999Z'))).toBe(at('2026-03-01T09:00:00Z'));
    expect(firstSlot(daily, at('2026-03-01T09:00:00Z') + CURRENT_SLOT_MS)).toBe(at('2026-03-02T09:00:00Z'));
    expect(firstSlot(daily, at('2026-03-01T15:00:00Z'))).toBe(at('2026-03-02T09:00:00Z'));
  });

  it('fires as itself in a pass within MISSED_AFTER_MS of the creation, however old the slot; later, it is missed', () => {
    const slot = at('2026-03-01T09:00:00Z');
    const created = slot + 50_000;
    // the pass comes 10 s after the schedule was made: its slot is 60 s old, well past MISSED_AFTER_MS
    const plan = slotsDue(daily, slot, created + 10_000, 'skip', null, created);
    expect(plan).toEqual({ fire: [slot], missedOnce: false, missedCount: 0, next: at('2026-03-02T09:00:00Z') });
    // no scheduler ran for a while after the creation: missed as any other
    expect(slotsDue(daily, slot, created + MISSED_AFTER_MS + 1, 'skip', null, created)).toMatchObject({ fire: [], missedCount: 1 });
    // without the creation time (an old schedule that missed it), the same slot is missed
    expect(slotsDue(daily, slot, created + 10_000, 'skip', null, null)).toMatchObject({ fire: [], missedCount: 1 });
    // a slot long before the creation (a schedule's next slot moved back by hand) is missed as any other
    expect(slotsDue(daily, slot, slot + 10 * 60_000 + 10_000, 'skip', null, slot + 10 * 60_000)).toMatchObject({
      fire: [],
      missedCount: 1,
    });
    // a slot after the creation is no catch-up: missed as any other
    expect(slotsDue(daily, slot, slot + 90_000, 'skip', null, slot - 1)).toMatchObject({ fire: [], missedCount: 1 });
  });
});

describe('parseSchedule', () => {
  it('keeps the options its jobs are sent with, checked as send() checks them', () => {
    const p = parseSchedule('reports', '0 * * * *', { full: true }, { tz: 'Europe/Paris', key: 'hourly', priority: 5, retryLimit: 1 });
    expect(p).toMatchObject({ name: 'reports', key: 'hourly', tz: 'Europe/Paris', missed: 'once', data: '{"full":true}' });
    expect(JSON.parse(p.options)).toEqual({ priority: 5, retryLimit: 1 });
  });

  it.each([
    [{ startAfter: 5 }, /options\.startAfter must be left out/],
    [{ missed: 'twice' }, /options\.missed must be one of "once", "skip"/],
    [{ key: 7 }, /options\.key must be a string/],
    [{ priority: 'high' }, /options\.priority/],
    [{ nope: true }, /options\.nope/],
    [{ tz: 'Nowhere/Land' }, /options\.tz/],
  ])('refuses %j', (options, message) => {
    expect(() => parseSchedule('reports', '* * * * *', null, options)).toThrow(message);
  });

  it("checks a @QueueHandler's schedule option, naming the handler's field", () => {
    expect(parseDeclaredSchedule('h.schedule', '*/5 * * * *')).toEqual({ cron: '*/5 * * * *' });
    expect(() => parseDeclaredSchedule('h.schedule', { cron: 'nope' })).toThrow(/h\.schedule\.cron must be a cron expression.*got "nope"/);
    expect(() => parseDeclaredSchedule('h.schedule', { cron: '* * * * *', every: 5 })).toThrow(/h\.schedule/);
  });
});
