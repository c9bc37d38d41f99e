// Exception filters bound to a @QueueHandler method or its class run around each job: a filter that returns a value
// completes the job with it, one that throws fails the attempt with what it threw, one that returns nothing leaves
// the error as it was. The app's global filters (written for HTTP) stay off jobs, and nothing logs a failure twice.
import { Catch, Injectable, Module, Scope, UseFilters, type ArgumentsHost, type ExceptionFilter, type LoggerService } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { of, throwError, type Observable } from 'rxjs';
import { QUEUE_CONTEXT_TYPE, QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { deferred, dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_filters');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

class Declined extends Error {
  override name = 'Declined';
}
class Gone extends Error {
  override name = 'Gone';
}
type Data = { throw: 'declined' | 'gone' | 'plain' | 'observable-ok' | 'observable-error' };

const hosts: string[] = [];

/** Method-bound: answers a declined payment with an output, so the job completes. */
@Catch(Declined)
class DeclinedFilter implements ExceptionFilter {
  catch(err: Declined, host: ArgumentsHost) {
    hosts.push(`${host.getType()} ${host.getArgByIndex<Job>(0).id}`);
    return { declined: err.message };
  }
}

/** Class-bound and injectable (Nest makes it): maps Gone to an error of its own, and leaves the rest alone. */
@Injectable()
@Catch()
class MappingFilter implements ExceptionFilter {
  catch(err: Error, host: ArgumentsHost): unknown {
    const job = host.getArgByIndex<Job<Data>>(0);
    if (job.data.throw === 'observable-ok') return of({ recovered: job.id });
    if (job.data.throw === 'observable-error') return throwError(() => new Error(`observed: ${err.message}`));
    if (err instanceof Gone) throw new Error(`mapped: ${err.message}`);
    return undefined;
  }
}

/** As an app's global HTTP filter: it reaches for the response, which a job does not have. */
@Catch()
class HttpEverything implements ExceptionFilter {
  catch(_err: unknown, host: ArgumentsHost) {
    host.switchToHttp().getResponse<{ status(code: number): unknown }>().status(500);
  }
}

@Injectable()
@UseFilters(MappingFilter)
class Payments {
  @QueueHandler('filters.pay', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  @UseFilters(DeclinedFilter)
  pay(job: Job<Data>) {
    if (job.data.throw === 'declined') throw new Declined('card declined');
    if (job.data.throw === 'gone') throw new Gone('account closed');
    throw new Error(`plain ${job.data.throw}`);
  }
}

/** Keeps what Nest's loggers say, to show that no failure is logged by a filter layer. */
class Recording implements LoggerService {
  readonly lines: string[] = [];
  log() {}
  warn() {}
  error(message: unknown, ...rest: unknown[]) {
    this.lines.push([message, ...rest].map(String).join(' '));
  }
}

describe('exception filters around @QueueHandler', () => {
  it('runs the bound filters (method first), and neither the global filter nor a second log', async () => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      providers: [Payments, { provide: APP_FILTER, useClass: HttpEverything }],
    })
    class App {}
    const logger = new Recording();
    const app = await NestFactory.createApplicationContext(App, { logger });
    try {
      const queue = app.get(QueueService);
      const kinds = ['declined', 'gone', 'plain', 'observable-ok', 'observable-error'] as const;
      const ids = await Promise.all(kinds.map(async (k) => (await queue.send('filters.pay', { throw: k }))!));
      const settled = async (id: string) => {
        const j = await queue.getJobById('filters.pay', id);
        return j && (j.state === 'completed' || j.state === 'failed') ? j : null;
      };
      const [declined, gone, plain, obsOk, obsErr] = await Promise.all(ids.map((id) => until(() => settled(id), `job ${id} settles`)));
      expect(declined).toMatchObject({ state: 'completed', output: { declined: 'card declined' } });
      expect(gone).toMatchObject({ state: 'failed', lastError: { message: 'mapped: account closed' } });
      // the class filter returned nothing, and the global HTTP filter never ran (it would have thrown a TypeError)
      expect(plain).toMatchObject({ state: 'failed', lastError: { message: 'plain plain' } });
      expect(obsOk).toMatchObject({ state: 'completed', output: { recovered: ids[3] } });
      expect(obsErr).toMatchObject({ state: 'failed', lastError: { message: 'observed: plain observable-error' } });
      expect(hosts).toEqual([`${QUEUE_CONTEXT_TYPE} ${ids[0]}`]);
      // each failure is reported once, by the queue; Nest's filter layer ('ExceptionsHandler') would log it again
      for (const message of ['plain plain', 'mapped: account closed', 'observed: plain observable-error'])
        expect(logger.lines.filter((l) => l.includes(message))).toHaveLength(1);
      expect(logger.lines.filter((l) => l.includes('ExceptionsHandler'))).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('refuses at boot a filter class Nest did not make for a handler provided by useFactory', async () => {
    class Made {
      @QueueHandler('filters.factory')
      @UseFilters(DeclinedFilter)
      run() {}
    }
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      providers: [{ provide: 'MADE', useFactory: () => new Made() }],
    })
    class App {}
    await expect(NestFactory.createApplicationContext(App, { logger: false, abortOnError: false })).rejects.toThrow(
      /Made\.run binds the exception filter DeclinedFilter.*@UseFilters\(new DeclinedFilter\(\)\)/,
    );
  });

  it('runs a filter bound as an instance on a useFactory provider', async () => {
    class Made {
      @QueueHandler('filters.instance', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
      @UseFilters(new DeclinedFilter())
      run(): Observable<never> {
        throw new Declined('by factory');
      }
    }
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      providers: [{ provide: 'MADE', useFactory: () => new Made() }],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      const queue = app.get(QueueService);
      const id = (await queue.send('filters.instance', {}))!;
      const job = await until(async () => {
        const j = await queue.getJobById('filters.instance', id);
        return j?.state === 'completed' ? j : null;
      }, 'the filtered job completes');
      expect(job.output).toEqual({ declined: 'by factory' });
    } finally {
      await app.close();
    }
  });
  it('does not let a filter complete a job that shutdown stopped halfway: it goes back to the queue', async () => {
    const started = deferred();
    @Catch()
    class Answering implements ExceptionFilter {
      catch() {
        return { answered: true };
      }
    }
    @Injectable()
    class Slow {
      @QueueHandler('filters.slow', { pollingIntervalSeconds: 0.1 })
      @UseFilters(new Answering())
      async run(job: Job) {
        started.resolve();
        // gives up when asked to stop, as a handler should
        await new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
      }
    }
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false, shutdownTimeoutMs: 200 })],
      providers: [Slow],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    const queue = app.get(QueueService);
    const id = (await queue.send('filters.slow', {}))!;
    await started.promise;
    await app.close();
    const { rows } = await pool.query<{ state: string; output: unknown }>(
      `SELECT state::text, output FROM "${schema}".jobs WHERE id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({ state: 'created', output: null });
  });

  it('refuses at boot a transient filter class, which has no instance for a job', async () => {
    @Injectable({ scope: Scope.TRANSIENT })
    @Catch()
    class PerUse implements ExceptionFilter {
      catch() {
        return 'never';
      }
    }
    @Injectable()
    class Uses {
      @QueueHandler('filters.scoped')
      @UseFilters(PerUse)
      run() {}
    }
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      providers: [Uses],
    })
    class App {}
    await expect(NestFactory.createApplicationContext(App, { logger: false, abortOnError: false })).rejects.toThrow(
      /Uses\.run binds the exception filter PerUse/,
    );
  });
});
