// A job's own `deadLetter` (a send option) is checked as a queue's is (queues/admin.ts): it must name a queue that
// exists and is not key_strict_fifo. Unchecked, a misspelt one was stored, and the copy the job's last failure makes
// (sql/settle.ts, DEAD_LETTER: an insert joined to the queue it names) was lost without a word.
//
// The check reads the queue's profile through the router, which keeps it for the engine's life: the first send that
// names a dead-letter queue pays one read, later ones none, and a send that names none is never touched. The same
// cache holds the profiles every send reads already, so a dead-letter queue deleted by another instance is known
// here only once a call on it finds it gone (see QueueRouter) — as for the queue a job is sent to.
import type { Executor } from '../runtime/db.js';
import { InvalidOptionError } from '../errors.js';
import type { QueueRouter } from '../queues/router.js';

/** A dead-letter queue a call names, and the field that named it (`options.deadLetter`, `jobs[3].deadLetter`). */
export interface DeadLetterTarget {
  field: string;
  queue: string;
}

/**
 * Throws InvalidOptionError naming the first field whose queue does not exist or is a key_strict_fifo queue (its
 * copies could carry no key); each queue is looked up once per call. Runs on `exec`, so a dead-letter queue created
 * earlier in the caller's transaction counts.
 */
export async function assertDeadLetterTargets(router: QueueRouter, exec: Executor, targets: readonly DeadLetterTarget[]): Promise<void> {
  const seen = new Set<string>();
  for (const { field, queue } of targets) {
    if (seen.has(queue)) continue;
    seen.add(queue);
    const profile = await router.known(exec, queue);
    if (profile === null)
      throw new InvalidOptionError(field, 'an existing queue (it receives a copy of the job after its last failure)', queue);
    if (profile.policy === 'key_strict_fifo')
      throw new InvalidOptionError(field, 'a queue whose policy is not key_strict_fifo (dead-lettered copies may carry no key)', queue);
  }
}

/** The dead-letter queues that jobs name, each with its field (`fieldOf(i)` for the i-th job). */
export function deadLetterTargets(jobs: readonly { deadLetter?: string }[], fieldOf: (i: number) => string): DeadLetterTarget[] {
  const targets: DeadLetterTarget[] = [];
  jobs.forEach((job, i) => {
    if (job.deadLetter !== undefined) targets.push({ field: fieldOf(i), queue: job.deadLetter });
  });
  return targets;
}
