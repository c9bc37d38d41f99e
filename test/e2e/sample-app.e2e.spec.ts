// The sample app as a user would run it: it imports `nestjs-pgqueue`, `nestjs-pgqueue/terminus` and `/prometheus` by
// their public names (package exports → dist, built by `npm test` first), over real HTTP.
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { QueueService } from 'nestjs-pgqueue';
import { createAppModule } from '../../sample-app/src/app.module.js';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { samples, series } from '../helpers/prometheus.js';

const schema = uniqueSchema('sample');
const ADMIN_TOKEN = 'sample-admin-token';
const admin = testPool(2);
let app: INestApplication | undefined;
let base: string;

beforeAll(async () => {
  const moduleRef = await Test.createTestingModule({ imports: [createAppModule(testUrl(), schema, ADMIN_TOKEN)] }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await app?.close();
  await dropSchema(admin, schema);
  await admin.end();
});

async function getJson(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.json() };
}

describe('sample app', () => {
  it('POST /jobs enqueues a welcome email that the handler completes; GET /jobs/:id shows it', async () => {
    const res = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: 'a@b.c' }),
    });
    expect(res.status).toBe(201);
    const { jobId } = (await res.json()) as { jobId: string };
    expect(jobId).toMatch(/^\d+$/);

    const job = await until(async () => {
      const { status, body } = await getJson(`/jobs/${jobId}`);
      return status === 200 && body.state === 'completed' ? body : null;
    }, `job ${jobId} completed`);
    expect(job).toMatchObject({ id: jobId, state: 'completed', data: { to: 'a@b.c' }, output: { sentTo: 'a@b.c' } });

    const { rows } = await admin.query(`SELECT state::text FROM "${schema}".jobs WHERE id = $1`, [jobId]);
    expect(rows).toEqual([{ state: 'completed' }]);
  });

  it('GET /health answers 200 with status ok, the queue up and this instance among the live workers', async () => {
    const { status, body } = await until(async () => {
      const res = await getJson('/health');
      return res.body.info?.queue?.workers?.[0]?.queues?.length > 0 ? res : null;
    }, 'this instance and its loop in the workers registry');
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.info.queue.status).toBe('up');
    expect(body.info.queue.workers).toEqual([
      expect.objectContaining({ pid: process.pid, queues: [expect.objectContaining({ name: 'welcome-email' })] }),
    ]);
  });

  it("GET /metrics serves the queue's metrics: this instance's completed jobs with their times, and the monitor's counts", async () => {
    await app!.get(QueueService).monitor({ force: true });
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const s = samples(await res.text());
    const queue = { queue: 'welcome-email' };
    expect(s.get('pgqueue_up')).toBe(1);
    // the first test's job (and nothing else has run yet)
    expect(s.get(series('pgqueue_jobs_completed_total', queue))).toBe(1);
    expect(s.get(series('pgqueue_job_run_seconds_count', queue))).toBe(1);
    expect(s.get(series('pgqueue_job_wait_seconds_bucket', { le: '+Inf', ...queue }))).toBe(1);
    expect(s.get(series('pgqueue_queue_stored_jobs', queue))).toBe(1);
    expect(s.get(series('pgqueue_queue_queued_jobs', queue))).toBe(0);
  });

  it('mounts the dashboard at /queues and the admin API at /api/queue behind the token', async () => {
    const page = await fetch(`${base}/queues`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Live job feed');
    const enqueue = (authorization?: string) =>
      fetch(`${base}/api/queue/enqueue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ queue: 'welcome-email', data: { to: 'ops@b.c' } }),
      });
    expect((await enqueue()).status).toBe(401);
    expect((await enqueue('Bearer wrong-token-of-any-len')).status).toBe(403);
    const made = await enqueue(`Bearer ${ADMIN_TOKEN}`);
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const job = await until(async () => {
      const res = await fetch(`${base}/api/queue/jobs/${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const body = (await res.json()) as { state: string };
      return body.state === 'completed' ? body : null;
    }, 'the job enqueued over the admin API completes');
    expect(job).toMatchObject({ id, name: 'welcome-email', output: { sentTo: 'ops@b.c' } });
  });

  it('GET /jobs/:id answers 404 for an unknown or malformed id', async () => {
    for (const id of ['987654321', 'not-a-job', '9999999999999999999']) {
      const { status, body } = await getJson(`/jobs/${id}`);
      expect({ id, status }).toEqual({ id, status: 404 });
      expect(body.statusCode).toBe(404);
    }
  });

  it('POST /jobs answers a payload PostgreSQL cannot store (a NUL character) with 400 naming the field', async () => {
    const res = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: 'a\u0000b@c.d' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400, code: 'INVALID_PAYLOAD', field: 'data' });
  });

  it('POST /jobs refuses a "to" that is not a string', async () => {
    const res = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: 5 }),
    });
    expect(res.status).toBe(400);
    await res.body?.cancel();
  });

  it('GET /health goes down while the workers are stopped and a backlog grows, and up again once they work it', async () => {
    const queue = app!.get(QueueService);
    await queue.offWork('welcome-email');
    await queue.insert(
      'welcome-email',
      Array.from({ length: 1001 }, (_, n) => ({ data: { to: `user${n}@example.com` } })),
    );
    await queue.monitor({ force: true });
    // the registry learns of the stopped loop at its next refresh, which offWork asks for at once
    const down = await until(async () => {
      const res = await getJson('/health');
      return res.status === 503 && res.body.error.queue.reasons.length === 2 ? res : null;
    }, 'health down for both reasons');
    expect(down.body.error.queue.status).toBe('down');
    expect(down.body.error.queue.reasons).toEqual([
      'queue "welcome-email": 1001 jobs waiting (maxQueued 1000)',
      'queue "welcome-email": 1001 ready jobs and no live worker works it',
    ]);

    await queue.work('welcome-email', { concurrency: 20, batchSize: 100 }, () => ({ sent: true }));
    await until(async () => {
      await queue.monitor({ force: true });
      return (await getJson('/health')).status === 200;
    }, 'health up again once the backlog is worked');
    await queue.offWork('welcome-email');
  });
});
