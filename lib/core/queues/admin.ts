// Queue administration: create, change, delete and read queues (the rows of the queues table and, for a queue
// with a partition of its own, that partition), and the key_strict_fifo keys a failed job holds back.
import { inTransaction, type Executor } from '../runtime/db.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import { InvalidOptionError, QueueError, QueueExistsError, QueueNotFoundError } from '../errors.js';
import { parseForce, parseQueueOptions, QUEUE_DEFAULTS, type ParsedQueueOptions } from '../config/options.js';
import { settingsOf, toQueueResult, type QueueRow } from '../rows.js';
import { createQueueArgs } from '../sql/index.js';
import type { Runtime } from '../runtime/runtime.js';
import type { QueueOptions, QueueResult } from '../types.js';
import { queueName, record } from '../config/validate.js';

/** How many times deleteQueue tries its transaction when PostgreSQL ends it to break a deadlock. */
const DELETE_ATTEMPTS = 3;

/** The queue administration calls; PgQueue's methods of the same names delegate here. */
export class QueueAdmin {
  constructor(private readonly rt: Runtime) {}

  async createQueue(name: string, options?: QueueOptions): Promise<void> {
    const created = await this.ensureQueue(name, options);
    if (!created.created && created.differences.length > 0) throw new QueueExistsError(name, created.differences);
  }

  async ensureQueue(name: string, options?: QueueOptions): Promise<{ created: boolean; differences: string[] }> {
    queueName('name', name);
    const o = parseQueueOptions(options);
    const d = QUEUE_DEFAULTS;
    const values = createQueueArgs(name, {
      policy: o.policy ?? d.policy,
      partition: o.partition ?? false,
      deadLetter: o.deadLetter ?? null,
      warningQueueSize: o.warningQueueSize ?? null,
      notify: o.notify ?? d.notify,
      retryLimit: o.retryLimit ?? d.retryLimit,
      retryDelay: o.retryDelay ?? d.retryDelay,
      retryBackoff: o.retryBackoff ?? d.retryBackoff,
      retryDelayMax: o.retryDelayMax ?? d.retryDelayMax,
      expireInSeconds: o.expireInSeconds ?? d.expireInSeconds,
      heartbeatSeconds: o.heartbeatSeconds ?? d.heartbeatSeconds,
      deleteAfterSeconds: o.deleteAfterSeconds ?? d.deleteAfterSeconds,
      retentionSeconds: o.retentionSeconds ?? d.retentionSeconds,
      concurrencyLimit: o.concurrencyLimit ?? null,
      rateLimit: o.rateLimit ?? null,
      removeOnComplete: o.removeOnComplete ?? d.removeOnComplete,
      failedDeleteAfterSeconds: o.failedDeleteAfterSeconds ?? d.failedDeleteAfterSeconds,
      failUnworkedAfterSeconds: o.failUnworkedAfterSeconds ?? null,
    });
    if ((o.policy ?? d.policy) === 'key_strict_fifo') refuseUnworkedFailures(o);
    const exec = await this.rt.db();
    if (o.deadLetter) await this.assertDeadLetterTarget(exec, o.deadLetter);
    const row = o.partition
      ? await this.createPartitionedQueue(name, values)
      : (await exec.query<QueueRow & { created: boolean }>(this.rt.statements.createQueue, values))[0];
    if (!row) throw new QueueError(`queue "${name}" was deleted while being created`, 'QUEUE_RACE');
    return { created: row.created, differences: row.created ? [] : differingSettings(o, row) };
  }

  /** The queue row and its own partition, in one transaction: neither exists without the other. */
  private async createPartitionedQueue(name: string, values: unknown[]): Promise<(QueueRow & { created: boolean }) | undefined> {
    // ensureQueue has started the engine: a call under way is not refused by a close() that began meanwhile.
    return inTransaction(this.rt.connect, async (client) => {
      // Creating a partition locks the jobs table: give up rather than stall every queue behind a long transaction.
      await client.query(this.rt.statements.setDdlLockTimeout);
      const [row] = (await client.query<QueueRow & { created: boolean }>(this.rt.statements.createQueue, values)).rows;
      if (row?.created) await client.query(this.rt.statements.createQueuePartition, [name]);
      return row;
    });
  }

  async updateQueue(name: string, options: Omit<QueueOptions, 'policy' | 'partition'>): Promise<void> {
    queueName('name', name);
    const given = record('options', options);
    for (const fixed of ['policy', 'partition']) {
      if (given[fixed] !== undefined)
        throw new InvalidOptionError(`options.${fixed}`, 'left out: it is fixed when the queue is created', given[fixed]);
    }
    const o = parseQueueOptions(given);
    const patch = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
    const exec = await this.rt.db();
    if (o.failUnworkedAfterSeconds && (await this.rt.router.profile(exec, name)).policy === 'key_strict_fifo') refuseUnworkedFailures(o);
    if (o.deadLetter) await this.assertDeadLetterTarget(exec, o.deadLetter);
    if (o.concurrencyLimit !== undefined || o.rateLimit !== undefined) {
      // Workers in every process claim a limited queue under its lock, and they decide that once: a
      // limit's value may change, but a queue cannot gain or lose its limits after it is created.
      const [row] = await exec.query<QueueRow>(this.rt.statements.getQueues, [[name]]);
      if (!row) throw new QueueNotFoundError(name);
      const stored = settingsOf(row);
      for (const [field, given, had] of [
        ['options.concurrencyLimit', o.concurrencyLimit, stored.concurrencyLimit],
        ['options.rateLimit', o.rateLimit, stored.rateLimit],
      ] as const) {
        if (given !== undefined && (given === null) !== (had === null)) {
          throw new InvalidOptionError(
            field,
            had === null ? 'left out: this queue was created without one' : 'a new value, not null: this queue was created with one',
            given,
          );
        }
      }
    }
    const rows = await exec.query(this.rt.statements.updateQueue, [name, JSON.stringify(patch)]);
    if (rows.length === 0) throw new QueueNotFoundError(name);
  }

