// The sample app as a user would run it: it imports `nestjs-pgqueue`, `nestjs-pgqueue/terminus` and `/prometheus` by
// their public names (package exports → dist, built by `npm test` first), over real HTTP.
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { QueueService } from 'nestjs-pgqueue';
import { createAppModule } from '../../sample-app/src/app.module.js';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { samples, series } from '../helpers/prometheus.js';
import { shell } from '../helpers/shell.js';

const schema = uniqueSchema('sample');
const shopSchema = uniqueSchema('shop');
const ADMIN_TOKEN = 'sample-admin-token';
const admin = testPool(2);
let app: INestApplication | undefined;
let base: string;

beforeAll(async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [createAppModule({ connectionString: testUrl(), schema, shopSchema, adminToken: ADMIN_TOKEN })],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await app?.close();
  await dropSchema(admin, schema);
  await dropSchema(admin, shopSchema);
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
    }, 'this instance and its loop in the cluster registry');
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.info.queue.status).toBe('up');
    expect(body.info.queue.workers).toEqual([
      expect.objectContaining({
        pid: process.pid,
        queues: expect.arrayContaining([
          expect.objectContaining({ name: 'welcome-email' }),
          expect.objectContaining({ name: 'order-placed' }),
        ]),
      }),
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
    // a browser is asked for the token as a password
    const refused = await fetch(`${base}/queues`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(await refused.text()).not.toContain('Live job feed');
    const basic = `Basic ${Buffer.from(`ops:${ADMIN_TOKEN}`).toString('base64')}`;
    const page = await fetch(`${base}/queues`, { headers: { authorization: basic } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Live job feed');
    const wrong = `Basic ${Buffer.from('ops:wrong-token-of-any-len').toString('base64')}`;
    expect((await fetch(`${base}/queues`, { headers: { authorization: wrong } })).status).toBe(403);
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

  it('answers seed 002’s curl lines as they are written: enqueue, retry (400 unless failed), delete', async () => {
    // the reference's lines, with only its host and port replaced by this app's
    const lines = {
      enqueue: `curl -X POST http://localhost:8090/api/queue/enqueue \\
  -H "Authorization: $SUPERUSER_TOKEN" \\
  -H "Content-Type: application/json" \\
  -d '{"queue": "send-welcome-email", "payload": {"userId": "abc123"}, "maxAttempts": 5}'`,
      retry: `curl -X POST http://localhost:8090/api/queue/jobs/$ID/retry \\
  -H "Authorization: $SUPERUSER_TOKEN"`,
      delete: `curl -X DELETE http://localhost:8090/api/queue/jobs/$ID \\
  -H "Authorization: $SUPERUSER_TOKEN"`,
    };
    const run = async (line: string, id = '') =>
      JSON.parse(await shell(line.replaceAll('http://localhost:8090', base), { SUPERUSER_TOKEN: ADMIN_TOKEN, ID: id }));

    const queue = app!.get(QueueService);
    // held, so that the answer's read-back sees the job before a loop claims it
    await queue.stopWorking('send-welcome-email');
    const made = await run(lines.enqueue);
    await queue.startWorking('send-welcome-email');
    expect(made).toMatchObject({ queue: 'send-welcome-email', status: 'pending', deduped: false, state: 'created' });
    expect(made.id).toMatch(/^\d+$/);
    expect(Date.parse(made.runAfter)).not.toBeNaN();
    const done = await until(async () => {
      const job = await queue.getJobById('send-welcome-email', made.id);
      return job?.state === 'completed' ? job : null;
    }, 'the job enqueued by the curl line completes');
    expect(done).toMatchObject({ retryLimit: 4, output: { sentTo: 'abc123' } });
    // retry is refused unless the job is failed
    expect(await run(lines.retry, made.id)).toMatchObject({ statusCode: 400, code: 'JOB_STATE' });

    // one that fails for good: the same line with a payload the handler refuses, and one attempt
    const bad = await run(lines.enqueue.replace('{"userId": "abc123"}, "maxAttempts": 5', '{}, "maxAttempts": 1'));
    await until(async () => (await queue.getJobById('send-welcome-email', bad.id))?.state === 'failed', 'the bad job failed');
    // held, so that the retried job is read back before a loop claims it again
    await queue.stopWorking('send-welcome-email');
    const retried = await run(lines.retry, bad.id);
    await queue.startWorking('send-welcome-email');
    expect(retried).toMatchObject({
      id: bad.id,
      status: 'pending',
      attempts: 0,
      maxAttempts: 1,
      lastError: 'payload.userId must be a string',
    });
    expect(await run(lines.delete, bad.id)).toMatchObject({ id: bad.id, deleted: true });
    expect(await queue.getJobById('send-welcome-email', bad.id)).toBeNull();
    expect(await run(lines.delete, bad.id)).toMatchObject({ statusCode: 404 });
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
  it('POST /orders writes the order and sends its job in one transaction; the handlers charge it and mark it paid', async () => {
    const res = await fetch(`${base}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'ada', totalCents: 1250 }),
    });
    expect(res.status).toBe(201);
    const { orderId, jobId } = (await res.json()) as { orderId: number; jobId: string };
    const order = await until(async () => {
      const { body } = await getJson(`/orders/${orderId}`);
      return body.status === 'paid' ? body : null;
    }, `order ${orderId} paid`);
    expect(order).toMatchObject({ id: orderId, customerId: 'ada', totalCents: 1250 });
    const queue = app!.get(QueueService);
    expect(await queue.getJobById('order-placed', jobId)).toMatchObject({ state: 'completed', singletonKey: 'ada' });
    // the exclusive recompute ran after it, and counted the paid order
    await until(async () => {
      const { jobs } = await queue.findJobs('recompute-stats', { state: 'completed' });
      return jobs.some((j) => (j.output as { paid: number }).paid >= 1);
    }, 'a recompute counted the paid order');
  });

  it('a declined card fails its charge twice, the order stays pending, and the job lands in the dead-letter queue', async () => {
    const res = await fetch(`${base}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'bob', totalCents: 990, card: 'declined' }),
    });
    const { orderId } = (await res.json()) as { orderId: number };
    const queue = app!.get(QueueService);
    const dead = await until(async () => {
      const { jobs } = await queue.findJobs('charge-card.dead');
      return jobs.find((j) => (j.data as { orderId: number }).orderId === orderId);
    }, `the charge of order ${orderId} dead-lettered`);
    expect(dead).toMatchObject({ sourceName: 'charge-card', sourceRetryCount: 2 });
    expect((await getJson(`/orders/${orderId}`)).body.status).toBe('pending');
  });

  it('POST /orders refuses a bad order with 400 naming the field, and writes nothing', async () => {
    const res = await fetch(`${base}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'eve', totalCents: -5 }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/totalCents must be an integer from 1 to 10000000, got -5/);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${shopSchema}".orders WHERE customer_id = 'eve'`);
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('keeps the sales report on its cron schedule', async () => {
    const schedules = await app!.get(QueueService).getSchedules('sales-report');
    expect(schedules).toEqual([expect.objectContaining({ name: 'sales-report', cron: '0 * * * * *' })]);
  });
});

describe('sample app in demo mode', () => {
  it('places orders on its own, some of them declined', async () => {
    // one app at a time: both would register their metrics on prom-client's default registry
    await app?.close();
    app = undefined;
    const demoSchema = uniqueSchema('demo');
    const demoShop = uniqueSchema('demoshop');
    const moduleRef = await Test.createTestingModule({
      imports: [createAppModule({ connectionString: testUrl(), schema: demoSchema, shopSchema: demoShop, demoIntervalMs: 20 })],
    }).compile();
    const demo = moduleRef.createNestApplication({ logger: false });
    await demo.init();
    try {
      await until(async () => {
        const { rows } = await admin.query<{ card: string }>(`SELECT card FROM "${demoShop}".orders`).catch(() => ({ rows: [] }));
        return rows.length >= 10 && rows.some((r) => r.card === 'declined');
      }, 'ten demo orders, one declined');
    } finally {
      await demo.close();
      await dropSchema(admin, demoSchema);
      await dropSchema(admin, demoShop);
    }
  });
});
