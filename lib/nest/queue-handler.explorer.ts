import { Inject, Injectable, Logger, type ExceptionFilter, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { CUSTOM_ROUTE_ARGS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, ExternalContextCreator, MetadataScanner } from '@nestjs/core';
import type { ResolvedConfig } from '../core/config/config.js';
import { QueueError, QueueNotFoundError } from '../core/errors.js';
import type { JobDefinition } from '../core/job-definition.js';
import { parseQueueOptions, parseWorkOptions, splitHandlerOptions } from '../core/config/options.js';
import { schedulesOf } from '../core/pg-queue.js';
import { parseDeclaredSchedule, type DeclaredSchedule } from '../core/queues/schedules.js';
import { record } from '../core/config/validate.js';
import { HANDLER_FRAME } from '../core/worker/index.js';
import type { Job } from '../core/types.js';
import type { QueueHandlerMetadata } from './decorators/queue-handler.decorator.js';
import { boundFilters, withFilters, type BoundFilter } from './handler-filters.js';
import { oneDeclarationPerQueue, QueueFeature, type QueueDeclaration } from './queue-feature.js';
import { QUEUE_CONFIG, QUEUE_CONTEXT_TYPE, QUEUE_HANDLER_METADATA } from './queue.constants.js';
import { QueueService } from './queue.service.js';

/** What Nest asks for a built-in parameter decorator's value: none has a meaning for a job (refused at boot). */
const NO_BUILT_IN_PARAMS = { exchangeKeyForValue: (): undefined => undefined };

interface DiscoveredHandler {
  queue: string;
  /** The declared job, whose schema checks each payload (null: a queue named by a string). */
  job: JobDefinition | null;
  where: string;
  instance: Record<string, (job: Job) => unknown>;
  method: string;
  queueOptions: Record<string, unknown>;
  workOptions: Record<string, unknown>;
  schedule: DeclaredSchedule | null;
  /** The method's and its class's `@UseFilters`, made (handler-filters.ts). */
  filters: BoundFilter[];
}

/**
 * Finds `@QueueHandler` methods during module init (and refuses bad registrations there), creates their
 * queues if missing, keeps their schedules in step, and starts their loops at application bootstrap, never earlier.
 */
@Injectable()
export class QueueHandlerExplorer implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('QueueHandlerExplorer');
  private handlers: DiscoveredHandler[] = [];
  /** Every queue to create at init, one per queue, each after its dead-letter queue. */
  private declarations: QueueDeclaration[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly queue: QueueService,
    @Inject(QUEUE_CONFIG) private readonly config: ResolvedConfig,
    private readonly contexts: ExternalContextCreator,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      this.handlers = this.discover();
      const byHandlers = this.handlers.map((h) => ({
        queue: h.queue,
        where: `@QueueHandler('${h.queue}') on ${h.where}`,
        queueOptions: h.queueOptions,
      }));
      // a loop of deadLetter options is refused here, before anything connects
      this.declarations = inDeadLetterOrder(oneDeclarationPerQueue([...this.featureDeclarations(), ...byHandlers]));
    } catch (err) {
      // Nest runs no shutdown hook after a failed init: release what the queue has opened so far.
      await this.queue.close();
      throw err;
    }
    await this.queue.start();
    try {
      await this.makeQueues();
    } catch (err) {
      // as above: no shutdown hook runs after a failed init
      await this.queue.close();
      throw err;
    }
  }

  /** The queues that `QueueModule.forFeature()` modules declare. */
  private featureDeclarations(): QueueDeclaration[] {
    return this.discovery
      .getProviders()
      .flatMap((wrapper) => (wrapper.instance instanceof QueueFeature ? wrapper.instance.declarations : []));
  }

  /** Creates the declared queues (each after its dead-letter queue) and keeps the handlers' schedules in step. */
  private async makeQueues(): Promise<void> {
    for (const d of this.declarations) {
      const { created, differences } = await this.queue.ensureQueue(d.queue, d.queueOptions).catch((err: unknown) => {
        // the dead-letter queue it names is declared nowhere, and does not exist
        if (err instanceof QueueNotFoundError && err.queue === d.queueOptions.deadLetter)
          throw Object.assign(
            new QueueError(
              `${d.where}: deadLetter "${String(d.queueOptions.deadLetter)}" names a queue that does not exist; declare it with a @QueueHandler or QueueModule.forFeature, or create it before the app starts`,
              'DEAD_LETTER_MISSING',
            ),
            { cause: err },
          );
        throw err;
      });
      if (!created && differences.length > 0) {
        this.logger.warn(
          `queue "${d.queue}" exists with settings that differ from ${d.where}: ${differences.join('; ')} (the stored settings apply; change them with updateQueue)`,
        );
      }
    }
    for (const h of this.handlers) {
      // a schedule the handler no longer declares goes; one schedule() made at run time stays
      const kept = await schedulesOf(this.queue).syncDeclared(
        h.queue,
        h.schedule ? [h.schedule] : [],
        `@QueueHandler('${h.queue}') on ${h.where}.schedule`,
      );
      for (const sentence of kept) this.logger.warn(sentence);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.workers) return;
    let loops: { h: DiscoveredHandler; run: (job: Job) => Promise<unknown> }[];
    try {
      // every method's pipeline first (a bad enhancer throws here), so that no loop starts before one is refused
      loops = this.handlers.map((h) => ({ h, run: this.pipelineOf(h) }));
    } catch (err) {
      await this.queue.close();
      throw err;
    }
    for (const { h, run } of loops) await this.queue.work(h.job ?? h.queue, h.workOptions, run);
  }

  /**
   * The method inside Nest's pipeline, as a controller's runs: its guards and interceptors (its own, its class's
   * and the app's global ones), in an execution context of type 'pgqueue', and around them its bound exception
   * filters. Nest's own filter layer is left out: it logs every error it is handed, and the worker already
   * reports each failed attempt.
   */
  private pipelineOf(h: DiscoveredHandler): (job: Job) => Promise<unknown> {
    const inPipeline = this.contexts.create(
      h.instance,
      h.instance[h.method] as (...args: unknown[]) => unknown,
      h.method,
      // the parameters decorated with @JobPayload() or @CurrentJob() (custom decorators: Nest makes their values and
      // runs the pipes on them); a method with none gets the job as it is, and no pipe runs
      ROUTE_ARGS_METADATA,
      NO_BUILT_IN_PARAMS,
      undefined,
      undefined,
      { guards: true, interceptors: true, filters: false },
      QUEUE_CONTEXT_TYPE,
    ) as (job: Job) => Promise<unknown>;
    const run = withFilters(inPipeline, h.filters, QUEUE_CONTEXT_TYPE);
    // named after the method: the cluster registry lists it as the loop's task (the dashboard's Task column)
    Object.defineProperty(run, 'name', { value: h.where });
    // the method's frame is its own: a stop call it makes (queue.offWork) is seen as its loop's handler's, also
    // through an interceptor, which calls the method from RxJS (see loop-frame.ts)
    Object.defineProperty(run, HANDLER_FRAME, { value: h.where });
    return run;
  }

  private discover(): DiscoveredHandler[] {
    const found: DiscoveredHandler[] = [];
    const problems: string[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      // A built instance tells its real class (also for factory and value providers); a request-scoped
      // provider has none at bootstrap, so its class is read instead.
      const prototype = (
        wrapper.isDependencyTreeStatic() && wrapper.instance && typeof wrapper.instance === 'object'
          ? Object.getPrototypeOf(wrapper.instance)
          : wrapper.inject
            ? null
            : wrapper.metatype?.prototype
      ) as Record<string, object> | null | undefined;
      if (!prototype || prototype === Object.prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const meta = Reflect.getMetadata(QUEUE_HANDLER_METADATA, prototype[method] ?? {}) as QueueHandlerMetadata | undefined;
        if (!meta) continue;
        const where = `${(prototype.constructor as { name: string }).name}.${method}`;
        if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
          problems.push(
            `${where} handles queue "${meta.name}" but its provider is request-scoped or transient; queue handlers must live on singleton providers`,
          );
          continue;
        }
        const problem = paramsProblem(prototype, method);
        if (problem) {
          problems.push(`${where} ${problem}`);
          continue;
        }
        const field = `@QueueHandler('${meta.name}') on ${where}`;
        const { schedule, ...options } = record(field, meta.options);
        // a key that is neither a queue setting nor a loop option is refused naming the handler (pg-boss's names get
        // what to write here instead)
        const { queue, work } = splitHandlerOptions(options, field);
        parseQueueOptions(queue, field);
        parseWorkOptions(work, field);
        found.push({
          queue: meta.name,
          job: meta.job ?? null,
          where,
          instance: wrapper.instance as DiscoveredHandler['instance'],
          method,
          queueOptions: queue,
          workOptions: work,
          schedule: schedule === undefined ? null : parseDeclaredSchedule(`${field}.schedule`, schedule, this.config.maxPayloadBytes),
          // the instance Nest made of a filter class for this provider's module
          filters: boundFilters(prototype, method, (type) => singletonIn(wrapper.host?.injectables.get(type)), where),
        });
      }
    }
    const byQueue = new Map<string, string[]>();
    for (const h of found) byQueue.set(h.queue, [...(byQueue.get(h.queue) ?? []), h.where]);
    for (const [queue, places] of byQueue) {
      if (places.length > 1)
        problems.push(`queue "${queue}" has ${places.length} handlers: ${places.join(', ')}; a queue takes exactly one`);
    }
    if (problems.length > 0) throw new QueueError(`invalid @QueueHandler registration: ${problems.join('; ')}`, 'INVALID_HANDLER');
    return found;
  }
}

