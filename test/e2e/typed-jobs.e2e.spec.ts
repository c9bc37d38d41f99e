// A job declared once in a Nest app, as the package is imported by its users: @QueueHandler(Invoice) creates the
// queue with the declaration's options, its method gets payloads as the schema returns them, a payload the schema
// refuses fails for good, and QueueService.send(Invoice, …) refuses what the schema refuses.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { defineJob, InvalidPayloadError, QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_typed');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const Invoice = defineJob('typed.invoice', {
  retryLimit: 4,
  schema: {
    parse(d: unknown): { amount: number } {
      const amount = (d as { amount?: unknown } | null)?.amount;
      if (typeof amount !== 'number' || amount <= 0) throw new Error('amount: expected a positive number');
      return { amount };
    },
  },
});

const handled: unknown[] = [];

@Injectable()
class Billing {
  @QueueHandler(Invoice, { pollingIntervalSeconds: 0.1 })
  charge(job: Job<{ amount: number }>) {
    handled.push(job.data);
    return { charged: job.data.amount };
  }
}

describe('@QueueHandler(defineJob(…))', () => {
  it('creates the queue with the declared options, and checks payloads at the send and before the method', async () => {
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })], providers: [Billing] })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      const queue = app.get(QueueService);
      expect((await queue.getQueue(Invoice.name))!.retryLimit).toBe(4);
      await expect(queue.send(Invoice, { amount: -1 })).rejects.toBeInstanceOf(InvalidPayloadError);
      const good = (await queue.send(Invoice, { amount: 12, note: 'dropped' } as { amount: number }))!;
      const bad = (await queue.send(Invoice.name, { amount: 'twelve' }))!;
      await until(async () => (await queue.getJobById(Invoice.name, good))?.state === 'completed', 'the good invoice is charged');
      const failed = await until(async () => {
        const j = await queue.getJobById(Invoice.name, bad);
        return j?.state === 'failed' ? j : null;
      }, 'the bad invoice fails');
      expect(failed.retryCount).toBe(0);
      expect(handled).toEqual([{ amount: 12 }]);
    } finally {
      await app.close();
    }
  });
});
