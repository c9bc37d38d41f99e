// Cron schedules, as the public methods see them: schedule(), unschedule(), getSchedules(), and the bootstrap's
// syncDeclared() for `@QueueHandler(name, { schedule })`. What fires the slots is the scheduler (scheduler.ts).
import { firstSlot, parseCron, timeZone, type CronSlots } from './cron.js';
import { assertDeadLetterTargets } from '../jobs/dead-letter-targets.js';
import { InvalidOptionError, QueueNotFoundError } from '../errors.js';
import { DECLARED_SCHEDULE_OPTIONS, SCHEDULE_OPTIONS } from '../config/option-keys.js';
import { parseSendOptions } from '../config/options.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import type { Runtime } from '../runtime/runtime.js';
import type { ScheduleInfo, ScheduleOptions } from '../types.js';
import { noUnknownKeys, oneOf, queueName, record, storableKey, toJson } from '../config/validate.js';

/** A schedule a `@QueueHandler` declares: its expression and data, and the options of schedule(). */
export interface DeclaredSchedule extends ScheduleOptions {
  cron: string;
  data?: unknown;
}

/** Longest schedule key. */
const KEY_MAX = 255;

interface ScheduleRow {
  name: string;
  key: string;
  cron: string;
  tz: string;
  data: unknown;
  options: ScheduleInfo['options'];
  missed: 'once' | 'skip';
  managed: boolean;
  next_run_on: Date | null;
  last_run_on: Date | null;
  last_job_id: string | null;
  created_on: Date;
  updated_on: Date;
}

/** A schedule checked and ready to store. */
interface Parsed {
  name: string;
  key: string;
  cron: string;
  tz: string;
  data: string | null;
  options: string;
  missed: 'once' | 'skip';
  singletonKey: boolean;
  /** The jobs' own dead-letter queue, checked when the schedule is stored. */
  deadLetter: string | undefined;
  /** The slots of the expression in its time zone. */
  slots: CronSlots;
}

/**
 * Checks a schedule (InvalidOptionError naming the field): its expression and time zone, its key, what becomes of
 * missed slots, and the options its jobs are sent with (as send() checks them; `startAfter` is the slot's own).
 */
export function parseSchedule(
  name: string,
  cron: unknown,
  data: unknown,
  options: unknown,
  field = 'options',
  maxPayloadBytes?: number,
): Parsed {
  queueName('name', name);
  const o = record(field, options ?? {});
  // startAfter (the slot's own), db (the scheduler's connection) and data (an argument) are refused by name
  noUnknownKeys(field, o, SCHEDULE_OPTIONS.keys, SCHEDULE_OPTIONS.hints);
  const { tz, key, missed, ...send } = o;
  const zone = tz === undefined ? 'UTC' : timeZone(`${field}.tz`, tz);
  const slots = parseCron(field === 'options' ? 'cron' : `${field}.cron`, cron, zone);
  if (key !== undefined && (typeof key !== 'string' || key.length > KEY_MAX))
    throw new InvalidOptionError(`${field}.key`, `a string of at most ${KEY_MAX} characters`, key);
  if (typeof key === 'string') storableKey(`${field}.key`, key);
  const parsed = parseSendOptions(send, field);
  return {
    name,
    key: key ?? '',
    cron: (cron as string).trim(),
    tz: zone,
    data: toJson(field === 'options' ? 'data' : `${field}.data`, data, maxPayloadBytes),
    options: JSON.stringify(send),
    missed: missed === undefined ? 'once' : oneOf(`${field}.missed`, missed, ['once', 'skip'] as const),
    singletonKey: parsed.singletonKey !== undefined,
    deadLetter: parsed.deadLetter,
    slots,
  };
}

/**
 * Checks a `@QueueHandler`'s `schedule` option (InvalidOptionError naming `field`): an expression, or
 * `{ cron, data?, tz?, key?, missed?, ...job options }`.
 */
export function parseDeclaredSchedule(field: string, value: unknown, maxPayloadBytes?: number): DeclaredSchedule {
  if (typeof value !== 'string' && (value === null || typeof value !== 'object' || Array.isArray(value)))
    throw new InvalidOptionError(field, 'a cron expression, or { cron, data?, tz?, key?, missed?, ...job options }', value);
  const declared = typeof value === 'string' ? { cron: value } : (value as DeclaredSchedule);
  noUnknownKeys(field, declared as unknown as Record<string, unknown>, DECLARED_SCHEDULE_OPTIONS.keys, DECLARED_SCHEDULE_OPTIONS.hints);
  const { cron, data, ...options } = declared;
  parseSchedule('declared', cron, data, options, field, maxPayloadBytes);
  return declared;
}

