import { Inject, Injectable, Module, Scope, type OnModuleDestroy, type BeforeApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import {
  QueueHandler,
  QueueModule,
  QueueService,
  QUEUE_CONFIG,
  type Job,
  type QueueOptionsFactory,
  type ResolvedConfig,
} from 'nestjs-pgqueue';
import { dropSchema, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_module');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const quiet = { logger: false as const };

describe('handler registration', () => {
  it('two handlers for one queue make bootstrap throw, naming both classes and methods', async () => {
    @Injectable()
    class First {
      @QueueHandler('dup')
      handle() {}
    }
    @Injectable()
    class Second {
      @QueueHandler('dup')
      process() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [First, Second] })
    class DupModule {}
    const err = await NestFactory.createApplicationContext(DupModule, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('First.handle');
    expect((err as Error).message).toContain('Second.process');
    expect((err as Error).message).toContain('queue "dup" has 2 handlers');
  });

  it('a handler on a request-scoped provider makes bootstrap throw, naming it', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @QueueHandler('scoped')
      handle() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [PerRequest] })
    class ScopedModule {}
    const err = await NestFactory.createApplicationContext(ScopedModule, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain('PerRequest.handle');
    expect((err as Error).message).toContain('request-scoped');
  });

  it('bad decorator options make bootstrap throw with the field and the handler', async () => {
    @Injectable()
    class BadOptions {
      @QueueHandler('bad-opts', { concurrency: 0 })
      handle() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [BadOptions] })
    class BadModule {}
    const err = await NestFactory.createApplicationContext(BadModule, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      "@QueueHandler('bad-opts') on BadOptions.handle.concurrency must be an integer from 1 to 10000, got 0",
    );
  });

  it('a localGroupConcurrency above the concurrency makes bootstrap throw with the field, the range and the value', async () => {
    @Injectable()
    class TooWide {
      @QueueHandler('bad-local-groups', { concurrency: 2, localGroupConcurrency: { pro: 3 } })
      handle() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [TooWide] })
    class TooWideModule {}
    const err = await NestFactory.createApplicationContext(TooWideModule, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      "@QueueHandler('bad-local-groups') on TooWide.handle.localGroupConcurrency.pro must be an integer from 1 to 2, got 3",
    );
  });

  it('a handler on a provider built by a factory is found too', async () => {
    const handled: string[] = [];
    class Built {
      @QueueHandler('from-factory', { pollingIntervalSeconds: 0.1 })
      handle(job: Job) {
        handled.push(job.id);
      }
    }
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })],
      providers: [{ provide: 'BUILT', useFactory: () => new Built() }],
    })
    class FactoryModule {}
    const app = await NestFactory.createApplicationContext(FactoryModule, quiet);
    const id = (await app.get(QueueService).send('from-factory', {}))!;
    await until(() => handled.includes(id), 'factory-built handler ran');
    await app.close();
  });

  it('loops start at application bootstrap, never during module init', async () => {
    const events: string[] = [];
    @Injectable()
    class Early {
      constructor(private readonly queue: QueueService) {}
      async onModuleInit() {
        await this.queue.createQueue('early');
        await this.queue.send('early', {});
        events.push(`init: loops=${this.queue.workerCount}`);
      }
      @QueueHandler('early', { pollingIntervalSeconds: 0.1 })
      handle() {
        events.push('handled');
      }
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [Early] })
    class EarlyModule {}
    const app = await NestFactory.createApplicationContext(EarlyModule, quiet);
    await until(() => events.includes('handled'), 'job handled after bootstrap');
    expect(events[0]).toBe('init: loops=0');
    await app.close();
  });

  it('a handler whose deadLetter another handler declares boots whatever the order of the two methods', async () => {
    @Injectable()
    class Payments {
      @QueueHandler('payments', { deadLetter: 'payments.dlq', retryLimit: 0 })
      charge() {}
      // declared below the queue that names it
      @QueueHandler('payments.dlq')
      review() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, workers: false })], providers: [Payments] })
    class PaymentsModule {}
    const app = await NestFactory.createApplicationContext(PaymentsModule, quiet);
    expect((await app.get(QueueService).getQueue('payments'))!.deadLetter).toBe('payments.dlq');
    await app.close();
  });

  it('a deadLetter that names a queue nobody declares or made stops bootstrap, naming the handler, the option and the value', async () => {
    @Injectable()
    class Refunds {
      @QueueHandler('refunds', { deadLetter: 'refunds.nowhere' })
      refund() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, workers: false })], providers: [Refunds] })
    class RefundsModule {}
    const err = await NestFactory.createApplicationContext(RefundsModule, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toBe(
      `@QueueHandler('refunds') on Refunds.refund: deadLetter "refunds.nowhere" names a queue that does not exist; declare it with a @QueueHandler or QueueModule.forFeature, or create it before the app starts`,
    );
  });
});

