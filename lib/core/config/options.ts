import { InvalidOptionError } from '../errors.js';
import { QUEUE_POLICIES, type JobDefaults, type QueueOptions, type QueuePolicy, type SendOptions, type WorkOptions } from '../types.js';
import { HANDLER_OPTIONS, JOB_DEFAULT_KEYS, QUEUE_OPTIONS, SEND_OPTIONS, WORK_OPTIONS, type OptionKeys } from './option-keys.js';
import { MAX_SECONDS, int, noUnknownKeys, nullableInt, oneOf, optBool, optInt, optKey, queueName, record } from './validate.js';
import { put } from '../worker/attempt/storable.js';

const STANDARD: QueuePolicy = 'standard';

/** Defaults of a queue's settings, in one place; a column default in the migration mirrors each. */
export const QUEUE_DEFAULTS = Object.freeze({
  policy: STANDARD,
  retryLimit: 2,
  retryDelay: 0,
  retryBackoff: false,
  retryDelayMax: null,
  expireInSeconds: 900,
  heartbeatSeconds: null,
  deleteAfterSeconds: 7 * 24 * 3600,
  retentionSeconds: 14 * 24 * 3600,
  failedDeleteAfterSeconds: 30 * 24 * 3600,
  notify: true,
  removeOnComplete: false,
});

/** Job defaults after validation: `undefined` means "inherit". */
export interface ParsedJobDefaults {
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  retryDelayMax?: number | null;
  expireInSeconds?: number;
  heartbeatSeconds?: number | null;
  deleteAfterSeconds?: number;
  retentionSeconds?: number;
}

function parseJobDefaults(prefix: string, o: Record<string, unknown>): ParsedJobDefaults {
  return {
    retryLimit: optInt(`${prefix}retryLimit`, o.retryLimit, 0, 1_000_000),
    retryDelay: optInt(`${prefix}retryDelay`, o.retryDelay, 0, MAX_SECONDS),
    retryBackoff: optBool(`${prefix}retryBackoff`, o.retryBackoff),
    retryDelayMax: nullableInt(`${prefix}retryDelayMax`, o.retryDelayMax, 0, MAX_SECONDS),
    expireInSeconds: optInt(`${prefix}expireInSeconds`, o.expireInSeconds, 1, 86_400),
    heartbeatSeconds: nullableInt(`${prefix}heartbeatSeconds`, o.heartbeatSeconds, 1, 86_400),
    deleteAfterSeconds: optInt(`${prefix}deleteAfterSeconds`, o.deleteAfterSeconds, 0, MAX_SECONDS),
    retentionSeconds: optInt(`${prefix}retentionSeconds`, o.retentionSeconds, 1, MAX_SECONDS),
  };
}

/** Queue settings after validation; `undefined` fields were not given. */
export interface ParsedQueueOptions extends ParsedJobDefaults {
  concurrencyLimit?: number | null;
  rateLimit?: { count: number; perSeconds: number } | null;
  policy?: QueuePolicy;
  partition?: boolean;
  deadLetter?: string | null;
  warningQueueSize?: number | null;
  notify?: boolean;
  removeOnComplete?: boolean;
  failedDeleteAfterSeconds?: number;
  failUnworkedAfterSeconds?: number | null;
}

/** Validates `createQueue`/`updateQueue` options (and the queue part of `@QueueHandler` options). */
export function parseQueueOptions(value: unknown, field = 'options'): ParsedQueueOptions {
  const o = record(field, value);
  noUnknownKeys(field, o, QUEUE_OPTIONS.keys);
  const p = `${field}.`;
  const parsed: ParsedQueueOptions = {
    ...parseJobDefaults(p, o),
    policy: o.policy === undefined ? undefined : oneOf(`${p}policy`, o.policy, QUEUE_POLICIES),
    partition: optBool(`${p}partition`, o.partition),
    deadLetter: o.deadLetter === null ? null : o.deadLetter === undefined ? undefined : queueName(`${p}deadLetter`, o.deadLetter),
    warningQueueSize: nullableInt(`${p}warningQueueSize`, o.warningQueueSize, 1),
    notify: optBool(`${p}notify`, o.notify),
    removeOnComplete: optBool(`${p}removeOnComplete`, o.removeOnComplete),
    failedDeleteAfterSeconds: optInt(`${p}failedDeleteAfterSeconds`, o.failedDeleteAfterSeconds, 0, MAX_SECONDS),
    failUnworkedAfterSeconds: nullableInt(`${p}failUnworkedAfterSeconds`, o.failUnworkedAfterSeconds, 1, MAX_SECONDS),
    concurrencyLimit: nullableInt(`${p}concurrencyLimit`, o.concurrencyLimit, 1, 100_000),
    rateLimit: parseRateLimit(`${p}rateLimit`, o.rateLimit),
  };
  return parsed;
}

