// Redrive: moves dead-lettered jobs of a dead-letter queue back to the queues they came from, or to another queue
// the caller names, as new jobs under that queue's settings. Its own unit: its options outgrew job control.
import { InvalidOptionError } from '../errors.js';
import type { JobControlContext } from './control.js';
import { plainIds } from './refs.js';
import { int, noUnknownKeys, queueName, record } from '../config/validate.js';

/** Options of `redrive`. */
export interface RedriveOptions {
  /** Only these jobs of the dead-letter queue (by id). */
  ids?: string[];
  /** At most this many move (default 1000, 1 to 100,000). */
  limit?: number;
  /** Only jobs that came from this queue. */
  sourceName?: string;
  /** Move them into this queue (which must exist), under its settings, instead of the queues they came from. */
  destination?: string;
}

/** What redrive moved: how many, and the new jobs' ids. */
export interface RedriveResult {
  moved: number;
  ids: string[];
}

const REDRIVE_KEYS: ReadonlySet<string> = new Set(['ids', 'limit', 'sourceName', 'destination']);

/** The redrive call; PgQueue.redrive delegates here. */
export class Redrive {
  constructor(private readonly ctx: JobControlContext) {}

  async redrive(name: string, options?: RedriveOptions): Promise<RedriveResult> {
    queueName('name', name);
    const o = record('options', options) as RedriveOptions;
    // pg-boss's filters not built here (data, createdBefore) must not be taken for a filter that moved nothing
    noUnknownKeys('options', o as Record<string, unknown>, REDRIVE_KEYS);
    const ids = o.ids === undefined ? null : [...new Set(plainIds(o.ids, 'options.ids'))];
    const limit = o.limit === undefined ? 1000 : int('options.limit', o.limit, 1, 100_000);
    const source = o.sourceName === undefined ? null : queueName('options.sourceName', o.sourceName);
    const destination = o.destination === undefined ? null : queueName('options.destination', o.destination);
    // Into the dead-letter queue itself, a job would only lose where it came from.
    if (destination === name) throw new InvalidOptionError('options.destination', `a queue other than "${name}"`, destination);
    const exec = await this.ctx.db();
    await this.ctx.router.assertExists(exec, name);
    if (destination !== null) await this.ctx.router.assertExists(exec, destination);
    const candidates = await this.ctx.router.withQueueStatements(
      exec,
      name,
      (st) =>
        ids === null
          ? exec.query<{ id: string }>(st.listDeadLettered, [name, limit, source, destination])
          : exec.query<{ id: string }>(st.listDeadLetteredByIds, [name, ids, limit, source, destination]),
      (rows) => rows.length === 0,
    );
    const statements = await this.ctx.router.statementsForQueue(exec, name);
    const moved: string[] = [];
    // One statement per job: each copy and its delete commit together, and a copy that the receiving
    // queue's policy refuses leaves its job in the dead-letter queue.
    for (const { id } of candidates) {
      const [copy] = await exec.query<{ id: string }>(statements.redriveJob, [name, id, destination]);
      if (copy) moved.push(copy.id);
    }
    return { moved: moved.length, ids: moved };
  }
}
