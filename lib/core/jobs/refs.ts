// Job ids as callers of the calls by hand give them: a bigint as a string of digits, alone or with the
// attempt (retryCount) to act on.
import { InvalidOptionError } from '../errors.js';
import type { JobRef } from '../types.js';
import { int } from '../config/validate.js';

const ID_PATTERN = /^[1-9]\d{0,18}$/;
const MAX_ID = 9_223_372_036_854_775_807n;

/** A job id as stored: a positive bigint, given as a string of digits. */
export function isJobId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value) && BigInt(value) <= MAX_ID;
}

/** A job named by a call by hand: its id, and the attempt (retryCount) when the caller gave one. */
export interface ParsedRef {
  id: string;
  retryCount: number | null;
}

/** Parses the ids of a call by hand (one, or an array); names the offending field when one is not an id. */
export function parseRefs(ids: JobRef | JobRef[]): ParsedRef[] {
  const list = Array.isArray(ids) ? ids : [ids];
  if (list.length === 0) throw new InvalidOptionError('ids', 'at least one job id', ids);
  return list.map((ref, i) => {
    const field = Array.isArray(ids) ? `ids[${i}]` : 'id';
    if (isJobId(ref)) return { id: ref, retryCount: null };
    if (ref && typeof ref === 'object' && isJobId(ref.id)) {
      return { id: ref.id, retryCount: int(`${field}.retryCount`, ref.retryCount, 0) };
    }
    throw new InvalidOptionError(field, 'a job id (a string of digits from 1 to 9223372036854775807) or { id, retryCount }', ref);
  });
}

/** Ids alone, for calls that act on jobs whatever their attempt: a `{ id, retryCount }` ref is refused (`field`). */
export function plainIds(ids: string | string[], field = 'ids'): string[] {
  return parseRefs(ids).map((r) => {
    if (r.retryCount !== null) throw new InvalidOptionError(field, 'job ids (strings)', ids);
    return r.id;
  });
}