/**
 * The handlers in the order their queues can be made: a queue whose `deadLetter` another handler declares comes
 * after that one (createQueue needs its dead-letter queue to exist), whatever the order of the methods. A chain
 * that comes back on itself cannot be made in any order, and is refused naming its handlers.
 */
export function inDeadLetterOrder<H extends { queue: string; where: string; queueOptions: Record<string, unknown> }>(
  handlers: readonly H[],
): H[] {
  const declared = new Map(handlers.map((h) => [h.queue, h]));
  const ordered: H[] = [];
  const placed = new Set<H>();
  const visiting: H[] = [];
  const place = (h: H): void => {
    if (placed.has(h)) return;
    if (visiting.includes(h)) {
      const loop = [...visiting.slice(visiting.indexOf(h)), h].map((x) => `${x.where} ("${x.queue}")`).join(' → ');
      throw new QueueError(`invalid queue declarations: the deadLetter options form a loop: ${loop}`, 'INVALID_HANDLER');
    }
    visiting.push(h);
    const target = h.queueOptions.deadLetter;
    // (a queue naming itself is a loop of one)
    const before = typeof target === 'string' ? declared.get(target) : undefined;
    if (before) place(before);
    visiting.pop();
    placed.add(h);
    ordered.push(h);
  };
  for (const h of handlers) place(h);
  return ordered;
}