function parseRateLimit(field: string, value: unknown): { count: number; perSeconds: number } | null | undefined {
  if (value === undefined || value === null) return value;
  const o = record(field, value);
  noUnknownKeys(field, o, new Set(['count', 'perSeconds']));
  return { count: int(`${field}.count`, o.count, 1, 1_000_000), perSeconds: int(`${field}.perSeconds`, o.perSeconds, 1, 86_400) };
}

/** A send's options after validation, in the shape the insert statement binds. */
export interface ParsedSendOptions extends ParsedJobDefaults {
  /** flow(): how many parents the job waits for, and what becomes of it when one fails. */
  blockedBy?: number;
  onParentFailure?: 'fail' | 'cancel';
  groupId?: string;
  groupTier?: string;
  priority?: number;
  startAt?: Date;
  startIn?: number;
  singletonKey?: string;
  dedupeKey?: string;
  deadLetter?: string;
  /** sendThrottled/sendDebounced: the slot length in seconds, and 1 for the slot after the current one. */
  throttle?: number;
  slotOffset?: number;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$/;

/**
 * Validates `send` options, or one job of `insert` or `flow` (then `field` names its index and `accepted` is that
 * call's set of keys: a job of insert() takes its `data`, and no `db` of its own).
 */
export function parseSendOptions(value: unknown, field = 'options', accepted: OptionKeys = SEND_OPTIONS): ParsedSendOptions {
  const o = record(field, value);
  noUnknownKeys(field, o, accepted.keys, accepted.hints);
  // The common job of a bulk insert sets nothing but its data: nothing to validate, so the full pass (run for
  // every job of the insert) is skipped.
  let given = false;
  for (const key in o) if (key !== 'data' && key !== 'db' && o[key] !== undefined) given = true;
  if (!given) return {};
  const p = `${field}.`;
  const parsed: ParsedSendOptions = {
    ...parseJobDefaults(p, o),
    priority: optInt(`${p}priority`, o.priority, -2_147_483_648),
    singletonKey: optKey(`${p}singletonKey`, o.singletonKey),
    dedupeKey: optKey(`${p}dedupeKey`, o.dedupeKey),
    ...parseGroup(`${p}group`, o.group),
    deadLetter: o.deadLetter === undefined ? undefined : queueName(`${p}deadLetter`, o.deadLetter),
  };
  Object.assign(parsed, parseStartAfter(`${p}startAfter`, o.startAfter));
  return parsed;
}

function parseGroup(field: string, value: unknown): { groupId?: string; groupTier?: string } {
  if (value === undefined || value === null) return {};
  const o = record(field, value);
  noUnknownKeys(field, o, new Set(['id', 'tier']));
  const groupId = optKey(`${field}.id`, o.id, 255);
  if (groupId === undefined) throw new InvalidOptionError(`${field}.id`, 'a string of 1 to 255 characters', o.id);
  return { groupId, groupTier: optKey(`${field}.tier`, o.tier, 255) };
}

/** `startAfter` as either an absolute time or seconds from the database's now. */
export function parseStartAfter(field: string, value: unknown): { startAt?: Date; startIn?: number } {
  if (value === undefined || value === null) return {};
  if (typeof value === 'number') return { startIn: int(field, value, 0, MAX_SECONDS) };
  const expected = 'a Date, an ISO-8601 date-time string, or whole seconds from now (0 to 315360000)';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new InvalidOptionError(field, expected, value);
    return { startAt: value };
  }
  if (typeof value === 'string' && ISO_8601.test(value.trim())) {
    const at = new Date(value.trim());
    if (!Number.isNaN(at.getTime())) return { startAt: at };
  }
  throw new InvalidOptionError(field, expected, value);
}

