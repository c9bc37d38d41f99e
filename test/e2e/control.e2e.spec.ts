// Operator control in a Nest app: an instance that boots with its @QueueHandler loops held (startWorkers: false)
// claims nothing until startWorking(), and stopWorking() drains it again, e.g. before a deploy.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_control');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const ran: string[] = [];

@Injectable()
class Mailer {
  @QueueHandler('mail', { pollingIntervalSeconds: 60 })
  send(job: Job) {
    ran.push(job.id);
  }
}

describe('startWorkers: false, startWorking(), stopWorking()', () => {
  it('boots with the loops held, starts them on demand, and drains them again', async () => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, startWorkers: false, supervise: false })],
      providers: [Mailer],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    const queue = app.get(QueueService);
    expect(queue.workerCount).toBe(0);
    const first = (await queue.send('mail', {}))!;
    const me = await until(async () => (await queue.getWorkers()).find((w) => w.stopped.includes('mail')), 'the held loop is listed');
    expect(me.loops).toEqual([]);
    expect(ran).toEqual([]);

    await queue.startWorking();
    await until(() => ran.includes(first), 'the job ran once the loops started');
    await queue.stopWorking('mail');
    expect(queue.workerCount).toBe(0);
    await app.close();
  });
});
