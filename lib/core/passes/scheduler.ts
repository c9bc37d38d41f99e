// The scheduler: fires the slots of cron schedules (schedules.ts) on every supervising instance at once. Each pass
// locks the due schedules' rows (SKIP LOCKED: another instance's pass takes the others), sends one job per slot
// and moves the schedule's next slot on, in one transaction: a slot is fired by exactly one pass, however many
// instances race, restart or disagree about the time, since the database's clock decides what is due. Between
// passes it sleeps until the next slot, at most POLL_MS (a schedule another instance made is seen by then).
import type pg from 'pg';
import { MISSED_COUNTED_MAX, parseCron, slotsDue, type CronSlots, type DuePlan } from '../queues/cron.js';
import { inTransaction, pgExecutor } from '../runtime/db.js';
import { QueueError } from '../errors.js';
import { parseSendOptions } from '../config/options.js';
import { sqlState } from '../runtime/pg-errors.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Sender } from '../jobs/sender.js';
import { releaseSavepoint, rollbackToSavepoint, savepoint } from '../sql/transaction.js';

/** Longest sleep between passes. */
export const POLL_MS = 5_000;

/** The sleep after a pass that left a due schedule (another instance holds it, or there were more than it takes). */
const DUE_AGAIN_MS = 250;

/** Most schedules one pass fires. */
const SCHEDULES_PER_PASS = 100;

interface DueRow {
  name: string;
  key: string;
  cron: string;
  tz: string;
  data: string | null;
  options: Record<string, unknown>;
  missed: 'once' | 'skip';
  next_ms: number;
  last_ms: number | null;
  created_ms: number;
  now_ms: number;
}

/** Most parsed expressions kept: past it the cache starts again (expressions are few in any real cluster). */
const CRONS_KEPT = 1_000;

/** A schedule in a sentence. */
const named = (row: { name: string; key: string }) =>
  row.key === '' ? `the schedule of queue "${row.name}"` : `schedule "${row.key}" of queue "${row.name}"`;

/**
 * A failure that firing the schedule again would meet again: its stored options refused by the checks, a value the
 * database refuses (SQLSTATE classes 22 and 23). Anything else (a timeout, a lost connection, a deadlock) fails
 * the pass, which fires the same slots on the next try.
 */
function repeats(err: unknown): boolean {
  if (err instanceof QueueError) return true;
  const state = sqlState(err);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23'));
}

