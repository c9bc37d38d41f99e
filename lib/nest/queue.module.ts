import {
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type OptionalFactoryDependency,
  type Provider,
  type Type,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { resolveConfig, type QueueModuleOptions } from '../core/config/config.js';
import { InvalidOptionError } from '../core/errors.js';
import { knownKeys } from './mount.js';
import { QUEUE_CONFIG } from './queue.constants.js';
import { QueueEventExplorer } from './queue-event.explorer.js';
import { queueFeature, type QueueFeatureEntry } from './queue-feature.js';
import { QueueHandlerExplorer } from './queue-handler.explorer.js';
import { QueueService } from './queue.service.js';

/** A class that gives the module's options, for `forRootAsync({ useClass })` or `({ useExisting })`. */
export interface QueueOptionsFactory {
  createQueueOptions(): QueueModuleOptions | Promise<QueueModuleOptions>;
}

/**
 * Options of `QueueModule.forRootAsync`, as every Nest module takes them: exactly one of `useFactory` (with
 * `inject`), `useClass` (a QueueOptionsFactory made in this module) or `useExisting` (one provided elsewhere,
 * reached through `imports`).
 */
export interface QueueModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  // any[], as Nest's own factories: a user's factory with typed parameters must be accepted.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory?: (...args: any[]) => QueueModuleOptions | Promise<QueueModuleOptions>;
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  useClass?: Type<QueueOptionsFactory>;
  useExisting?: InjectionToken<QueueOptionsFactory>;
}

/** Provides `QueueService` to the whole application and runs the `@QueueHandler` loops. */
@Module({})
export class QueueModule {
  static forRoot(options: QueueModuleOptions): DynamicModule {
    return QueueModule.build([], () => resolveConfig(options), []);
  }

  static forRootAsync(options: QueueModuleAsyncOptions): DynamicModule {
    const given = (['useFactory', 'useClass', 'useExisting'] as const).filter((k) => options?.[k] !== undefined);
    if (given.length !== 1)
      throw new InvalidOptionError('options', 'exactly one of useFactory, useClass and useExisting', given.length ? given : options);
    knownKeys('QueueModule', options, ['imports', 'useFactory', 'inject', 'useClass', 'useExisting'], 'forRootAsync');
    // inject feeds useFactory's parameters; beside a class there is nothing to feed
    if (given[0] !== 'useFactory' && options.inject !== undefined)
      throw new InvalidOptionError('options.inject', `absent beside ${given[0]}: inject gives useFactory its arguments`, options.inject);
    const imports = options.imports ?? [];
    const { useFactory, useClass, useExisting } = options;
    if (given[0] === 'useFactory') {
      if (typeof useFactory !== 'function') throw new InvalidOptionError('options.useFactory', 'a function', useFactory);
      return QueueModule.build(imports, async (...args: unknown[]) => resolveConfig(await useFactory(...args)), options.inject ?? []);
    }
    const token = given[0] === 'useClass' ? useClass : useExisting;
    if (!token) throw new InvalidOptionError(`options.${given[0]}`, 'a class with createQueueOptions()', token);
    const fromFactory = async (factory: QueueOptionsFactory) => {
      if (typeof factory?.createQueueOptions !== 'function')
        throw new InvalidOptionError(useClass ? 'options.useClass' : 'options.useExisting', 'a class with createQueueOptions()', token);
      return resolveConfig(await factory.createQueueOptions());
    };
    return QueueModule.build(imports, fromFactory, [token], useClass ? [useClass] : []);
  }

  /**
   * Declares a feature module's queues next to its handlers: `QueueModule.forFeature([WelcomeEmail, { name:
   * 'reports', policy: 'singleton' }])` in its `imports`. Each queue is created at bootstrap if missing, before any
   * loop starts, whether or not this app handles it (an API-only app declares the queues it sends to); its
   * handlers then need no queue options. A queue declared in several places must be declared alike.
   */
  static forFeature(queues: QueueFeatureEntry[]): DynamicModule {
    return queueFeature(queues);
  }

  private static build(
    imports: NonNullable<ModuleMetadata['imports']>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Nest's FactoryProvider types its factory so
    useFactory: (...args: any[]) => unknown,
    inject: (InjectionToken | OptionalFactoryDependency)[],
    extra: Provider[] = [],
  ): DynamicModule {
    return {
      module: QueueModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [...extra, { provide: QUEUE_CONFIG, useFactory, inject }, QueueService, QueueHandlerExplorer, QueueEventExplorer],
      exports: [QueueService],
    };
  }
}
