// QueueModule.forFeature: a feature module declares its queues' settings next to its handlers. The queues are
// made at bootstrap (also on an app that only sends), a handler then needs no queue options, and a queue declared
// alike in two places boots while one declared differently is refused naming both.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { defineJob, InvalidOptionError, QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_feature');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});
const quiet = { logger: false as const };
const root = (over: object = {}) => QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false, ...over });

const Invoice = defineJob<{ orderId: string }>('feature.invoice', { retryLimit: 4, deadLetter: 'feature.invoice.dlq' });

@Injectable()
class Billing {
  @QueueHandler(Invoice, { pollingIntervalSeconds: 0.1 })
  invoice(job: Job<{ orderId: string }>) {
    return { invoiced: job.data.orderId };
  }

  // no queue options here: the feature module gives them (policy singleton)
  @QueueHandler('feature.report', { pollingIntervalSeconds: 0.1 })
  report() {
    return 'reported';
  }
}

@Module({
  // the dead-letter queue is listed after the queue that names it: the queues are made in the order they need
  imports: [
    QueueModule.forFeature([
      Invoice,
      { name: 'feature.invoice.dlq', retentionSeconds: 3600 },
      { name: 'feature.report', policy: 'singleton' },
    ]),
  ],
  providers: [Billing],
})
class BillingModule {}

describe('QueueModule.forFeature', () => {
  it('makes the declared queues with their settings before the loops start, and the handler works its queue', async () => {
    @Module({ imports: [root(), BillingModule] })
    class App {}
    const app = await NestFactory.createApplicationContext(App, quiet);
    try {
      const queue = app.get(QueueService);
      expect(await queue.getQueue('feature.invoice')).toMatchObject({ retryLimit: 4, deadLetter: 'feature.invoice.dlq' });
      expect(await queue.getQueue('feature.invoice.dlq')).toMatchObject({ retentionSeconds: 3600 });
      expect(await queue.getQueue('feature.report')).toMatchObject({ policy: 'singleton' });
      const report = (await queue.send('feature.report', {}))!;
      await until(async () => (await queue.getJobById('feature.report', report))?.state === 'completed', 'the report job completes');
      const id = (await queue.send(Invoice, { orderId: 'o-1' }))!;
      const job = await until(async () => {
        const j = await queue.getJobById('feature.invoice', id);
        return j?.state === 'completed' ? j : null;
      }, 'the invoice job completes');
      expect(job.output).toEqual({ invoiced: 'o-1' });
    } finally {
      await app.close();
    }
  });

  it('makes the queues on an app that runs no workers, so that it can send to them', async () => {
    const other = uniqueSchema('e2e_feature_api');
    @Module({ imports: [QueueModule.forFeature([{ name: 'feature.api', retryLimit: 2 }])] })
    class SendingFeature {}
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema: other, workers: false }), SendingFeature] })
    class ApiOnly {}
    const app = await NestFactory.createApplicationContext(ApiOnly, quiet);
    try {
      const queue = app.get(QueueService);
      expect(await queue.send('feature.api', { a: 1 })).toEqual(expect.any(String));
      expect(await queue.getQueue('feature.api')).toMatchObject({ name: 'feature.api' });
    } finally {
      await app.close();
      await dropSchema(pool, other);
    }
  });

  it('boots with a queue declared alike in two places, and refuses one declared differently, naming both', async () => {
    @Module({ imports: [QueueModule.forFeature([{ name: 'feature.invoice', retryLimit: 4, deadLetter: 'feature.invoice.dlq' }])] })
    class Alike {}
    @Module({ imports: [root({ workers: false }), BillingModule, Alike] })
    class AlikeApp {}
    await (await NestFactory.createApplicationContext(AlikeApp, quiet)).close();

    @Injectable()
    class Reports {
      @QueueHandler('feature.other', { policy: 'stately' })
      report() {}
    }
    @Module({ imports: [QueueModule.forFeature([{ name: 'feature.other', policy: 'singleton' }])], providers: [Reports] })
    class Other {}
    @Module({ imports: [root({ workers: false }), Other] })
    class Differing {}
    const err = await NestFactory.createApplicationContext(Differing, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      /^invalid queue declarations: queue "feature\.other" is declared with different settings by QueueModule\.forFeature #\d+ \('feature\.other'\) and @QueueHandler\('feature\.other'\) on Reports\.report; declare a queue's settings in one place$/,
    );
  });

  it('refuses bad declarations when called, naming the entry and the field', () => {
    expect(() => QueueModule.forFeature([{ name: 'ok' }, { name: 'bad', retryLimit: -1 }])).toThrow(InvalidOptionError);
    expect(() => QueueModule.forFeature([{ name: 'ok' }, { name: 'bad', retryLimit: -1 }])).toThrow(
      /QueueModule\.forFeature queues\[1\]\.retryLimit/,
    );
    expect(() => QueueModule.forFeature([{ name: '' }])).toThrow(/QueueModule\.forFeature queues\[0\]\.name/);
    expect(() => QueueModule.forFeature([])).toThrow(/QueueModule\.forFeature queues/);
    expect(() => QueueModule.forFeature([{ name: 'x', concurrency: 2 } as never])).toThrow(/concurrency/);
  });
});