  async deleteQueue(name: string): Promise<void> {
    queueName('name', name);
    const exec = await this.rt.db();
    const users = (await exec.query<{ name: string }>(this.rt.statements.queuesUsingDeadLetter, [name])).map((r) => r.name);
    if (users.length > 0) {
      throw new QueueError(
        `queue "${name}" is the dead-letter queue of ${users.map((u) => `"${u}"`).join(', ')}; change their deadLetter first`,
        'QUEUE_IN_USE',
      );
    }
    // Dropping a partition locks the partitioned `jobs`, then the partition, while a worker's settle on the
    // partition locks it first, then `jobs` (its flow work names it): when the two meet, PostgreSQL ends one of
    // them (deadlock_detected; the PostgreSQL log of test/core/partition.spec.ts showed both). The settle retries on
    // its own (Completer); the delete is tried again here, from the start.
    const deleted = await this.deleteRows(name);
    this.rt.router.forget(name);
    if (deleted === 0) throw new QueueNotFoundError(name);
  }

  /** deleteQueue's transaction, tried again when PostgreSQL ends it to break a deadlock; the queue rows it deleted. */
  private async deleteRows(name: string, attempt = 1): Promise<number | null> {
    try {
      return await inTransaction(this.rt.connect, async (client) => {
        await client.query(this.rt.statements.setDdlLockTimeout);
        await client.query(this.rt.statements.dropQueuePartition, [name]);
        await client.query(this.rt.statements.deleteQueueJobs, [name]);
        return (await client.query(this.rt.statements.deleteQueue, [name])).rowCount;
      });
    } catch (err) {
      if (sqlState(err) !== SQLSTATE.deadlockDetected || attempt === DELETE_ATTEMPTS) throw err;
      return this.deleteRows(name, attempt + 1);
    }
  }

  /**
   * Pauses or resumes the queue's claims on every instance (sql/queues.ts, setQueuePaused); a resume wakes the
   * idle workers at once. Throws QueueNotFoundError for an unknown queue.
   */
  async setPaused(name: string, paused: boolean): Promise<void> {
    queueName('name', name);
    const exec = await this.rt.db();
    // every instance's workers may listen, whatever this one does
    const rows = await exec.query(this.rt.statements.setQueuePaused, [name, paused, this.rt.config.channel]);
    if (rows.length === 0) throw new QueueNotFoundError(name);
  }

  async getQueue(name: string, options?: { force?: boolean }): Promise<QueueResult | null> {
    queueName('name', name);
    if (parseForce(options)) await this.rt.recount([name]);
    const [row] = await (await this.rt.db()).query<QueueRow>(this.rt.statements.getQueues, [[name]]);
    return row ? toQueueResult(row) : null;
  }

  async getQueues(names?: string[]): Promise<QueueResult[]> {
    if (names !== undefined) {
      if (!Array.isArray(names)) throw new InvalidOptionError('names', 'an array of queue names', names);
      names.forEach((n, i) => queueName(`names[${i}]`, n));
    }
    const rows = await (await this.rt.db()).query<QueueRow>(this.rt.statements.getQueues, [names ?? null]);
    return rows.map(toQueueResult);
  }

  async getBlockedKeys(name: string): Promise<string[]> {
    queueName('name', name);
    const exec = await this.rt.db();
    if ((await this.rt.router.profile(exec, name)).policy !== 'key_strict_fifo') {
      throw new InvalidOptionError('name', 'a key_strict_fifo queue', name);
    }
    return (await exec.query<{ key: string }>(this.rt.statements.getBlockedKeys, [name])).map((r) => r.key);
  }

  /** A dead-letter queue must exist, and not be key_strict_fifo: copies of failed jobs may carry no key. */
  private async assertDeadLetterTarget(exec: Executor, name: string): Promise<void> {
    if ((await this.rt.router.profile(exec, name)).policy === 'key_strict_fifo') {
      throw new InvalidOptionError(
        'options.deadLetter',
        'a queue whose policy is not key_strict_fifo (dead-lettered copies may carry no key)',
        name,
      );
    }
  }
}

/**
 * failUnworkedAfterSeconds is refused on a key_strict_fifo queue: a job that failed for good holds its key there, so
 * failing every ready job of an unworked queue would hold back every key until each failure is retried by hand.
 */
function refuseUnworkedFailures(o: ParsedQueueOptions): void {
  if (o.failUnworkedAfterSeconds)
    throw new InvalidOptionError(
      'options.failUnworkedAfterSeconds',
      'null or left out on a key_strict_fifo queue (a failed job holds its key)',
      o.failUnworkedAfterSeconds,
    );
}

/** What a queue's stored settings say against the options asked, one line per difference. */
function differingSettings(o: ParsedQueueOptions, row: QueueRow): string[] {
  const stored: Record<string, unknown> = settingsOf(row);
  return Object.entries(o)
    .filter(([key, value]) => value !== undefined && JSON.stringify(stored[key]) !== JSON.stringify(value))
    .map(([key, value]) => `${key} is ${JSON.stringify(stored[key])}, asked ${JSON.stringify(value)}`);
}
