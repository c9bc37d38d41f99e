import { Module, type DynamicModule, type InjectionToken, type ModuleMetadata, type OptionalFactoryDependency } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { resolveConfig, type QueueModuleOptions } from '../core/config.js';
import { QUEUE_CONFIG } from './queue.constants.js';
import { QueueHandlerExplorer } from './queue-handler.explorer.js';
import { QueueService } from './queue.service.js';

/** Options of `QueueModule.forRootAsync`. */
export interface QueueModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  // any[], as Nest's own factories: a user's factory with typed parameters must be accepted.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory: (...args: any[]) => QueueModuleOptions | Promise<QueueModuleOptions>;
  inject?: (InjectionToken | OptionalFactoryDependency)[];
}

/** Provides `QueueService` to the whole application and runs the `@QueueHandler` loops. */
@Module({})
export class QueueModule {
  static forRoot(options: QueueModuleOptions): DynamicModule {
    return QueueModule.build([], () => resolveConfig(options), []);
  }

  static forRootAsync(options: QueueModuleAsyncOptions): DynamicModule {
    return QueueModule.build(
      options.imports ?? [],
      async (...args: unknown[]) => resolveConfig(await options.useFactory(...args)),
      options.inject ?? [],
    );
  }

  private static build(
    imports: NonNullable<ModuleMetadata['imports']>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Nest's FactoryProvider types its factory so
    useFactory: (...args: any[]) => unknown,
    inject: (InjectionToken | OptionalFactoryDependency)[],
  ): DynamicModule {
    return {
      module: QueueModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [{ provide: QUEUE_CONFIG, useFactory, inject }, QueueService, QueueHandlerExplorer],
      exports: [QueueService],
    };
  }
}