export class Schedules {
  /** `changed`: a schedule was made or changed here: the scheduler looks again now. */
  constructor(
    private readonly rt: Runtime,
    private readonly changed: () => void,
  ) {}

  async schedule(name: string, cron: string, data?: unknown, options?: ScheduleOptions): Promise<void> {
    await this.store(parseSchedule(name, cron, data, options, 'options', this.rt.config.maxPayloadBytes), false, 'options');
    this.changed();
  }

  async unschedule(name: string, key = ''): Promise<boolean> {
    queueName('name', name);
    if (typeof key !== 'string') throw new InvalidOptionError('key', `a string of at most ${KEY_MAX} characters`, key);
    storableKey('key', key);
    const exec = await this.rt.db();
    return (await exec.query(this.rt.statements.deleteSchedule, [name, key])).length > 0;
  }

  async getSchedules(name?: string): Promise<ScheduleInfo[]> {
    if (name !== undefined) queueName('name', name);
    const exec = await this.rt.db();
    const rows = await exec.query<ScheduleRow>(this.rt.statements.listSchedules, [name ?? null]);
    return rows.map((r) => ({
      name: r.name,
      key: r.key,
      cron: r.cron,
      tz: r.tz,
      data: r.data,
      options: r.options,
      missed: r.missed,
      managed: r.managed,
      nextRunOn: r.next_run_on,
      lastRunOn: r.last_run_on,
      lastJobId: r.last_job_id,
      createdOn: r.created_on,
      updatedOn: r.updated_on,
    }));
  }

  /**
   * Keeps queue `name`'s handler-made schedules in step with what its `@QueueHandler` declares (checked by
   * parseDeclaredSchedule; `field` names the option in errors): declared ones are made or changed (an unchanged
   * one keeps its next slot), and those a handler made earlier and no longer declares are removed. Schedules made
   * by schedule() are left alone, also under a declared key: the sentences returned say which were.
   */
  async syncDeclared(name: string, declared: readonly DeclaredSchedule[], field: string): Promise<string[]> {
    const kept: string[] = [];
    for (const d of declared) {
      const { cron, data, ...options } = d;
      const p = parseSchedule(name, cron, data, options, field, this.rt.config.maxPayloadBytes);
      if (!(await this.store(p, true, field)))
        kept.push(
          `queue "${name}" has a schedule with key "${p.key}" made by schedule(), which ${field} does not replace; unschedule it, or give the declared one another key`,
        );
    }
    const exec = await this.rt.db();
    await exec.query(this.rt.statements.deleteUndeclaredSchedules, [name, declared.map((d) => d.key ?? '')]);
    if (declared.length > 0) this.changed();
    return kept;
  }

  /** Stores a checked schedule; false when a handler's (`managed`) met one that schedule() made, left as it was. */
  private async store(p: Parsed, managed: boolean, field: string): Promise<boolean> {
    const exec = await this.rt.db();
    const profile = await this.rt.router.profile(exec, p.name);
    if (profile.policy === 'key_strict_fifo' && !p.singletonKey)
      throw new InvalidOptionError(`${field}.singletonKey`, `a key on every job of key_strict_fifo queue "${p.name}"`, undefined);
    if (p.deadLetter !== undefined)
      await assertDeadLetterTargets(this.rt.router, exec, [{ field: `${field}.deadLetter`, queue: p.deadLetter }]);
    // Slots are counted from the database's clock, as the scheduler fires them.
    const [{ now_ms: nowMs }] = (await exec.query<{ now_ms: number }>(this.rt.statements.databaseNow)) as [{ now_ms: number }];
    // a new schedule starts from the slot it is made inside (firstSlot); a changed one from its next slot
    const args = [p.name, p.key, p.cron, p.tz, p.data, p.options, p.missed, managed, firstSlot(p.slots, nowMs), p.slots.next(nowMs), nowMs];
    try {
      return (await exec.query(this.rt.statements.upsertSchedule, args)).length > 0;
    } catch (err) {
      // deleted since the profile was read
      if (sqlState(err) === SQLSTATE.foreignKeyViolation) throw new QueueNotFoundError(p.name);
      throw err;
    }
  }
}
