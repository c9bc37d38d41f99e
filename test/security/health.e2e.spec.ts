// Attacks on /health, which is often public (a load balancer's probe): a database that cannot be reached must not tell
// its address, port, user or database name through the health indicator (the driver's text did); and a queue named
// `__proto__` must not vanish from the report on its way through Terminus to the HTTP answer. Against the built
// package (`npm run build` first), as an app uses it.
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { QueueModule, QueueService, resolveConfig } from 'nestjs-pgqueue';
import { QueueHealthIndicator } from 'nestjs-pgqueue/terminus';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';
import { freePort } from '../helpers/embedded-postgres.js';

const schema = uniqueSchema('sechealth');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

describe('the health indicator with a database it cannot reach', () => {
  it('is down, saying the database cannot be reached and its code, and names no host, port, user or database', async () => {
    // a port nothing listens on: the connection is refused at once
    const port = await freePort();
    const url = `postgres://alice_private_user:hunter2@127.0.0.1:${port}/billing_private_db`;
    const queue = new QueueService(resolveConfig({ connectionString: url, schema, workers: false, supervise: false }));
    try {
      const indicator = new QueueHealthIndicator(new HealthIndicatorService(), queue);
      const result = await indicator.isHealthy('queue', { timeoutMs: 10_000 });
      expect(result).toEqual({
        queue: { status: 'down', reasons: ['the database cannot be reached (ECONNREFUSED)'], queues: {}, workers: [] },
      });
      const text = JSON.stringify(result);
      for (const secret of ['127.0.0.1', String(port), 'alice_private_user', 'hunter2', 'billing_private_db'])
        expect({ secret, shown: text.includes(secret) }).toEqual({ secret, shown: false });
    } finally {
      await queue.close();
    }
  });
});

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queue: QueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queue.isHealthy('queue')]);
  }
}

describe('/health through Terminus', () => {
  let app: INestApplication | undefined;
  afterAll(() => app?.close());

  it('answers with a queue named __proto__ among the queues', async () => {
    @Module({
      imports: [TerminusModule, QueueModule.forRoot({ connectionString: testUrl(), schema, workers: false, supervise: false })],
      controllers: [HealthController],
      providers: [QueueHealthIndicator],
    })
    class HealthApp {}
    app = await NestFactory.create(HealthApp, { logger: false });
    await app.listen(0, '127.0.0.1');
    const queue = app.get(QueueService);
    await queue.createQueue('__proto__');
    await queue.createQueue('plain');
    await queue.send('__proto__', { n: 1 });
    await queue.monitor({ force: true });

    const res = await fetch(`${await app.getUrl()}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; details: { queue: { queues: Record<string, { queued: number }> } } };
    expect(body.status).toBe('ok');
    const queues = body.details.queue.queues;
    expect(Object.keys(queues).sort()).toEqual(['__proto__', 'plain']);
    expect(Object.getOwnPropertyDescriptor(queues, '__proto__')?.value).toMatchObject({ queued: 1 });
  });
});