describe('module configuration', () => {
  it('forRootAsync resolves options from an injected provider, through the same resolver', async () => {
    const SETTINGS = Symbol('settings');
    @Module({ providers: [{ provide: SETTINGS, useValue: { url: testUrl(), timeout: 1234 } }], exports: [SETTINGS] })
    class SettingsModule {}
    @Module({
      imports: [
        QueueModule.forRootAsync({
          imports: [SettingsModule],
          inject: [SETTINGS],
          useFactory: async (s: { url: string; timeout: number }) => ({ connectionString: s.url, schema, shutdownTimeoutMs: s.timeout }),
        }),
      ],
    })
    class AsyncModule {}
    const app = await NestFactory.createApplicationContext(AsyncModule, quiet);
    const config = app.get<ResolvedConfig>(QUEUE_CONFIG);
    expect(config).toMatchObject({ schema, shutdownTimeoutMs: 1234, maxPayloadBytes: 1_048_576, workers: true });
    expect(Object.isFrozen(config)).toBe(true);
    await app.close();
  });

  it('forRootAsync takes useClass (made in the module, with its own injections) and useExisting (provided elsewhere)', async () => {
    const SETTINGS = Symbol('settings');
    @Module({ providers: [{ provide: SETTINGS, useValue: { timeout: 2345 } }], exports: [SETTINGS] })
    class SettingsModule {}
    @Injectable()
    class QueueConfig implements QueueOptionsFactory {
      constructor(@Inject(SETTINGS) private readonly settings: { timeout: number }) {}
      createQueueOptions() {
        return { connectionString: testUrl(), schema, shutdownTimeoutMs: this.settings.timeout };
      }
    }
    @Module({ imports: [QueueModule.forRootAsync({ imports: [SettingsModule], useClass: QueueConfig })] })
    class ByClass {}
    const byClass = await NestFactory.createApplicationContext(ByClass, quiet);
    expect(byClass.get<ResolvedConfig>(QUEUE_CONFIG)).toMatchObject({ schema, shutdownTimeoutMs: 2345 });
    await byClass.close();

    @Module({ imports: [SettingsModule], providers: [QueueConfig], exports: [QueueConfig] })
    class ConfigModule {}
    @Module({ imports: [QueueModule.forRootAsync({ imports: [ConfigModule], useExisting: QueueConfig })] })
    class ByExisting {}
    const byExisting = await NestFactory.createApplicationContext(ByExisting, quiet);
    expect(byExisting.get<ResolvedConfig>(QUEUE_CONFIG)).toMatchObject({ schema, shutdownTimeoutMs: 2345 });
    await byExisting.close();

    expect(() => QueueModule.forRootAsync({})).toThrow('options must be exactly one of useFactory, useClass and useExisting');
    expect(() => QueueModule.forRootAsync({ useClass: QueueConfig, useExisting: QueueConfig })).toThrow(/exactly one/);
    // nothing is accepted and ignored: a misspelt key, or inject where no factory takes it
    expect(() => QueueModule.forRootAsync({ useFactory: () => ({}), injects: [] } as never)).toThrow(
      /^injects must be absent: QueueModule.forRootAsync takes imports, useFactory, inject, useClass, useExisting/,
    );
    expect(() => QueueModule.forRootAsync({ useClass: QueueConfig, inject: ['X'] })).toThrow(
      /^options.inject must be absent beside useClass/,
    );
  });

  it('forRootAsync with a bad option fails at boot, naming the field', async () => {
    @Module({ imports: [QueueModule.forRootAsync({ useFactory: () => ({ connectionString: testUrl(), poolSize: 0 }) })] })
    class BadAsync {}
    const err = await NestFactory.createApplicationContext(BadAsync, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain('poolSize must be an integer from 1 to 1000, got 0');
  });

  it('workers: false sends but never claims', async () => {
    @Injectable()
    class Worker {
      @QueueHandler('api-only')
      handle() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, workers: false })], providers: [Worker] })
    class ApiModule {}
    const app = await NestFactory.createApplicationContext(ApiModule, quiet);
    const queue = app.get(QueueService);
    expect(await queue.getQueue('api-only')).not.toBeNull();
    const id = (await queue.send('api-only', { from: 'api node' }))!;
    expect(queue.workerCount).toBe(0);
    expect((await queue.getJobById('api-only', id))!.state).toBe('created');
    await app.close();
  });

  it('a pool it was handed is never closed; a Drizzle db works the same', async () => {
    const handed = new pg.Pool({ connectionString: testUrl(), max: 3 });
    @Module({ imports: [QueueModule.forRoot({ pool: handed, schema })] })
    class PoolModule {}
    const app = await NestFactory.createApplicationContext(PoolModule, quiet);
    await app.get(QueueService).createQueue('handed');
    await app.close();
    expect((await handed.query('SELECT 1 AS ok')).rows[0].ok).toBe(1);

    @Module({ imports: [QueueModule.forRoot({ db: drizzle(handed), schema })] })
    class DrizzleModule {}
    const app2 = await NestFactory.createApplicationContext(DrizzleModule, quiet);
    expect(await app2.get(QueueService).send('handed', { via: 'drizzle' })).toMatch(/^\d+$/);
    await app2.close();
    expect((await handed.query('SELECT 1 AS ok')).rows[0].ok).toBe(1);
    await handed.end();
  });

  it("send() works in other providers' shutdown hooks, until the queue module's own hook runs", async () => {
    const sent: (string | null)[] = [];
    @Injectable()
    class Farewell implements OnModuleDestroy, BeforeApplicationShutdown {
      constructor(@Inject(QueueService) private readonly queue: QueueService) {}
      async onModuleInit() {
        await this.queue.createQueue('farewell');
      }
      async onModuleDestroy() {
        sent.push(await this.queue.send('farewell', { hook: 'onModuleDestroy' }));
      }
      async beforeApplicationShutdown() {
        sent.push(await this.queue.send('farewell', { hook: 'beforeApplicationShutdown' }));
      }
    }
    @Module({ providers: [Farewell] })
    class FeatureModule {}
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema }), FeatureModule] })
    class RootModule {}
    const app = await NestFactory.createApplicationContext(RootModule, quiet);
    await app.close();
    expect(sent).toHaveLength(2);
    expect(sent.every((id) => typeof id === 'string')).toBe(true);
    expect((await stateCounts(pool, schema, 'farewell')).created).toBe(2);
  });
});
