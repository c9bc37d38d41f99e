// Publish/subscribe: queues subscribe to named events, and a publish makes one job in every subscribed queue, in
// one statement (so all or none, and inside the caller's transaction when it gives one).
import { callerExecutor } from '../runtime/db.js';
import { assertDeadLetterTargets } from './dead-letter-targets.js';
import { InvalidOptionError, QueueNotFoundError } from '../errors.js';
import { parseSendOptions, type ParsedSendOptions } from '../config/options.js';
import { SQLSTATE, sqlState } from '../runtime/pg-errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { insertArgs } from '../sql/index.js';
import type { SendOptions } from '../types.js';
import { queueName, toJson } from '../config/validate.js';

/** A job that publish() made: its queue (`name`, as in JobWithMetadata) and its id. */
export interface PublishedJob {
  name: string;
  id: string;
}

/** The publish/subscribe calls; PgQueue's methods of the same names delegate here. */
export class PubSub {
  constructor(private readonly rt: Runtime) {}

  /** Subscribes queue `queue` to event `event`; true when the subscription is new, false when it was there. */
  async subscribe(event: string, queue: string): Promise<boolean> {
    queueName('event', event);
    queueName('queue', queue);
    const exec = await this.rt.db();
    let rows: { queue_exists: boolean; added: boolean }[];
    try {
      rows = await exec.query(this.rt.statements.subscribeQueue, [event, queue]);
    } catch (err) {
      // the queue was deleted by a transaction that committed while this insert checked its foreign key
      if (sqlState(err) === SQLSTATE.foreignKeyViolation) throw new QueueNotFoundError(queue);
      throw err;
    }
    if (!rows[0]?.queue_exists) throw new QueueNotFoundError(queue);
    return rows[0].added;
  }

  /** Removes the subscription; true when there was one. A queue that does not exist has none (no error). */
  async unsubscribe(event: string, queue: string): Promise<boolean> {
    queueName('event', event);
    queueName('queue', queue);
    const exec = await this.rt.db();
    return (await exec.query(this.rt.statements.unsubscribeQueue, [event, queue])).length > 0;
  }

  async publish(event: string, data?: unknown, options?: SendOptions): Promise<PublishedJob[]> {
    queueName('event', event);
    // `data` among the options is refused there: a publish's data is its second argument
    const parsed = parseSendOptions(options);
    const json = toJson('data', data, this.rt.config.maxPayloadBytes);
    // In a caller's transaction too, a publish made once close() has begun is refused (start()).
    await this.rt.start();
    const exec = options?.db ? callerExecutor(options.db) : this.rt.exec;
    if (parsed.deadLetter !== undefined)
      await assertDeadLetterTargets(this.rt.router, exec, [{ field: 'options.deadLetter', queue: parsed.deadLetter }]);
    const run = async (traceContext: string | null): Promise<PublishedJob[]> => {
      const rows = await exec.query<{ queue: string; id: string | null }>(
        this.rt.statements.publishJobs,
        publishArgs(event, json, parsed, traceContext),
      );
      const keyless = rows.find((r) => r.id === null);
      if (keyless) {
        throw new InvalidOptionError(
          'options.singletonKey',
          `a key: key_strict_fifo queue "${keyless.queue}" is subscribed to event "${event}" (nothing was published)`,
          undefined,
        );
      }
      return rows.map((r) => ({ name: r.queue, id: r.id! }));
    };
    const tracing = this.rt.tracing;
    // one span for the publish, named for the event (its destination); every job made stores its context
    return tracing ? tracing.send(event, 1, run) : run(null);
  }
}

/** publishJobs' arguments: insertJobs' for one job, $1 being the event instead of a queue. */
function publishArgs(event: string, json: string | null, parsed: ParsedSendOptions, traceContext: string | null): unknown[] {
  return insertArgs(event, `[${json ?? 'null'}]`, (key) => (parsed[key] === undefined ? null : [parsed[key]]), [0], traceContext);
}
