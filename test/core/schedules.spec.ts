// Cron schedules against a real PostgreSQL: the calls, and the scheduler firing each slot exactly once however many
// instances race, restart, or come back after slots were missed.
import { InvalidOptionError, QueueNotFoundError, type QueueWarning } from '../../lib/core/index.js';
import type { PgQueue } from '../../lib/core/pg-queue.js';
import { CURRENT_SLOT_MS } from '../../lib/core/queues/cron.js';
import { testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('sched');
afterAll(() => f.cleanup());
afterEach(() => f.closeMade());

/** The jobs a queue holds, by slot (start_after, in ms), with their data. */
async function jobsOf(queue: string): Promise<{ slot: number; key: string | null; id: string }[]> {
  const rows = await f.sql<{ slot: number; key: string | null; id: string }>(
    `SELECT (extract(epoch FROM start_after) * 1000)::float8 AS slot, data->>'key' AS key, id::text AS id
     FROM $schema.jobs WHERE queue = $1 ORDER BY start_after, id`,
    [queue],
  );
  return rows;
}

/** An engine that runs the scheduler (a supervising one), started. */
async function scheduling(): Promise<PgQueue> {
  const q = f.create({ supervise: true });
  await q.start();
  return q;
}

describe('schedule(), getSchedules(), unschedule()', () => {
  it('stores a schedule with its next slot from the database clock, replaces it by name and key, and removes it', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('sched.calls');
    await q.schedule('sched.calls', '0 9 * * *', { report: 'daily' }, { tz: 'Europe/Paris', priority: 3 });
    await q.schedule('sched.calls', '*/5 * * * *', null, { key: 'often', missed: 'skip' });
    const [daily, often] = await q.getSchedules('sched.calls');
    expect(daily).toMatchObject({
      name: 'sched.calls',
      key: '',
      cron: '0 9 * * *',
      tz: 'Europe/Paris',
      data: { report: 'daily' },
      options: { priority: 3 },
      missed: 'once',
      managed: false,
      lastRunOn: null,
      lastJobId: null,
    });
    // 9:00 in Paris is 7:00 or 8:00 UTC, within the day to come
    expect([7, 8]).toContain(daily!.nextRunOn!.getUTCHours());
    expect(daily!.nextRunOn!.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(often).toMatchObject({ key: 'often', missed: 'skip' });
    expect(often!.nextRunOn!.getTime() % 300_000).toBe(0);

    // the same expression again keeps the next slot; another one moves it
    await f.sql(`UPDATE $schema.schedules SET next_run_on = next_run_on + interval '1 day' WHERE name = 'sched.calls' AND key = ''`);
    const kept = (await q.getSchedules('sched.calls'))[0]!.nextRunOn!;
    await q.schedule('sched.calls', '0 9 * * *', { report: 'changed' }, { tz: 'Europe/Paris' });
    expect((await q.getSchedules('sched.calls'))[0]).toMatchObject({ nextRunOn: kept, data: { report: 'changed' }, options: {} });
    await q.schedule('sched.calls', '30 9 * * *', null, { tz: 'Europe/Paris' });
    expect((await q.getSchedules('sched.calls'))[0]!.nextRunOn!.getUTCMinutes()).toBe(30);

    expect(await q.unschedule('sched.calls', 'often')).toBe(true);
    expect(await q.unschedule('sched.calls', 'often')).toBe(false);
    expect((await q.getSchedules()).map((s) => s.key)).toEqual(['']);
    await q.deleteQueue('sched.calls'); // a queue's schedules go with it
    expect(await q.getSchedules()).toEqual([]);
  });

  it('refuses a bad expression, time zone or option, and an unknown queue, storing nothing', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('sched.bad');
    await q.createQueue('sched.fifo', { policy: 'key_strict_fifo' });
    await expect(q.schedule('sched.bad', '* * 32 * *')).rejects.toThrow(/cron must be a cron expression.*got "\* \* 32 \* \*"/);
    await expect(q.schedule('sched.bad', '* * * * *', null, { tz: 'Europe/Atlantis' })).rejects.toThrow(InvalidOptionError);
    await expect(q.schedule('sched.bad', '* * * * *', null, { startAfter: 10 } as never)).rejects.toThrow(/options\.startAfter/);
    await expect(q.schedule('sched.fifo', '* * * * *')).rejects.toThrow(/options\.singletonKey/);
    await expect(q.schedule('sched.none', '* * * * *')).rejects.toThrow(QueueNotFoundError);
    expect(await q.getSchedules()).toEqual([]);
  });
});