/** Worker loop options after defaults. */
export interface ParsedWorkOptions {
  transactional: boolean;
  groupConcurrency: { default: number | null; tiers: Record<string, number> } | null;
  /** Jobs of one group this loop runs at once (WorkOptions.localGroupConcurrency); null: no local limit. */
  localGroupConcurrency: { default: number | null; tiers: Record<string, number> } | null;
  concurrency: number;
  batchSize: number;
  pollingIntervalSeconds: number;
  /** The handler gets the jobs of a claim together (WorkOptions.batch). */
  batch: boolean;
  /** The batch handler resolves with an array of per-job results (WorkOptions.perJobResults). */
  perJobResults: boolean;
  /** How often the loop refreshes its jobs' heartbeats, in seconds (WorkOptions.heartbeatRefreshSeconds); null: its own pace. */
  heartbeatRefreshSeconds: number | null;
}

/** Jobs one call of a batch handler gets when `batchSize` is not given. */
export const DEFAULT_BATCH_SIZE = 10;

/** Validates `work`/`@QueueHandler` loop options. */
export function parseWorkOptions(value: unknown, field = 'options'): ParsedWorkOptions {
  const o = record(field, value) as WorkOptions;
  noUnknownKeys(field, o as Record<string, unknown>, WORK_OPTIONS.keys, WORK_OPTIONS.hints);
  const concurrency = optInt(`${field}.concurrency`, o.concurrency, 1, 10_000) ?? 1;
  const batch = optBool(`${field}.batch`, o.batch) ?? false;
  const transactional = optBool(`${field}.transactional`, o.transactional) ?? false;
  // one transaction per batch would make every job's result wait for the others' and fall with any of them
  if (batch && transactional) throw new InvalidOptionError(`${field}.transactional`, 'false or unset with batch: true', true);
  const perJobResults = optBool(`${field}.perJobResults`, o.perJobResults) ?? false;
  // pg-boss's every handler gets an array of jobs; here a handler gets one job unless it asks for batches
  if (perJobResults && !batch) throw new InvalidOptionError(`${field}.perJobResults`, 'false or unset without batch: true', true);
  const batchSize = optInt(`${field}.batchSize`, o.batchSize, 1, 10_000) ?? (batch ? DEFAULT_BATCH_SIZE : concurrency);
  return {
    transactional,
    groupConcurrency: parseGroupConcurrency(`${field}.groupConcurrency`, o.groupConcurrency),
    // jobs of a group at once: a batch loop runs up to concurrency calls of batchSize jobs each, each job counted
    localGroupConcurrency: parseGroupConcurrency(
      `${field}.localGroupConcurrency`,
      o.localGroupConcurrency,
      batch ? concurrency * batchSize : concurrency,
    ),
    concurrency,
    batchSize,
    pollingIntervalSeconds: pollInterval(`${field}.pollingIntervalSeconds`, o.pollingIntervalSeconds),
    batch,
    perJobResults,
    heartbeatRefreshSeconds: refreshInterval(`${field}.heartbeatRefreshSeconds`, o.heartbeatRefreshSeconds),
  };
}

/**
 * `groupConcurrency` and `localGroupConcurrency`: one limit for every group, or limits per tier (`default` for groups
 * of other tiers), each at most `max` (a local limit: the loop's concurrency, above which it would mean nothing).
 */
export function parseGroupConcurrency(field: string, value: unknown, max = 100_000): ParsedWorkOptions['groupConcurrency'] {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return { default: int(field, value, 1, max), tiers: {} };
  const o = record(field, value);
  const tiers: Record<string, number> = {};
  let fallback: number | null = null;
  for (const [tier, limit] of Object.entries(o)) {
    if (tier === 'default') fallback = int(`${field}.default`, limit, 1, max);
    // pg-boss's shape, { default, tiers: { pro: 5 } }, beside this one's, { default, pro: 5 }
    else if (tier === 'tiers' && typeof limit === 'object' && limit !== null) {
      for (const [t, n] of Object.entries(record(`${field}.tiers`, limit)))
        put(tiers, optKey(`${field}.tiers tier name`, t, 255)!, int(`${field}.tiers.${t}`, n, 1, max));
    }
    // defined, not assigned: a tier may be named `__proto__`
    else put(tiers, optKey(`${field} tier name`, tier, 255)!, int(`${field}.${tier}`, limit, 1, max));
  }
  return { default: fallback, tiers };
}

