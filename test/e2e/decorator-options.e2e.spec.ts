// The decorators' options in a Nest app: a @QueueHandler or @OnQueueEvent option the package does not take (pg-boss's
// names among them) stops the bootstrap with an InvalidOptionError naming the method and the field, before any queue
// is made.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InvalidOptionError, OnQueueEvent, PgQueue, QueueHandler, QueueModule, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

const schema = uniqueSchema('e2e_decopts');
const pool = testPool(2);
beforeAll(async () => {
  // the tables exist before any app boots: a count of queues reads 0, not a missing table
  const q = new PgQueue({ connectionString: testUrl(), schema, supervise: false, poolSize: 1 });
  await q.start();
  await q.close();
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

async function bootError(providers: (new (...args: never[]) => unknown)[]): Promise<unknown> {
  @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })], providers })
  class App {}
  const app = await NestFactory.createApplicationContext(App, { logger: false, abortOnError: false }).catch((e: unknown) => e);
  if (!(app instanceof Error)) {
    await (app as { close(): Promise<void> }).close();
    throw new Error('the app booted');
  }
  return app;
}

const queues = async () => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".queues`)).rows[0]!.n;

describe('@QueueHandler options', () => {
  it("refuses pg-boss's localConcurrency, saying it is concurrency here, and makes no queue", async () => {
    @Injectable()
    class Mail {
      @QueueHandler('deco.mail', { retryLimit: 1, localConcurrency: 4 } as never)
      handle(_job: Job) {}
    }
    const err = await bootError([Mail]);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err).toMatchObject({ field: "@QueueHandler('deco.mail') on Mail.handle.localConcurrency", value: 4 });
    expect((err as Error).message).toContain("pg-boss 12's localConcurrency is concurrency here");
    expect(await queues()).toBe(0);
  });

  it('refuses an unknown key of its schedule, naming it', async () => {
    @Injectable()
    class Report {
      @QueueHandler('deco.report', { schedule: { cron: '0 * * * *', every: 5 } as never })
      handle() {}
    }
    const err = await bootError([Report]);
    expect(err).toMatchObject({ field: "@QueueHandler('deco.report') on Report.handle.schedule.every" });
    expect(await queues()).toBe(0);
  });
});

describe('@OnQueueEvent options', () => {
  it.each([
    [
      'an unknown option',
      'completed',
      { queues: 'deco.audit' },
      "@OnQueueEvent('completed') on Audit.onEvent options.queues",
      'did you mean queue?',
    ],
    [
      'a queue that is no name',
      'failed',
      { queue: 5 },
      "@OnQueueEvent('failed') on Audit.onEvent options.queue",
      'a queue name or a job of defineJob()',
    ],
    ['an unknown event', 'finished', {}, "@OnQueueEvent('finished') on Audit.onEvent event", 'one of completed, failed, retrying, expired'],
  ])('refuses %s at bootstrap, naming the method, before its class’s queue is made', async (_what, event, options, field, says) => {
    @Injectable()
    class Audit {
      @QueueHandler('deco.audit')
      handle() {}

      @OnQueueEvent(event as never, options as never)
      onEvent() {}
    }
    const err = await bootError([Audit]);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err).toMatchObject({ field });
    expect((err as Error).message).toContain(says);
    expect(await queues()).toBe(0);
  });
});
