// @OnQueueEvent in a Nest app: a handler's class hears the lifecycle events of its own queue, another provider those
// of the queue it names, a listener that throws is logged and changes nothing, and a listener with no queue to hear
// is refused at boot, naming it.
import { Injectable, Module, Scope } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OnQueueEvent, QueueHandler, QueueModule, QueueService, type Job, type JobEvent } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_events');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const heard: string[] = [];

@Injectable()
class Mailer {
  @QueueHandler('ev.mail', { retryLimit: 1, retryDelay: 0, pollingIntervalSeconds: 0.1 })
  send(job: Job<{ fail: boolean }>) {
    if (job.data.fail) throw new Error('smtp down');
  }

  @OnQueueEvent('completed')
  onCompleted(e: JobEvent) {
    heard.push(`completed ${e.queue} ${e.id}`);
  }

  @OnQueueEvent('retrying')
  onRetrying(e: JobEvent & { retryInSeconds: number | null }) {
    heard.push(`retrying ${e.queue} ${e.id}`);
  }

  @OnQueueEvent('failed')
  async onFailed(e: JobEvent & { willRetry: boolean }) {
    heard.push(`failed ${e.queue} ${e.id} ${e.willRetry ? 'will retry' : 'for good'}`);
    // a listener that rejects is logged; the job's outcome stands
    throw new Error('the alerting service is down');
  }
}

@Injectable()
class Audit {
  @QueueHandler('ev.other', { pollingIntervalSeconds: 0.1 })
  other() {}

  @OnQueueEvent('completed', { queue: 'ev.mail' })
  mailDone(e: JobEvent) {
    heard.push(`audit ${e.queue} ${e.id}`);
  }
}

describe('@OnQueueEvent', () => {
  it('hears the events of its class’s queue, or of the queue it names, and only those', async () => {
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })], providers: [Mailer, Audit] })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      const queue = app.get(QueueService);
      const ok = (await queue.send('ev.mail', { fail: false }))!;
      const bad = (await queue.send('ev.mail', { fail: true }))!;
      const other = (await queue.send('ev.other', {}))!;
      await until(() => heard.includes(`failed ev.mail ${bad} for good`), 'the bad job fails for good');
      await until(() => heard.includes(`audit ev.mail ${ok}`), 'the audit hears the good job');
      await until(async () => (await queue.getJobById('ev.other', other))?.state === 'completed', 'the other job completes');
      expect(heard).toEqual(
        expect.arrayContaining([
          `completed ev.mail ${ok}`,
          `failed ev.mail ${bad} will retry`,
          `retrying ev.mail ${bad}`,
          `failed ev.mail ${bad} for good`,
        ]),
      );
      // ev.other is not Mailer's queue, and Audit listens to ev.mail only
      expect(heard.filter((h) => h.includes('ev.other'))).toEqual([]);
      expect((await queue.getJobById('ev.mail', ok))!.state).toBe('completed');
    } finally {
      await app.close();
    }
  });

  it('refuses a listener on a request-scoped provider, naming it', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @OnQueueEvent('completed', { queue: 'ev.mail' })
      onCompleted() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })], providers: [PerRequest] })
    class App {}
    const err = await NestFactory.createApplicationContext(App, { logger: false, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      "@OnQueueEvent('completed') on PerRequest.onCompleted: its provider is request-scoped or transient",
    );
  });

  it('refuses a listener with no queue to hear, naming it', async () => {
    @Injectable()
    class Lost {
      @OnQueueEvent('failed')
      onFailed() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })], providers: [Lost] })
    class App {}
    const err = await NestFactory.createApplicationContext(App, { logger: false, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toContain("@OnQueueEvent('failed') on Lost.onFailed names no queue and its class has no @QueueHandler");
  });
});
