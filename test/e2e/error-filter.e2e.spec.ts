// QueueErrorFilter in a user's app, on Express and on Fastify: the engine's typed errors thrown in a controller
// become their HTTP answers, and any other exception is answered as Nest would have.
import { Body, Controller, Get, Module, Post, type INestApplication } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { QueueErrorFilter, QueueModule, QueueService } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

const schema = uniqueSchema('e2e_filter');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

@Controller('orders')
class OrdersController {
  constructor(private readonly queue: QueueService) {}

  @Post()
  async create(@Body() body: { priority?: unknown; queue?: string }): Promise<{ id: string | null }> {
    return { id: await this.queue.send(body.queue ?? 'orders', { at: 1 }, { priority: body.priority as number }) };
  }

  @Get('driver')
  driver(): never {
    // a driver error of the app's own connections: not the queue's to answer
    throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:6379'), { code: 'ECONNREFUSED' });
  }

  @Get('bug')
  bug(): never {
    throw new TypeError('a bug of the app');
  }
}

describe.each(['express', 'fastify'] as const)('QueueErrorFilter on %s', (platform) => {
  let app: INestApplication;
  let url: string;
  beforeAll(async () => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      controllers: [OrdersController],
      providers: [{ provide: APP_FILTER, useClass: QueueErrorFilter }],
    })
    class App {}
    app =
      platform === 'fastify'
        ? await NestFactory.create(App, new FastifyAdapter(), { logger: false })
        : await NestFactory.create(App, { logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    await app.get(QueueService).createQueue('orders');
  });
  afterAll(() => app.close());

  const post = async (body: unknown) => {
    const res = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('answers a bad option 400 naming the field, an unknown queue 404, and leaves other errors to Nest (500)', async () => {
    expect((await post({})).status).toBe(201);
    expect(await post({ priority: 'high' })).toMatchObject({ status: 400, body: { code: 'INVALID_OPTION', field: 'options.priority' } });
    expect(await post({ queue: 'nope' })).toMatchObject({ status: 404, body: { code: 'QUEUE_NOT_FOUND' } });
    expect((await fetch(`${url}/orders/driver`)).status).toBe(500);
    const bug = await fetch(`${url}/orders/bug`);
    expect(bug.status).toBe(500);
    expect(await bug.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
  });
});
