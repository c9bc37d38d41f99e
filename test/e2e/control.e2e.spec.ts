// Operator control in a Nest app: an instance that boots with its @QueueHandler loops held (startWorkers: false)
// claims nothing until startWorking(), and stopWorking() drains it again, e.g. before a deploy.
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, QueueModule, QueueService, type BatchJob, type Job } from 'nestjs-pgqueue';
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

const batches: string[][] = [];

@Injectable()
class Digest {
  @QueueHandler('digest', { batch: true, batchSize: 5, pollingIntervalSeconds: 0.1 })
  collect(jobs: BatchJob<{ line: string }>[]) {
    batches.push(jobs.map((j) => j.data.line));
    return new Map(jobs.map((j) => [j.id, j.data.line === 'bad' ? new Error('bad line') : { wrote: j.data.line }]));
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

describe('@QueueHandler(name, { batch: true })', () => {
  it('hands the method the jobs of a claim together, and settles each by the Map it returns', async () => {
    @Module({
      imports: [QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false })],
      providers: [Digest],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    const queue = app.get(QueueService);
    await queue.stopWorking('digest');
    const ids = await queue.insert(
      'digest',
      ['a', 'b', 'bad', 'c', 'd', 'e', 'f'].map((line) => ({ data: { line }, retryLimit: 0 })),
    );
    await queue.startWorking('digest');
    await until(async () => (await queue.getJobById('digest', ids[6]!))!.state === 'completed', 'the last job completed');
    await until(async () => (await queue.getJobById('digest', ids[2]!))!.state === 'failed', 'the bad line failed');
    expect(batches[0]).toEqual(['a', 'b', 'bad', 'c', 'd']);
    expect(batches.flat()).toHaveLength(7);
    expect(await queue.getJobById('digest', ids[0]!)).toMatchObject({ state: 'completed', output: { wrote: 'a' } });
    await app.close();
  });
});