describe('the scheduler', () => {
  it('fires each slot exactly once while two instances race, one of them restarting, over 200 slots', async () => {
    const a = await scheduling();
    const b = await scheduling();
    await a.createQueue('sched.race');
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
    for (const key of keys) await a.schedule('sched.race', '* * * * * *', { key }, { key });
    await until(async () => (await jobsOf('sched.race')).length >= 100, 'half the slots fired', 40_000, 200);
    await a.close(); // a restart of one of them: b goes on alone meanwhile, then a new instance joins it
    await scheduling();
    await until(async () => (await jobsOf('sched.race')).length >= 210, '200 slots fired', 40_000, 200);
    for (const key of keys) await b.unschedule('sched.race', key);
    const jobs = await jobsOf('sched.race');
    for (const key of keys) {
      const slots = jobs.filter((j) => j.key === key).map((j) => j.slot);
      expect(new Set(slots).size).toBe(slots.length); // no slot twice
      // every second from the first to the last: none skipped
      expect((slots.at(-1)! - slots[0]!) / 1000 + 1).toBe(slots.length);
      expect(slots.every((s) => s % 1000 === 0)).toBe(true);
    }
    const schedules = await f.sql<{ n: string }>(`SELECT count(*)::text AS n FROM $schema.schedules`);
    expect(schedules).toEqual([{ n: '0' }]);
  }, 120_000);

  it('a new schedule fires the slot it was made inside, as pg-boss does: at once, as itself, once', async () => {
    const q = await scheduling();
    await q.createQueue('sched.current');
    // a daily slot 30 s ago by the database's clock: inside pg-boss's minute, and past MISSED_AFTER_MS (15 s), so
    // that only the rule for a new schedule fires it ('skip' would drop it as missed)
    const nowMs = (await f.sql<{ now_ms: number }>(`SELECT (extract(epoch FROM now()) * 1000)::float8 AS now_ms`))[0]!.now_ms;
    const slot = new Date(Math.floor(nowMs / 1000) * 1000 - 30_000);
    const daily = `${slot.getUTCSeconds()} ${slot.getUTCMinutes()} ${slot.getUTCHours()} * * *`;
    await q.schedule('sched.current', daily, { current: true }, { missed: 'skip' });
    // one made outside its slot starts from the next one
    await q.schedule('sched.current', '0 0 1 1 *', null, { key: 'yearly' });
    await until(async () => (await jobsOf('sched.current')).length > 0, 'the slot the schedule was made inside', 15_000, 100);
    await q.unschedule('sched.current');
    expect((await jobsOf('sched.current')).map((j) => j.slot)).toEqual([slot.getTime()]);
    const yearly = (await q.getSchedules('sched.current')).find((s) => s.key === 'yearly')!;
    expect(yearly.nextRunOn!.getTime()).toBeGreaterThan(nowMs);
    expect(yearly.lastRunOn).toBeNull();
    expect(CURRENT_SLOT_MS).toBeGreaterThan(30_000);
  });

  it("slots missed while no scheduler ran fire as one job with missed: 'once', as none with 'skip'", async () => {
    const idle = f.create({ supervise: false });
    await idle.createQueue('sched.missed');
    await idle.schedule('sched.missed', '* * * * * *', { key: 'once' }, { key: 'once' });
    await idle.schedule('sched.missed', '* * * * * *', { key: 'skip' }, { key: 'skip', missed: 'skip' });
    // ten minutes with no scheduler running
    await f.sql(
      `UPDATE $schema.schedules SET next_run_on = date_trunc('second', now()) - interval '10 minutes' WHERE name = 'sched.missed'`,
    );
    const backdated = (await idle.getSchedules('sched.missed'))[0]!.nextRunOn!.getTime();
    const warnings: QueueWarning[] = [];
    const q = f.create({ supervise: true });
    q.on('warning', (w) => warnings.push(w));
    await q.start();
    await until(
      async () => {
        const jobs = await jobsOf('sched.missed');
        return jobs.some((j) => j.key === 'once' && j.slot > backdated) && jobs.some((j) => j.key === 'skip');
      },
      'both schedules fired again',
      15_000,
      100,
    );
    await q.unschedule('sched.missed', 'once');
    await q.unschedule('sched.missed', 'skip');
    const jobs = await jobsOf('sched.missed');
    const once = jobs.filter((j) => j.key === 'once');
    const skip = jobs.filter((j) => j.key === 'skip');
    // no job for a slot of the ten minutes; one job, sent when the scheduler came back (starting then, not on a
    // whole second), stands for them with 'once'; the recent slots (within 15 s) fire each as themselves
    const recentFrom = Date.now() - 60_000;
    expect(jobs.filter((j) => j.slot < recentFrom)).toEqual([]);
    expect(once.filter((j) => j.slot % 1000 !== 0)).toHaveLength(1);
    expect(skip.filter((j) => j.slot % 1000 !== 0)).toHaveLength(0);
    expect(skip.length).toBeGreaterThan(0);
    expect(backdated).toBeLessThan(recentFrom);
    expect(warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/schedule "once" of queue "sched.missed" missed 100 or more slot\(s\).*fired them as one job/),
        expect.stringMatching(/schedule "skip" of queue "sched.missed" missed 100 or more slot\(s\).*skipped them/),
      ]),
    );
  });

  it("a slot the queue's policy refuses fires no job; a schedule that cannot fire is reported and leaves the others be", async () => {
    // made with no scheduler running: a new schedule's first slot (the second it is made in) is due at once, and the
    // broken one must be broken before any scheduler reaches it
    const maker = f.create({ supervise: false });
    await maker.createQueue('sched.exclusive', { policy: 'exclusive' });
    await maker.createQueue('sched.other');
    await maker.schedule('sched.exclusive', '* * * * * *');
    await maker.schedule('sched.other', '* * * * * *', { key: 'fine' });
    await maker.schedule('sched.other', '* * * * * *', { key: 'broken' }, { key: 'broken' });
    // options that no longer pass the checks (as an older version might have stored them)
    await f.sql(`UPDATE $schema.schedules SET options = '{"priority": "high"}' WHERE key = 'broken'`);
    const q = f.create({ supervise: true });
    const errors: { message: string; context: string }[] = [];
    q.on('error', (e) => errors.push({ message: e.message, context: e.context }));
    await q.start();
    await until(async () => {
      const [s] = await q.getSchedules('sched.exclusive');
      return s!.lastRunOn !== null && s!.lastJobId === null; // a later slot, refused: its one job is queued
    }, 'a slot of the exclusive queue refused');
    expect(await jobsOf('sched.exclusive')).toHaveLength(1);
    await until(async () => (await jobsOf('sched.other')).filter((j) => j.key === 'fine').length >= 2, 'the fine schedule fired');
    // its slots moved on, and a second slot passed
    const skippedFrom = Date.now();
    await until(
      async () => (await q.getSchedules('sched.other')).find((s) => s.key === 'broken')!.nextRunOn!.getTime() > skippedFrom + 1000,
      'two slots of the broken schedule passed',
    );
    expect((await jobsOf('sched.other')).filter((j) => j.key === 'broken')).toEqual([]);
    const broken = errors.filter((e) => e.context.includes('firing schedule "broken" of queue "sched.other"'));
    expect(broken).toHaveLength(1); // reported once, not at every slot
    expect(broken[0]!.message).toMatch(/priority/);
    expect(errors.filter((e) => !e.context.includes('"broken"'))).toEqual([]);
    for (const [name, key] of [
      ['sched.exclusive', ''],
      ['sched.other', ''],
      ['sched.other', 'broken'],
    ] as const)
      await q.unschedule(name, key);
  });

  it('a failure that may pass (a statement timeout) fires the same slots on the next try: none lost, none twice', async () => {
    // this instance's statements time out after 200 ms, so a locked jobs table fails its pass
    const q = f.create({
      connectionString: `${testUrl()}${testUrl().includes('?') ? '&' : '?'}options=-c%20statement_timeout%3D200`,
      supervise: true,
    });
    const errors: string[] = [];
    q.on('error', (e) => errors.push(e.context));
    await q.createQueue('sched.transient');
    await q.schedule('sched.transient', '* * * * * *');
    await until(async () => (await jobsOf('sched.transient')).length >= 2, 'two slots fired');
    const locker = await f.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${f.schema}".jobs IN ACCESS EXCLUSIVE MODE`);
      await until(() => errors.some((c) => c.includes('a scheduler pass')), 'a pass failed on the lock', 15_000);
      await locker.query('COMMIT');
    } finally {
      locker.release();
    }
    const unlocked = Date.now();
    await until(
      async () => (await jobsOf('sched.transient')).some((j) => j.slot > unlocked + 1000),
      'slots after the lock fired',
      20_000,
      200,
    );
    await q.unschedule('sched.transient');
    const slots = (await jobsOf('sched.transient')).map((j) => j.slot);
    expect(new Set(slots).size).toBe(slots.length);
    expect((slots.at(-1)! - slots[0]!) / 1000 + 1).toBe(slots.length); // the slots of the failed passes fired late
  });

  it('closing an instance while its scheduler runs reports nothing', async () => {
    const q = await scheduling();
    const errors: string[] = [];
    q.on('error', (e) => errors.push(`${e.context}: ${e.message}`));
    await q.createQueue('sched.closing');
    await q.schedule('sched.closing', '* * * * * *');
    await until(async () => (await jobsOf('sched.closing')).length >= 2, 'two slots fired');
    await q.close();
    expect(errors).toEqual([]);
    const other = f.create({ supervise: false });
    await other.unschedule('sched.closing');
  });
});
