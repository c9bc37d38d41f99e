// The sample app as a user would run it: it imports `nestjs-pgqueue` and `nestjs-pgqueue/terminus` by
// their public names (package exports → dist, built by `npm test` first), over real HTTP.
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createAppModule } from '../../sample-app/src/app.module.js';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('sample');
const admin = testPool(2);
let app: INestApplication | undefined;
let base: string;

beforeAll(async () => {
  const moduleRef = await Test.createTestingModule({ imports: [createAppModule(testUrl(), schema)] }).compile();
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

  it('GET /health answers 200 with status ok and the queue up', async () => {
    const { status, body } = await getJson('/health');
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.info.queue).toMatchObject({ status: 'up', workers: 1 });
    expect(body.info.queue.queues).toHaveProperty('welcome-email');
  });

  it('GET /jobs/:id answers 404 for an unknown or malformed id', async () => {
    for (const id of ['987654321', 'not-a-job', '9999999999999999999']) {
      const { status, body } = await getJson(`/jobs/${id}`);
      expect({ id, status }).toEqual({ id, status: 404 });
      expect(body.statusCode).toBe(404);
    }
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
});
