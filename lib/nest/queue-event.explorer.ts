// Finds the @OnQueueEvent methods of the app's providers and makes each a listener of QueueService's lifecycle
// event, filtered to its queues: those it names, else those of its own class's @QueueHandler methods. Listeners
// are in place before the workers start (onApplicationBootstrap), and taken off at the app's shutdown, once
// the workers have drained.
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { QueueError } from '../core/errors.js';
import type { JobEventName } from '../core/events.js';
import { parseQueueEventOptions, type QueueEventMetadata } from './decorators/on-queue-event.decorator.js';
import type { QueueHandlerMetadata } from './decorators/queue-handler.decorator.js';
import { QUEUE_EVENT_METADATA, QUEUE_HANDLER_METADATA } from './queue.constants.js';
import { QueueService } from './queue.service.js';

@Injectable()
export class QueueEventExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('QueueEvents');
  private readonly listeners: [JobEventName, (event: { queue: string }) => void][] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly queue: QueueService,
  ) {}

  async onModuleInit(): Promise<void> {
    let found: [JobEventName, (event: { queue: string }) => void][];
    try {
      found = this.discover();
    } catch (err) {
      // Nest runs no shutdown hook after a failed init: close what the queue has opened (its handlers' init may
      // have started it). discover() runs before this init's first await, and close() marks the queue closing at
      // once: the handlers' init, run beside this one, then creates no queue.
      await this.queue.close();
      throw err;
    }
    for (const [event, listener] of found) {
      this.queue.on(event, listener);
      this.listeners.push([event, listener]);
    }
  }

  /**
   * The listeners of the app's @OnQueueEvent methods. Throws InvalidOptionError for options it cannot take, and a
   * QueueError naming every listener that cannot hear anything (request-scoped, or with no queue).
   */
  private discover(): [JobEventName, (event: { queue: string }) => void][] {
    const problems: string[] = [];
    const found: [JobEventName, (event: { queue: string }) => void][] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      const prototype = (instance && typeof instance === 'object' ? Object.getPrototypeOf(instance) : wrapper.metatype?.prototype) as
        Record<string, object> | null | undefined;
      if (!prototype || prototype === Object.prototype) continue;
      const methods = this.scanner.getAllMethodNames(prototype);
      const own = methods
        .map((m) => Reflect.getMetadata(QUEUE_HANDLER_METADATA, prototype[m] ?? {}) as QueueHandlerMetadata | undefined)
        .filter((meta): meta is QueueHandlerMetadata => meta !== undefined)
        .map((meta) => meta.name);
      for (const method of methods) {
        const recorded = Reflect.getMetadata(QUEUE_EVENT_METADATA, prototype[method] ?? {}) as QueueEventMetadata | undefined;
        if (!recorded) continue;
        const where = `${(prototype.constructor as { name: string }).name}.${method}`;
        const meta = parseQueueEventOptions(where, recorded);
        if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient || !instance) {
          problems.push(
            `@OnQueueEvent('${meta.event}') on ${where}: its provider is request-scoped or transient; listeners must live on singleton providers`,
          );
          continue;
        }
        const queues = new Set(meta.queue === null ? own : [meta.queue]);
        if (queues.size === 0) {
          problems.push(`@OnQueueEvent('${meta.event}') on ${where} names no queue and its class has no @QueueHandler: give { queue }`);
          continue;
        }
        const listener = (event: { queue: string }) => {
          if (!queues.has(event.queue)) return;
          const fail = (err: unknown) =>
            this.logger.error(
              `${where} threw on a ${meta.event} event of queue "${event.queue}": ${err instanceof Error ? err.message : String(err)}`,
            );
          try {
            const result = (instance[method] as (e: unknown) => unknown).call(instance, event);
            if (result !== null && typeof (result as { then?: unknown })?.then === 'function') Promise.resolve(result).catch(fail);
          } catch (err) {
            fail(err);
          }
        };
        found.push([meta.event, listener]);
      }
    }
    if (problems.length > 0) throw new QueueError(`invalid @OnQueueEvent registration: ${problems.join('; ')}`, 'INVALID_HANDLER');
    return found;
  }

  // at shutdown, not at destroy: the workers drain in beforeApplicationShutdown, and their last events are heard
  onApplicationShutdown(): void {
    for (const [event, listener] of this.listeners.splice(0)) this.queue.off(event, listener);
  }
}
