// @QueueHandler methods run inside Nest's pipeline as a controller's do: a global interceptor sees every job in a
// context of type 'pgqueue' and may change its output, and a method's guard refuses a job (the attempt fails).
import {
  Injectable,
  Module,
  UseGuards,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { map, type Observable } from 'rxjs';
import { QUEUE_CONTEXT_TYPE, QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_pipeline');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

type Data = { blocked?: boolean; fail?: boolean };
const seen: string[] = [];

/** As an app's logging interceptor: sees each job, and wraps what the method returns. */
@Injectable()
class Timing implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const job = context.getArgByIndex<Job<Data>>(0);
    seen.push(`${context.getType()} ${job.name} ${job.id}`);
    return next.handle().pipe(map((output: unknown) => ({ output, intercepted: true })));
  }
}

class NotBlocked implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return !context.getArgByIndex<Job<Data>>(0).data.blocked;
  }
}

@Injectable()
class Worker {
  @QueueHandler('pipe.work', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  @UseGuards(NotBlocked)
  run(job: Job<Data>) {
    if (job.data.fail) throw new Error('disk full');
    return { ran: job.id };
  }
}

describe('the Nest pipeline around @QueueHandler', () => {
  it('runs the global interceptor and the method’s guard around each job', async () => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      providers: [Worker, { provide: APP_INTERCEPTOR, useClass: Timing }],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      const queue = app.get(QueueService);
      const ok = (await queue.send('pipe.work', {}))!;
      const blocked = (await queue.send('pipe.work', { blocked: true }))!;
      const hard = (await queue.send('pipe.work', { fail: true }))!;
      const settled = async (id: string) => {
        const j = await queue.getJobById('pipe.work', id);
        return j && (j.state === 'completed' || j.state === 'failed') ? j : null;
      };
      const [a, b, d] = await Promise.all([ok, blocked, hard].map((id) => until(() => settled(id), `job ${id} settles`)));
      expect(a).toMatchObject({ state: 'completed', output: { output: { ran: ok }, intercepted: true } });
      expect(b!.state).toBe('failed');
      expect(b!.lastError).toMatchObject({ name: 'ForbiddenException', message: 'Forbidden resource' });
      expect(d!.state).toBe('failed');
      expect(d!.lastError).toMatchObject({ message: 'disk full' });
      // the guard refused the blocked job before the interceptor saw it
      expect(seen.sort()).toEqual([ok, hard].map((id) => `${QUEUE_CONTEXT_TYPE} pipe.work ${id}`).sort());
    } finally {
      await app.close();
    }
  });
});
