import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, stateCounts, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_shutdown');
const pool = testPool();

/**
 * Handlers of the first instance: each stays mid-job until shutdown aborts it. Even-numbered jobs then
 * return a result (and complete); odd-numbered ones ignore the signal and never settle (handed back).
 */
const started: string[] = [];
const aborted: string[] = [];

@Injectable()
class SlowHandlers {
  @QueueHandler('reports', { concurrency: 10 })
  async build(job: Job<{ n: number }>) {
    started.push(job.id);
    await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
    aborted.push(job.id);
    if (job.data.n % 2 === 1) await new Promise(() => undefined);
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
    const ids = await queue.insert(
      'reports',
      Array.from({ length: 14 }, (_, n) => ({ data: { n } })),
    );
    await until(() => started.length === 10, '10 handlers mid-job');

    await first.close();

    expect(aborted.sort()).toEqual([...started].sort());
    const { rows } = await pool.query<{ id: string; state: string; retry_count: number; n: number }>(
      `SELECT id::text, state::text, retry_count, (data->>'n')::int AS n FROM "${schema}".jobs`,
    );
    expect(rows.filter((r) => r.state === 'active')).toEqual([]);
    const completed = rows.filter((r) => r.state === 'completed');
    const queued = rows.filter((r) => r.state === 'created');
    expect(completed.length + queued.length).toBe(14);
    expect(completed.length).toBe(5);
    expect(completed.every((r) => r.n % 2 === 0 && started.includes(r.id))).toBe(true);
    expect(rows.every((r) => r.retry_count === 0)).toBe(true);

    second = await NestFactory.createApplicationContext(appModule([FastHandlers]), { logger: ['error'] });
    await until(async () => (await stateCounts(pool, schema, 'reports')).completed === 14, 'second instance completed the rest');
    expect(finishedBySecond.sort()).toEqual(queued.map((r) => r.id).sort());
    expect(ids).toHaveLength(14);
  });
});
