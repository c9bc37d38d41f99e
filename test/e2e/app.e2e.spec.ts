import { Body, Controller, Injectable, Module, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_app');
const pool = testPool();

@Injectable()
class InvoiceHandlers {
  @QueueHandler('invoices', { concurrency: 8, retryLimit: 3 })
  async render(job: Job<{ n: number }>) {
    await pool.query(`INSERT INTO "${schema}".handled (job_id, queue) VALUES ($1, 'invoices')`, [job.id]);
    return { rendered: job.data.n };
  }
}

@Injectable()
class MailHandlers {
  @QueueHandler('mails', { concurrency: 4, batchSize: 8, retryLimit: 3 })
  async deliver(job: Job<{ n: number }>) {
    await pool.query(`INSERT INTO "${schema}".handled (job_id, queue) VALUES ($1, 'mails')`, [job.id]);
  }
}

@Controller('jobs')
class JobsController {
  constructor(private readonly queue: QueueService) {}

  @Post()
  async create(@Body() body: { queue: string; n: number }) {
    return { id: await this.queue.send(body.queue, { n: body.n }) };
  }
}

@Module({
  imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, poolSize: 6 })],
  providers: [InvoiceHandlers, MailHandlers],
  controllers: [JobsController],
})
class AppModule {}

let app: INestApplication;
let base: string;

beforeAll(async () => {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(`CREATE TABLE "${schema}".handled (job_id bigint UNIQUE NOT NULL, queue text NOT NULL)`);
  app = await NestFactory.create(AppModule, { logger: ['error'] });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
});

afterAll(async () => {
  await app?.close();
  await dropSchema(pool, schema);
  await pool.end();
});

describe('a Nest app with two @QueueHandler providers', () => {
  it('creates the handlers’ queues with the decorator options', async () => {
    const queue = app.get(QueueService);
    expect(await queue.getQueue('invoices')).toMatchObject({ retryLimit: 3 });
    expect(await queue.getQueue('mails')).toMatchObject({ retryLimit: 3 });
  });

  it('runs 1,000 jobs sent through a controller, each exactly once', async () => {
    const ids: string[] = [];
    for (let start = 0; start < 1000; start += 25) {
      const batch = await Promise.all(
        Array.from({ length: 25 }, async (_, i) => {
          const n = start + i;
          const res = await fetch(`${base}/jobs`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ queue: n % 2 ? 'mails' : 'invoices', n }),
          });
          expect(res.status).toBe(201);
          return ((await res.json()) as { id: string }).id;
        }),
      );
      ids.push(...batch);
    }
    expect(new Set(ids).size).toBe(1000);
    await until(async () => (await stateCounts(pool, schema)).completed === 1000, '1,000 jobs completed', 60_000, 50);

    const { rows } = await pool.query(`SELECT count(*)::int AS n, count(DISTINCT job_id)::int AS d FROM "${schema}".handled`);
    expect(rows[0]).toEqual({ n: 1000, d: 1000 });
    const { rows: ran } = await pool.query(`SELECT job_id::text FROM "${schema}".handled`);
    expect(ran.map((r) => r.job_id).sort()).toEqual([...ids].sort());
    const { rows: retried } = await pool.query(
      `SELECT count(*)::int AS n FROM "${schema}".jobs WHERE retry_count > 0 OR output ? 'errors'`,
    );
    expect(retried[0].n).toBe(0);
    const invoice = await app.get(QueueService).getJobById('invoices', ids[0]!);
    expect(invoice!.output).toEqual({ rendered: 0 });
  });
});
