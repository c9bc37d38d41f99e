import { Module, type DynamicModule } from '@nestjs/common';
import { InvalidOptionError, QueueError } from '../core/errors.js';
import { isJobDefinition, type JobDefinition } from '../core/job-definition.js';
import { parseQueueOptions } from '../core/config/options.js';
import type { QueueOptions } from '../core/types.js';
import { queueName } from '../core/config/validate.js';

/** One queue a feature module declares: a job of defineJob(), or a name with the queue's options. */
export type QueueFeatureEntry = JobDefinition<unknown> | ({ name: string } & QueueOptions);

/** A queue's settings as declared in one place: by a feature module, or by a `@QueueHandler`. */
export interface QueueDeclaration {
  queue: string;
  /** Where it was declared, for messages. */
  where: string;
  queueOptions: Record<string, unknown>;
}

/** The queues of one `QueueModule.forFeature()` call, as a provider the handler explorer finds. */
export class QueueFeature {
  constructor(readonly declarations: readonly QueueDeclaration[]) {}
}

/** The module `QueueModule.forFeature()` returns: it only carries its declarations to the explorer. */
@Module({})
export class QueueFeatureModule {}

let features = 0;

/**
 * A feature module's queues, checked now (a typed error names the entry and the field): each is created at
 * bootstrap if missing, before any loop starts and whether or not this app handles it, so an app that only
 * sends declares the queues it sends to.
 */
export function queueFeature(entries: readonly QueueFeatureEntry[]): DynamicModule {
  if (!Array.isArray(entries) || entries.length === 0)
    throw new InvalidOptionError(
      'QueueModule.forFeature queues',
      'a non-empty array of defineJob() jobs or { name, ...queueOptions }',
      entries,
    );
  const call = ++features;
  const declarations = entries.map((entry, i): QueueDeclaration => {
    const field = `QueueModule.forFeature queues[${i}]`;
    if (entry === null || typeof entry !== 'object')
      throw new InvalidOptionError(field, 'a defineJob() job or { name, ...queueOptions }', entry);
    const given: Record<string, unknown> = isJobDefinition(entry) ? { name: entry.name, ...entry.options } : { ...(entry as object) };
    const { name: rawName, ...options } = given;
    const name = queueName(`${field}.name`, rawName);
    parseQueueOptions(options, field);
    // the call's number tells two feature modules' declarations of one queue apart in a message
    return { queue: name, where: `QueueModule.forFeature #${call} ('${name}')`, queueOptions: options };
  });
  const token = `pgqueue:feature:${call}`;
  return {
    module: QueueFeatureModule,
    providers: [{ provide: token, useValue: new QueueFeature(declarations) }],
  };
}

/**
 * One declaration per queue, for creating the queues: a queue's settings come from one place. A queue declared
 * in several (feature modules, a handler with queue options) must be declared alike everywhere, or it is
 * refused naming each place; a handler that gives no queue options takes a feature's.
 */
export function oneDeclarationPerQueue(declarations: readonly QueueDeclaration[]): QueueDeclaration[] {
  const byQueue = new Map<string, QueueDeclaration[]>();
  for (const d of declarations) byQueue.set(d.queue, [...(byQueue.get(d.queue) ?? []), d]);
  const chosen: QueueDeclaration[] = [];
  const problems: string[] = [];
  for (const [queue, all] of byQueue) {
    const given = all.filter((d) => Object.keys(d.queueOptions).length > 0);
    const settings = new Set(given.map((d) => JSON.stringify(parseQueueOptions(d.queueOptions, d.where))));
    if (settings.size > 1)
      problems.push(`queue "${queue}" is declared with different settings by ${given.map((d) => d.where).join(' and ')}`);
    chosen.push(given[0] ?? all[0]!);
  }
  if (problems.length > 0)
    throw new QueueError(`invalid queue declarations: ${problems.join('; ')}; declare a queue's settings in one place`, 'INVALID_HANDLER');
  return chosen;
}
