// A flow's jobs as the caller gives them, checked before anything is written: each job's queue, ref, options
// and data, the refs it waits for (all in the flow, no cycle), and the dependency rows once they have ids.
import { InvalidOptionError } from '../errors.js';
import { FLOW_JOB_OPTIONS, INSERT_JOB_OPTIONS } from '../config/option-keys.js';
import { parseSendOptions, type ParsedSendOptions } from '../config/options.js';
import type { FlowJob } from '../types.js';
import { noUnknownKeys, optKey, queueName, record, toJson } from '../config/validate.js';

/** One job of a parsed flow: where it goes, what it inserts, and the refs it waits for. */
export interface FlowEntry {
  /** Its place in the caller's array, for error messages. */
  index: number;
  queue: string;
  parsed: ParsedSendOptions;
  data: string | null;
  parents: string[];
}

/**
 * Parses `flow()`'s jobs, by ref, in the caller's order. A job with parents waits (blockedBy) until they all
 * complete, and takes `onParentFailure` (default fail). Bad input throws InvalidOptionError naming the field.
 */
export function parseFlow(jobs: unknown, maxPayloadBytes: number): Map<string, FlowEntry> {
  if (!Array.isArray(jobs) || jobs.length === 0) throw new InvalidOptionError('jobs', 'a non-empty array of flow jobs', jobs);
  const byRef = new Map<string, FlowEntry>();
  jobs.forEach((job, i) => {
    const field = `jobs[${i}]`;
    const given = record(field, job);
    // a job's own db is refused (FLOW_JOB_OPTIONS): every job goes in on the call's connection
    noUnknownKeys(field, given, FLOW_JOB_OPTIONS.keys, FLOW_JOB_OPTIONS.hints);
    const { name, ref, dependsOn, onParentFailure, ...rest } = given as unknown as FlowJob;
    queueName(`${field}.name`, name);
    const key = optKey(`${field}.ref`, ref, 255);
    if (key === undefined) throw new InvalidOptionError(`${field}.ref`, 'a string of 1 to 255 characters', ref);
    if (byRef.has(key)) throw new InvalidOptionError(`${field}.ref`, 'a ref no other job of the flow uses', ref);
    if (dependsOn !== undefined && !Array.isArray(dependsOn))
      throw new InvalidOptionError(`${field}.dependsOn`, 'an array of refs', dependsOn);
    if (onParentFailure !== undefined && onParentFailure !== 'fail' && onParentFailure !== 'cancel') {
      throw new InvalidOptionError(`${field}.onParentFailure`, 'one of "fail", "cancel"', onParentFailure);
    }
    const parents = [...new Set(dependsOn ?? [])];
    const parsed = parseSendOptions(rest, field, INSERT_JOB_OPTIONS);
    if (parents.length > 0 && (parsed.startAt !== undefined || parsed.startIn !== undefined)) {
      throw new InvalidOptionError(
        `${field}.startAfter`,
        'left out: a job with dependsOn starts when its parents complete',
        rest.startAfter,
      );
    }
    const data = toJson(`${field}.data`, rest.data, maxPayloadBytes);
    byRef.set(key, {
      index: i,
      queue: name,
      parsed: { ...parsed, blockedBy: parents.length, onParentFailure: onParentFailure ?? 'fail' },
      data,
      parents,
    });
  });
  for (const { index, parents } of byRef.values()) {
    for (const parent of parents) {
      if (!byRef.has(parent))
        throw new InvalidOptionError(`jobs[${index}].dependsOn`, `refs of jobs in this flow (${[...byRef.keys()].join(', ')})`, parent);
    }
  }
  assertAcyclic(byRef);
  return byRef;
}

/** The flow's jobs grouped by queue (each queue's are inserted in one statement), refs in the caller's order. */
export function flowByQueue(byRef: Map<string, FlowEntry>): Map<string, { ref: string; entry: FlowEntry }[]> {
  const byQueue = new Map<string, { ref: string; entry: FlowEntry }[]>();
  for (const [ref, entry] of byRef) byQueue.set(entry.queue, [...(byQueue.get(entry.queue) ?? []), { ref, entry }]);
  return byQueue;
}

/** The dependency rows of a flow whose jobs have ids: parent queue, parent id, child queue, child id. */
export function flowEdges(byRef: Map<string, FlowEntry>, ids: Record<string, string>): [string, string, string, string][] {
  return [...byRef.entries()].flatMap(([ref, e]) =>
    e.parents.map((p): [string, string, string, string] => [byRef.get(p)!.queue, ids[p]!, e.queue, ids[ref]!]),
  );
}

/** Refuses a flow whose dependsOn make a cycle: its jobs would wait for each other forever. */
export function assertAcyclic(byRef: Map<string, { index: number; parents: string[] }>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (ref: string, path: string[]): void => {
    if (state.get(ref) === 'done') return;
    if (state.get(ref) === 'visiting') {
      throw new InvalidOptionError(
        `jobs[${byRef.get(ref)!.index}].dependsOn`,
        'refs that do not form a cycle',
        [...path, ref].join(' -> '),
      );
    }
    state.set(ref, 'visiting');
    for (const parent of byRef.get(ref)!.parents) visit(parent, [...path, ref]);
    state.set(ref, 'done');
  };
  for (const ref of byRef.keys()) visit(ref, []);
}
