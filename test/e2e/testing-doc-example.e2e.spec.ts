// The example of docs/testing.md ("An example"), run as it is
// written there: the code between the two marker lines below is that page's block, character for character
// (test/unit/testing-doc-example.spec.ts checks it). What follows the second marker only tidies up: the schema the
// example used, when its database came from the environment.
import pg from 'pg';

// docs/testing.md example: begin
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { drain, expectSent, runJob, startTestDatabase, type TestDatabase } from 'nestjs-pgqueue/testing';

@Injectable()
class Signups {
  constructor(private readonly queue: QueueService) {}
  async signUp(userId: string) {
    await this.queue.send('welcome-email', { userId });
  }
}

@Injectable()
class EmailHandlers {
  readonly sent: string[] = [];
  @QueueHandler('welcome-email', { retryLimit: 3 })
  async sendWelcome(job: Job<{ userId: string }>) {
    if (!job.data.userId) throw new Error('no user');
    this.sent.push(job.data.userId);
    return { sent: true };
  }
}

describe('welcome emails', () => {
  let db: TestDatabase;
  let app: TestingModule;
  let queue: QueueService;

  beforeAll(async () => {
    db = await startTestDatabase();
    app = await Test.createTestingModule({
      // startWorkers: false holds the loops, so that jobs run only when a test drains their queue
      imports: [QueueModule.forRoot({ connectionString: db.url, schema: 'welcome_test', startWorkers: false })],
      providers: [Signups, EmailHandlers],
    }).compile();
    app.useLogger(false);
    await app.init();
    queue = app.get(QueueService);
  });

  afterAll(async () => {
    await app.close();
    await db.stop();
  });

  it('sends a welcome email when a user signs up', async () => {
    const since = new Date();
    await app.get(Signups).signUp('u1');
    const [job] = await expectSent(queue, 'welcome-email', { userId: 'u1' }, { since });
    const { completed, failed } = await drain(queue, 'welcome-email');
    expect(completed).toEqual([job!.id]);
    expect(failed).toEqual([]);
    expect(app.get(EmailHandlers).sent).toContain('u1');
  });

  it('runs the handler once through the real pipeline', async () => {
    const ok = await runJob(queue, 'welcome-email', { userId: 'u2' });
    expect(ok).toMatchObject({ state: 'completed', output: { sent: true } });
    const bad = await runJob(queue, 'welcome-email', { userId: '' });
    expect(bad.state).toBe('failed');
    expect(bad.error?.message).toBe('no user');
  });
});
// docs/testing.md example: end

afterAll(async () => {
  const url = process.env.PGQUEUE_TEST_DATABASE_URL || process.env.DATABASE_URL;
  if (!url) return; // the example started its own server, and stop() removed it
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await pool.query('DROP SCHEMA IF EXISTS welcome_test CASCADE');
  await pool.end();
});