/** heartbeatRefreshSeconds: seconds, as a tick of the lease clock can keep them (it waits at least 200 ms). */
function refreshInterval(field: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0.2 || value > 86_400) {
    throw new InvalidOptionError(field, 'a number of seconds from 0.2 to 86400', value);
  }
  return value;
}

function pollInterval(field: string, value: unknown): number {
  if (value === undefined) return 2;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0.05 || value > 3600) {
    throw new InvalidOptionError(field, 'a number of seconds from 0.05 to 3600', value);
  }
  return value;
}

/** The job-default keys present in options, for comparing an existing queue with a `createQueue` call. */
export function jobDefaultKeys(): readonly (keyof JobDefaults)[] {
  return JOB_DEFAULT_KEYS;
}

/**
 * Splits a `@QueueHandler`'s options (its `schedule` taken out) into the queue's settings and the loop's, after
 * refusing any key that is neither (`field` names the handler).
 */
export function splitHandlerOptions(
  options: Record<string, unknown>,
  field: string,
): { queue: Record<string, unknown>; work: Record<string, unknown> } {
  noUnknownKeys(field, options, HANDLER_OPTIONS.keys, HANDLER_OPTIONS.hints);
  const queue: Record<string, unknown> = {};
  const work: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) (WORK_OPTIONS.keys.has(k) ? work : queue)[k] = v;
  return { queue, work };
}

export type { QueueOptions, SendOptions };

/** `{ force? }` of maintain() and monitor(): a record with only `force`, a boolean. */
export function parseForce(value: unknown): boolean {
  const o = record('options', value ?? {});
  noUnknownKeys('options', o, new Set(['force']));
  return optBool('options.force', o.force) ?? false;
}

const OFF_WORK_KEYS: ReadonlySet<string> = new Set(['id', 'wait', 'graceful']);

/** offWork's options checked: `nameOrId` a string, and with `id` a queue name. */
export function parseOffWorkOptions(nameOrId: unknown, options: unknown): { id: string | undefined; wait: boolean; graceful: boolean } {
  const o = record('options', options);
  noUnknownKeys('options', o, OFF_WORK_KEYS);
  // null is refused, not read as "no id": a missing id by mistake must not stop every loop of the queue
  if (o.id === null) throw new InvalidOptionError('options.id', 'a loop id (a string of 1 to 200 characters)', null);
  const id = optKey('options.id', o.id, 200);
  if (id !== undefined) queueName('name', nameOrId);
  else if (typeof nameOrId !== 'string' || nameOrId.length === 0)
    throw new InvalidOptionError('nameOrId', 'a queue name or a loop id', nameOrId);
  return { id, wait: optBool('options.wait', o.wait) ?? true, graceful: optBool('options.graceful', o.graceful) ?? true };
}

/** pg-boss's other stop() option, and where its work is done here. */
const CLOSE_HINTS: Readonly<Record<string, string>> = {
  timeout: 'how long shutdown waits for handlers is the module option shutdownTimeoutMs',
};

/**
 * `{ graceful?, wait?, close? }` of close() and stop(): graceful false aborts running handlers at once and hands
 * their jobs back. pg-boss's `wait: true` and `close: true` say what close() does anyway and are accepted; false is
 * refused (close() always waits, and always closes). Anything but an object is no options: close bound to a signal
 * handler or a test hook gets the signal's name or a callback, and must close all the same. Never throws: the
 * shutdown path closes whatever it is given, and `refused` is the error to report once it has (graceful).
 */
export function parseCloseOptions(value: unknown): { graceful: boolean; refused: InvalidOptionError | null } {
  try {
    return { graceful: closeOptions(value), refused: null };
  } catch (err) {
    return { graceful: true, refused: err as InvalidOptionError };
  }
}

function closeOptions(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return true;
  const o = value as Record<string, unknown>;
  noUnknownKeys('options', o, new Set(['graceful', 'wait', 'close']), CLOSE_HINTS);
  for (const key of ['wait', 'close'] as const)
    if (o[key] !== undefined && o[key] !== true)
      throw new InvalidOptionError(
        `options.${key}`,
        `true or left out (close() always ${key === 'wait' ? 'waits for the shutdown' : 'closes'}; stopWorkers() stops only the loops)`,
        o[key],
      );
  return optBool('options.graceful', o.graceful) ?? true;
}
