// Pipes around @QueueHandler parameters, as around a controller's @Body(): @JobPayload() gives the payload (or a field
// of it) through the pipes given to it and the app's global ones, with the parameter's type as the metatype;
// @CurrentJob() gives the job. A pipe that throws fails the attempt. HTTP parameter decorators, and a method that
// leaves a parameter undecorated beside decorated ones, are refused at boot.
import { Body, Injectable, Module, ParseIntPipe, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { APP_PIPE, NestFactory } from '@nestjs/core';
import { CurrentJob, JobPayload, QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_pipes');
const pool = testPool(2);
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

/** The DTO a global pipe checks, as a ValidationPipe would with class-validator. */
class SignupDto {
  email!: string;
}

const seen: string[] = [];

/** As an app's global ValidationPipe: it sees each decorated parameter, with its metatype, and may refuse it. */
@Injectable()
class CheckDtos implements PipeTransform {
  transform(value: unknown, meta: ArgumentMetadata) {
    seen.push(`${meta.type} ${meta.metatype?.name ?? '?'}`);
    if (meta.metatype === SignupDto && !/@/.test((value as SignupDto).email)) throw new Error('email must contain @');
    return value;
  }
}

@Injectable()
class Handlers {
  @QueueHandler('pipes.signup', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  signup(@JobPayload() dto: SignupDto, @CurrentJob() job: Job) {
    return { email: dto.email, job: job.id };
  }

  @QueueHandler('pipes.count', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  count(@JobPayload('n', ParseIntPipe) n: number) {
    return { doubled: n * 2 };
  }

  // no decorated parameter: the job comes as it is
  @QueueHandler('pipes.plain', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  plain(job: Job<{ x: number }>) {
    return { x: job.data.x };
  }
}

const settled = async (queue: QueueService, name: string, id: string) => {
  const j = await queue.getJobById(name, id);
  return j && (j.state === 'completed' || j.state === 'failed') ? j : null;
};

describe('pipes around @QueueHandler parameters', () => {
  it('runs the global pipe and the parameter’s own on @JobPayload(), and a refusal fails the attempt', async () => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false, logJobFailures: false })],
      providers: [Handlers, { provide: APP_PIPE, useClass: CheckDtos }],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      const queue = app.get(QueueService);
      const good = (await queue.send('pipes.signup', { email: 'ada@example.com' }))!;
      const bad = (await queue.send('pipes.signup', { email: 'nobody' }))!;
      const num = (await queue.send('pipes.count', { n: '21' }))!;
      const nan = (await queue.send('pipes.count', { n: 'many' }))!;
      const plain = (await queue.send('pipes.plain', { x: 1 }))!;
      const wait = (name: string, id: string) => until(() => settled(queue, name, id), `job ${id} settles`);
      expect(await wait('pipes.signup', good)).toMatchObject({ state: 'completed', output: { email: 'ada@example.com', job: good } });
      expect(await wait('pipes.signup', bad)).toMatchObject({ state: 'failed', lastError: { message: 'email must contain @' } });
      expect(await wait('pipes.count', num)).toMatchObject({ state: 'completed', output: { doubled: 42 } });
      expect(await wait('pipes.count', nan)).toMatchObject({ state: 'failed', lastError: { name: 'BadRequestException' } });
      expect(await wait('pipes.plain', plain)).toMatchObject({ state: 'completed', output: { x: 1 } });
      // the global pipe saw each decorated parameter of each job (the job's own, typed by an interface, as Object),
      // and nothing of the undecorated handler's
      expect(seen.sort()).toEqual([
        'custom Number',
        'custom Number',
        'custom Object',
        'custom Object',
        'custom SignupDto',
        'custom SignupDto',
      ]);
    } finally {
      await app.close();
    }
  });

  it('refuses at boot a parameter decorated for HTTP, and one left bare beside decorated ones', async () => {
    class Http {
      @QueueHandler('pipes.http')
      run(@Body() body: unknown) {
        return body;
      }
    }
    class Half {
      @QueueHandler('pipes.half')
      run(@JobPayload() data: unknown, job: Job) {
        return [data, job];
      }
    }
    for (const [Handler, message] of [
      [Http, /Http\.run has a parameter decorated for HTTP/],
      [Half, /Half\.run decorates some parameters but not parameter 1/],
    ] as const) {
      @Module({
        imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
        providers: [Handler],
      })
      class App {}
      await expect(NestFactory.createApplicationContext(App, { logger: false, abortOnError: false })).rejects.toThrow(message);
    }
  });
});
