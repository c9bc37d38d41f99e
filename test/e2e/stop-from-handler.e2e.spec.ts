// A @QueueHandler method that stops its own queue's loop through QueueService (offWork) completes its job promptly:
// the drain does not wait for the method, which waits for the drain. With and without an interceptor around it.
import { Injectable, Module, type CallHandler, type ExecutionContext, type NestInterceptor, type Provider } from '@nestjs/common';
import { APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { map, type Observable } from 'rxjs';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_stopself');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

@Injectable()
class Wrapping implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((output: unknown) => ({ output, intercepted: true })));
  }
}

@Injectable()
class Stopper {
  constructor(private readonly queue: QueueService) {}

  @QueueHandler('stopself', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  async run(job: Job<{ n: number }>) {
    await new Promise((r) => setImmediate(r));
    await this.queue.offWork('stopself');
    return { stopped: job.data.n };
  }
}

describe('a @QueueHandler method that calls offWork on its own queue', () => {
  it.each<[string, Provider[]]>([
    ['plain', []],
    ['inside a global interceptor', [{ provide: APP_INTERCEPTOR, useClass: Wrapping }]],
  ])('%s: its job completes well before the shutdown timeout, and no other job is claimed', async (_, extra) => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false, shutdownTimeoutMs: 30_000 })],
      providers: [Stopper, ...extra],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    const queue = app.get(QueueService);
    await queue.insert('stopself', [
      { data: { n: 1 }, priority: 10 },
      { data: { n: 2 }, priority: 0 },
    ]);
    await until(async () => (await stateCounts(pool, schema, 'stopself')).completed === 1, 'the stopper completed', 10_000);
    expect(await stateCounts(pool, schema, 'stopself')).toEqual({ completed: 1, created: 1 });
    await until(() => queue.workerCount === 0, 'the loop drained', 10_000);
    await pool.query(`DELETE FROM "${schema}".jobs WHERE queue = 'stopself'`);
    await app.close();
  });
});
