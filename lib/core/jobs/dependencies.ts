// Reading one job and its links: getJobById (the job, with what holds it back and what it holds back) and the
// jobs a flow links to it, its parents (getDependencies) and its children (getDependents).
import { InvalidOptionError } from '../errors.js';
import { isJobId } from './refs.js';
import { toJobWithMetadata, type JobRow } from '../rows.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Statements } from '../sql/index.js';
import type { JobWithMetadata, QueuePolicy } from '../types.js';
import { queueName } from '../config/validate.js';

/** What getJobById adds to a job's stored fields: facts about its place among other jobs. */
export interface JobDetails<T = unknown> extends JobWithMetadata<T> {
  /** The policy of its queue when it was sent (copied onto the job; the queue's policy never changes). */
  policy: QueuePolicy;
  /** Its group (`send`'s `group` option), or null. */
  group: { id: string; tier: string | null } | null;
  /** sendThrottled/sendDebounced: the start of the time slot the job holds (pg-boss's name), or null. */
  singletonOn: Date | null;
  /** The end of that slot: until then a send into it is refused, and retention keeps the job. */
  slotUntil: Date | null;
  /**
   * Why the job waits, when it does: 'parents' while a flow parent has not completed; 'key' while it is a
   * key_strict_fifo job behind another job of its key (one holding the key, in retry, active or failed, or one
   * queued ahead of it). Null otherwise, and for a job that is not waiting (created).
   */
  blocked: 'parents' | 'key' | null;
  /**
   * True while flow children wait for this job: it has not finished (created, retry, active) and a flow made jobs
   * depend on it (getDependents lists them). A child cancelled or deleted by hand meanwhile still counts.
   */
  blocking: boolean;
}

/** A row of getJobDetails. */
interface DetailsRow extends JobRow {
  policy: QueuePolicy;
  group_id: string | null;
  group_tier: string | null;
  singleton_on: Date | null;
  slot_until: Date | null;
  blocked: 'parents' | 'key' | null;
  blocking: boolean;
}

/** The reads of a job and its flow links; PgQueue's methods of the same names delegate here. */
export class JobDependencies {
  constructor(private readonly rt: Runtime) {}

  async getJobById<T = unknown>(name: string, id: string): Promise<JobDetails<T> | null> {
    const [row] = await this.read<DetailsRow>(name, id, (st) => st.getJobDetails);
    if (!row) return null;
    // a link may outlive its child: only a child that still waits makes the job blocking
    const blocking =
      row.blocking &&
      ((await (await this.rt.db()).query<{ waiting: boolean }>(this.rt.statements.waitingChildren, [name, id]))[0]?.waiting ?? false);
    return {
      ...toJobWithMetadata<T>(row),
      policy: row.policy,
      group: row.group_id === null ? null : { id: row.group_id, tier: row.group_tier },
      singletonOn: row.singleton_on,
      slotUntil: row.slot_until,
      blocked: row.blocked,
      blocking,
    };
  }

  /** The jobs job `id` of queue `name` waits or waited for; null when there is no such job. */
  getDependencies<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T>[] | null> {
    return this.linked<T>(name, id, (st) => st.getJobParents);
  }

  /** The jobs that wait or waited for job `id` of queue `name`; null when there is no such job. */
  getDependents<T = unknown>(name: string, id: string): Promise<JobWithMetadata<T>[] | null> {
    return this.linked<T>(name, id, (st) => st.getJobChildren);
  }

  private async linked<T>(name: string, id: string, statement: (st: Statements) => string): Promise<JobWithMetadata<T>[] | null> {
    const rows = await this.read<JobRow>(name, id, statement);
    if (rows.length === 0) return null;
    // the job without links comes back as one row of nulls (a left join)
    return rows.filter((r) => r.id !== null).map((r) => toJobWithMetadata<T>(r));
  }

  /** Runs a statement about job `id` of queue `name` on the table that holds that queue's jobs. */
  private async read<R>(name: string, id: string, statement: (st: Statements) => string): Promise<R[]> {
    queueName('name', name);
    if (!isJobId(id)) throw new InvalidOptionError('id', 'a job id (a string of digits from 1 to 9223372036854775807)', id);
    const exec = await this.rt.db();
    return this.rt.router.withQueueStatements(
      exec,
      name,
      (st) => exec.query<R>(statement(st), [name, id]),
      (rows) => rows.length === 0,
    );
  }
}
