// Compiled by the test command's typecheck (tsconfig.json includes test/), never run: a job declared once with
// defineJob() types its payload wherever it names the queue. Each @ts-expect-error fails the typecheck if the line
// compiles.
import { defineJob } from '../../lib/core/job-definition.js';
import type { PgQueue } from '../../lib/core/pg-queue.js';
import type { BatchJob, Job } from '../../lib/core/types.js';
import { OnQueueEvent } from '../../lib/nest/decorators/on-queue-event.decorator.js';
import { QueueHandler } from '../../lib/nest/decorators/queue-handler.decorator.js';
declare const q: PgQueue;

const WelcomeEmail = defineJob<{ userId: string }>('welcome-email', { retryLimit: 5 });
void q.send(WelcomeEmail, { userId: 'u1' });
void q.enqueue(WelcomeEmail, { userId: 'u1' }, { priority: 1 });
void q.sendAfter(WelcomeEmail, { userId: 'u1' }, null, 60);
void q.sendThrottled(WelcomeEmail, { userId: 'u1' }, null, 60);
void q.insert(WelcomeEmail, [{ data: { userId: 'u1' } }, { data: { userId: 'u2' }, priority: 2 }]);
void q.work(WelcomeEmail, {}, (job) => job.data.userId.toUpperCase());
void q.work(WelcomeEmail, { batch: true }, (jobs) => jobs.map((j) => j.data.userId));
// @ts-expect-error the payload's field has the wrong type
void q.send(WelcomeEmail, { userId: 42 });
// @ts-expect-error a field the payload lacks
void q.send(WelcomeEmail, { user: 'u1' });
// @ts-expect-error enqueue is checked the same way
void q.enqueue(WelcomeEmail, {});
// @ts-expect-error and insert, job by job
void q.insert(WelcomeEmail, [{ data: { userId: 1 } }]);
// @ts-expect-error a declared job's payload must be given
void q.send(WelcomeEmail);
// @ts-expect-error enqueue too
void q.enqueue(WelcomeEmail);
// a queue named by a string, or a job declared without a type, may be sent without one
void q.send('plain-queue');
void q.enqueue(defineJob('untyped'));
void q.send(defineJob<{ note?: string } | undefined>('maybe'));
void q.send<{ a: number }>('typed-by-name');
export const sendFor = <T>(name: string, data?: T) => q.send<T>(name, data);
// @ts-expect-error a handler that expects another payload
void q.work(WelcomeEmail, {}, (job: Job<{ userId: number }>) => job.data.userId);

// a schema's parse gives the type (zod's have this shape)
const Invoice = defineJob('invoice', { schema: { parse: (d: unknown) => d as { amount: number } } });
void q.send(Invoice, { amount: 3 });
// @ts-expect-error the schema's type refuses a string amount
void q.send(Invoice, { amount: '3' });

// a plain name takes any payload, as before
void q.send('anything', { whatever: true });
void q.send<{ n: number }>('typed-by-hand', { n: 1 });

export class Handlers {
  @QueueHandler(WelcomeEmail)
  welcome(job: Job<{ userId: string }>): string {
    return job.data.userId;
  }

  @QueueHandler(WelcomeEmail, { batch: true })
  welcomeAll(jobs: BatchJob<{ userId: string }>[]): number {
    return jobs.length;
  }

  // @ts-expect-error the method must take the declared job's payload
  @QueueHandler(WelcomeEmail)
  wrong(job: Job<{ userId: number }>): number {
    return job.data.userId;
  }

  @QueueHandler('plain')
  plain(job: Job<{ html: string }>): string {
    return job.data.html;
  }
}

export class Listeners {
  @OnQueueEvent('failed', { queue: WelcomeEmail })
  onFailed(e: { queue: string; id: string; willRetry: boolean }): void {
    void e;
  }

  // @ts-expect-error a completed event has no willRetry
  @OnQueueEvent('completed', { queue: 'a' })
  onCompleted(e: { willRetry: boolean }): void {
    void e;
  }
}
