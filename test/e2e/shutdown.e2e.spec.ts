import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_shutdown');
const pool = testPool();

/** Handlers of the first instance: each stays mid-job until shutdown aborts it; some notice and finish. */
const started: string[] = [];
const aborted: string[] = [];

@Injectable()
class SlowHandlers {
  @QueueHandler('reports', { concurrency: 10 })
  async build(job: Job<{ n: number }>) {
    started.push(job.id);
    await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
    aborted.push(job.id);
    return 'finished after abort';
  }
}

const finishedBySecond: string[] = [];

@Injectable()
class FastHandlers {
  @QueueHandler('reports', { concurrency: 10, pollingIntervalSeconds: 0.1 })
  async build(job: Job) {
    finishedBySecond.push(job.id);
    return 'second instance';
  }
}

function appModule(handlers: unknown[]) {
  @Module({
    imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, shutdownTimeoutMs: 300 })],
    providers: handlers as never[],
  })
  class AppModule {}
  return AppModule;
}

let second: INestApplicationContext | undefined;
afterAll(async () => {
  await second?.close();
  await dropSchema(pool, schema);
  await pool.end();
});

describe('application shutdown', () => {
  it('app.close() with 10 handlers mid-job leaves no job active, and a second instance finishes them', async () => {
    const first = await NestFactory.createApplicationContext(appModule([SlowHandlers]), { logger: ['error'] });
    const queue = first.get(QueueService);
    const ids = await queue.insert('reports', Array.from({ length: 14 }, (_, n) => ({ data: { n } })));
    await until(() => started.length === 10, '10 handlers mid-job');

    await first.close();

    expect(aborted.sort()).toEqual([...started].sort());
    const counts = await stateCounts(pool, schema, 'reports');
    expect(counts.active).toBeUndefined();
    expect(counts).toEqual({ created: 14 });
    const { rows } = await pool.query(`SELECT max(retry_count)::int AS r FROM "${schema}".jobs`);
    expect(rows[0].r).toBe(0);

    second = await NestFactory.createApplicationContext(appModule([FastHandlers]), { logger: ['error'] });
    await until(async () => (await stateCounts(pool, schema, 'reports')).completed === 14, 'second instance completed all 14');
    expect(finishedBySecond.sort()).toEqual([...ids].sort());
  });
});
