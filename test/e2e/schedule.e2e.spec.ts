// `@QueueHandler(name, { schedule })` in a Nest app: the schedule is made at bootstrap and its jobs reach the
// handler; a later boot whose code no longer declares it removes it, and leaves a schedule made at run time alone.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_schedule');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const quiet = { logger: false as const };
const ran: unknown[] = [];

@Injectable()
class Ticker {
  @QueueHandler('ticks', { schedule: { cron: '* * * * * *', data: { from: 'code' }, key: 'every-second' } })
  tick(job: Job<{ from: string }>) {
    ran.push(job.data);
  }
}

@Injectable()
class TickerWithoutSchedule {
  @QueueHandler('ticks')
  tick() {}
}

describe('@QueueHandler schedule', () => {
  it('is made at bootstrap and fires into the handler; a boot that no longer declares it removes it', async () => {
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [Ticker] })
    class WithSchedule {}
    const app = await NestFactory.createApplicationContext(WithSchedule, quiet);
    const queue = app.get(QueueService);
    expect(await queue.getSchedules('ticks')).toEqual([
      expect.objectContaining({ key: 'every-second', cron: '* * * * * *', tz: 'UTC', data: { from: 'code' }, managed: true }),
    ]);
    await until(() => ran.length >= 2, 'two slots ran through the handler');
    expect(ran[0]).toEqual({ from: 'code' });
    await queue.schedule('ticks', '0 0 * * *', { from: 'run time' }, { key: 'nightly' });
    await app.close();

    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [TickerWithoutSchedule] })
    class WithoutSchedule {}
    const next = await NestFactory.createApplicationContext(WithoutSchedule, quiet);
    expect((await next.get(QueueService).getSchedules('ticks')).map((s) => [s.key, s.managed])).toEqual([['nightly', false]]);
    // a schedule made at run time under the key the code declares: the code does not replace it
    await next.get(QueueService).schedule('ticks', '0 12 * * *', { from: 'run time' }, { key: 'every-second' });
    await next.close();
    const again = await NestFactory.createApplicationContext(WithSchedule, quiet);
    expect((await again.get(QueueService).getSchedules('ticks')).map((s) => [s.key, s.cron, s.managed])).toEqual([
      ['every-second', '0 12 * * *', false],
      ['nightly', '0 0 * * *', false],
    ]);
    await again.close();
  });

  it('a bad expression makes bootstrap throw, naming the handler, the option and the value', async () => {
    @Injectable()
    class BadCron {
      @QueueHandler('bad-cron', { schedule: '*/0 * * * *' })
      handle() {}
    }
    @Module({ imports: [QueueModule.forRoot({ connectionString: testUrl(), schema })], providers: [BadCron] })
    class BadModule {}
    const err = await NestFactory.createApplicationContext(BadModule, { ...quiet, abortOnError: false }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      /@QueueHandler\('bad-cron'\) on BadCron\.handle\.schedule\.cron must be a cron expression.*got "\*\/0 \* \* \* \*"/,
    );
  });
});
