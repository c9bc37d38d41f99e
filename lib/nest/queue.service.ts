import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { ResolvedConfig } from '../core/config/config.js';
import { PgQueue } from '../core/pg-queue.js';
import { QUEUE_CONFIG } from './queue.constants.js';

/**
 * The queue inside Nest: every method of the engine (send, fetch, queue management, job control),
 * tied to the application's lifecycle. Connects and migrates during module init; stops its loops
 * before shutdown (handlers drain or are handed back); closes its own pool last, so `send()` works
 * until then.
 */
@Injectable()
export class QueueService extends PgQueue implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(@Inject(QUEUE_CONFIG) config: ResolvedConfig) {
    super(config, new Logger('QueueService'));
  }

  async onModuleInit(): Promise<void> {
    await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stopWorkers();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