/** The instance of an injectable Nest made once for the module (none for a request-scoped or transient one). */
function singletonIn(wrapper: { isDependencyTreeStatic(): boolean; isTransient: boolean; instance: unknown } | undefined) {
  if (!wrapper || !wrapper.isDependencyTreeStatic() || wrapper.isTransient) return undefined;
  return wrapper.instance as ExceptionFilter | undefined;
}

/**
 * What is wrong with a handler's parameter decorators, if anything: one made for HTTP (@Body, @Param…) has no value
 * for a job, and once one parameter is decorated Nest passes only the decorated ones (the others would be undefined).
 */
function paramsProblem(prototype: Record<string, object>, method: string): string | null {
  const params = (Reflect.getMetadata(ROUTE_ARGS_METADATA, prototype.constructor, method) ?? {}) as Record<string, { index: number }>;
  const keys = Object.keys(params);
  if (keys.length === 0) return null;
  if (keys.some((key) => !key.includes(CUSTOM_ROUTE_ARGS_METADATA)))
    return "has a parameter decorated for HTTP (@Body, @Param, @Query…); a job's are @JobPayload() and @CurrentJob()";
  const declared = (Reflect.getMetadata('design:paramtypes', prototype, method) as unknown[] | undefined)?.length ?? 0;
  const decorated = new Set(Object.values(params).map((p) => p.index));
  // without decorator metadata (esbuild, swc) `length` stops at the first default value: the decorated ones count too
  const count = Math.max(declared, (prototype[method] as (...args: unknown[]) => unknown).length, Math.max(...decorated) + 1);
  const bare = Array.from({ length: count }, (_, i) => i).filter((i) => !decorated.has(i));
  return bare.length > 0
    ? `decorates some parameters but not parameter ${bare.join(', ')}: once one is decorated, each must be (@JobPayload() or @CurrentJob())`
    : null;
}