export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** A schedule changed while a pass ran: pass again once it ends. */
  private again = false;
  /** Set while passes fail, so that an outage is reported once. */
  private failing = false;
  /** Schedules whose slots cannot fire, reported once until one fires again. */
  private readonly broken = new Set<string>();
  /** Parsed expressions, by time zone and expression. */
  private readonly crons = new Map<string, CronSlots>();

  constructor(
    private readonly rt: Runtime,
    private readonly sender: Sender,
  ) {}

  /** Starts passing, on a supervising instance (the `supervise` option). */
  start(): void {
    if (!this.rt.config.supervise || !this.stopped) return;
    this.stopped = false;
    this.arm(0);
  }

  /** A schedule was made or changed here: pass now (or once the pass under way ends). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.arm(0);
  }

  /** Stops passing, and waits for a pass under way to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private arm(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    // unref: a sleeping scheduler never keeps the process alive
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass()
        .then(
          (sleepMs) => {
            if (this.failing) this.rt.events.warning('the scheduler reaches the database again');
            this.failing = false;
            return sleepMs;
          },
          (err: unknown) => {
            // while the engine closes, a pass that meets the closing pool is no failure
            if (!this.failing && !this.rt.closing) this.rt.events.error(err, 'a scheduler pass; it tries again every few seconds');
            this.failing = true;
            return POLL_MS;
          },
        )
        .then((sleepMs) => {
          this.running = null;
          if (this.stopped) return;
          const again = this.again;
          this.again = false;
          this.arm(again ? 0 : sleepMs);
        });
    }, delayMs).unref();
  }

  /**
   * One pass: fires what is due, and answers how long to sleep until the next slot. With nothing due it costs one
   * small read (the transaction that locks due schedules is opened only when some are).
   */
  private async pass(): Promise<number> {
    const before = await this.nextIn();
    if (before > 0) return this.sleepFor(before);
    await inTransaction(this.rt.connect, async (client) => {
      const rows = (await client.query<DueRow>(this.rt.statements.lockDueSchedules, [SCHEDULES_PER_PASS])).rows;
      for (const row of rows) {
        // Each schedule after a savepoint: one whose slots cannot fire leaves the others be.
        await client.query(savepoint);
        try {
          await this.fire(client, row);
          await client.query(releaseSavepoint);
          this.broken.delete(`${row.name}\n${row.key}`);
        } catch (err) {
          if (!repeats(err)) throw err;
          await client.query(rollbackToSavepoint);
          await this.skip(client, row, err);
        }
      }
    });
    return this.sleepFor(await this.nextIn());
  }

  /** Ms until the next slot of any schedule (≤ 0: one is due); Infinity without schedules. */
  private async nextIn(): Promise<number> {
    // not counted as a caller's call: close() does not wait for it, and stops the scheduler itself
    const [row] = await this.rt.background.query<{ in_ms: number | null }>(this.rt.statements.nextScheduleIn);
    return row?.in_ms ?? Infinity;
  }

  private sleepFor(inMs: number): number {
    return inMs <= 0 ? DUE_AGAIN_MS : Math.min(POLL_MS, Math.ceil(inMs));
  }

  /**
   * Sends one job per slot due (missed ones as the schedule says, as one job sent now) and moves the schedule on.
   * One insert per slot, so that the last slot's job is known when the queue's policy refuses another.
   */
  private async fire(client: pg.PoolClient, row: DueRow): Promise<void> {
    const plan = slotsDue(this.cronOf(row), row.next_ms, row.now_ms, row.missed, row.last_ms, row.created_ms);
    const exec = pgExecutor(client);
    let lastRun: number | null = null;
    let lastId: string | null = null;
    const send = async (at: number, options: Record<string, unknown>) => {
      const [id] = await this.sender.insertRows(exec, row.name, [row.data], [parseSendOptions(options)]);
      lastRun = at;
      lastId = id ?? null;
    };
    // The options were checked when the schedule was stored. One stored before schedule() refused a `data` among
    // them may hold one: it was never sent, and is not now (refusing it here would stop the schedule firing).
    const options = Object.fromEntries(Object.entries(row.options).filter(([key]) => key !== 'data'));
    // The missed slots' job starts now (counted from its slot, it could be born past its queue's retentionSeconds);
    // each other job starts at its slot.
    if (plan.missedOnce) await send(row.now_ms, options);
    for (const slot of plan.fire) await send(slot, { ...options, startAfter: new Date(slot) });
    await client.query(this.rt.statements.advanceSchedule, [row.name, row.key, plan.next, lastRun, lastId]);
    this.reportMissed(row, plan);
  }

  /**
   * A schedule whose slots cannot fire (its stored options no longer pass the checks, the database refuses its
   * jobs): reported once, and moved past them, so that it is not tried again at once and forever.
   */
  private async skip(client: pg.PoolClient, row: DueRow, err: unknown): Promise<void> {
    let next: number | null = null;
    try {
      next = this.cronOf(row).next(row.now_ms);
    } catch {
      // no slot to come: the schedule stays, with no next run, for its owner to change or remove
    }
    await client.query(this.rt.statements.advanceSchedule, [row.name, row.key, next, null, null]);
    const id = `${row.name}\n${row.key}`;
    if (this.broken.has(id)) return;
    this.broken.add(id);
    this.rt.events.error(err, `firing ${named(row)}; its slots are skipped until it can fire (reported once)`);
  }

  private reportMissed(row: DueRow, plan: DuePlan): void {
    if (plan.missedCount === 0) return;
    const what = row.missed === 'once' ? 'fired them as one job' : 'skipped them';
    const count = plan.missedCount >= MISSED_COUNTED_MAX ? `${MISSED_COUNTED_MAX} or more` : String(plan.missedCount);
    this.rt.events.warning(`${named(row)} missed ${count} slot(s) while no scheduler ran it; ${what} (missed: '${row.missed}')`);
  }

  private cronOf(row: DueRow): CronSlots {
    const id = `${row.tz}\n${row.cron}`;
    let cron = this.crons.get(id);
    if (!cron) {
      if (this.crons.size >= CRONS_KEPT) this.crons.clear();
      cron = parseCron('cron', row.cron, row.tz);
      this.crons.set(id, cron);
    }
    return cron;
  }
}
