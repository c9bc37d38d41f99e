// The admin HTTP API mounted in a Nest app, on Express and on Fastify, called over HTTP as an operator's script
// would: each route's answer, the engine's typed errors as 400/404/409, the guard's refusal, the JSON-only rule of
// bodies, and the refusal of a request from another site's page. Seed 002's own curl lines: sample-app.e2e.spec.ts.
import { Injectable, Module, UnauthorizedException, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { InvalidOptionError, QueueModule, QueueService } from 'nestjs-pgqueue';
import { QueueAdminModule, isJsonContentType } from 'nestjs-pgqueue/admin';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';

const schema = uniqueSchema('e2e_admin');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, `${schema}_express`);
  await dropSchema(pool, `${schema}_fastify`);
  await pool.end();
});

const TOKEN = 'test-token-1';

/** Lets through a request with `Authorization: Bearer <TOKEN>`; 401 without one, 403 with another. */
@Injectable()
class TokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const auth = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization;
    if (!auth) throw new UnauthorizedException();
    return auth === `Bearer ${TOKEN}`;
  }
}

type Platform = 'express' | 'fastify';

async function start(platform: Platform): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [
      QueueModule.forRoot({ connectionString: testUrl(), schema: `${schema}_${platform}`, supervise: false }),
      QueueAdminModule.forRoot({ prefix: '/ops/api', guards: [TokenGuard] }),
    ],
  })
  class App {}
  const app =
    platform === 'fastify'
      ? await NestFactory.create(App, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops/api` };
}

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { ...auth, 'content-type': 'application/json' };

async function call(url: string, method: string, body?: unknown, headers: Record<string, string> = json) {
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

describe.each(['express', 'fastify'] as const)('QueueAdminModule on %s', (platform) => {
  let app: INestApplication;
  let url: string;
  beforeAll(async () => {
    ({ app, url } = await start(platform));
    const queue = app.get(QueueService);
    await queue.createQueue('admin.mail', { retryLimit: 0 });
    await queue.createQueue('admin/nested:name');
  });
  afterAll(() => app.close());

  it('enqueues: 201 with enqueue()’s answer, 200 when deduped; bad input is 400 naming the field; an unknown queue 404', async () => {
    const made = await call(`${url}/enqueue`, 'POST', {
      queue: 'admin.mail',
      data: { to: 'a@b.c' },
      options: { dedupeKey: 'd1', priority: 2 },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ queue: 'admin.mail', state: 'created', deduped: false });
    expect(made.body.id).toMatch(/^\d+$/);
    expect(Date.parse(made.body.startAfter)).not.toBeNaN();
    const again = await call(`${url}/enqueue`, 'POST', { queue: 'admin.mail', data: {}, options: { dedupeKey: 'd1' } });
    expect(again).toMatchObject({ status: 200, body: { id: made.body.id, deduped: true } });
    expect(made.headers.get('cache-control')).toBe('no-store');

    const cases: [unknown, string][] = [
      [{ data: {} }, 'queue'],
      [{ queue: 'admin.mail', extra: 1 }, 'extra'],
      [{ queue: 'admin.mail', options: { priority: 'high' } }, 'options.priority'],
      [{ queue: 'admin.mail', options: { bogus: true } }, 'options.bogus'],
      [{ queue: 'admin.mail', options: { db: {} } }, 'options.db'],
      [{ queue: 'admin.mail', options: { data: { to: 'x' } } }, 'options.data'],
      [{ queue: 'admin.mail', data: { s: 'nul \u0000 here' } }, 'data'],
      [[1, 2], 'body'],
      // the two forms of the body do not mix
      [{ queue: 'admin.mail', data: {}, maxAttempts: 3 }, 'maxAttempts'],
      [{ queue: 'admin.mail', payload: {}, options: {} }, 'payload'],
      [{ queue: 'admin.mail', payload: {}, maxAttempts: 0 }, 'maxAttempts'],
      [{ queue: 'admin.mail', payload: {}, runAt: 'tomorrow' }, 'runAt'],
      [{ queue: 'admin.mail', payload: {}, runAt: '2026-01-02' }, 'runAt'],
      [{ queue: 'admin.mail', payload: {}, delay: -1 }, 'delay'],
      [{ queue: 'admin.mail', payload: {}, delay: 1.5 }, 'delay'],
      [{ queue: 'admin.mail', payload: {}, priority: 'high' }, 'priority'],
      [{ queue: 'admin.mail', payload: {}, dedupeKey: 7 }, 'dedupeKey'],
      [{ queue: 'admin.mail', payload: {}, runAt: '2026-02-30T10:00:00Z' }, 'runAt'],
    ];
    for (const [body, field] of cases) {
      const res = await call(`${url}/enqueue`, 'POST', body);
      expect({ field, status: res.status, got: res.body.field }).toEqual({ field, status: 400, got: field });
      expect(res.body.message).toContain(field);
    }
    expect((await call(`${url}/enqueue`, 'POST', { queue: 'admin.none', data: {} })).body).toMatchObject({
      statusCode: 404,
      code: 'QUEUE_NOT_FOUND',
    });
  });

  it('gets a job by id alone, pages a queue’s jobs by state, retries only a failed job, deletes whatever its state', async () => {
    const queue = app.get(QueueService);
    const done: string[] = [];
    await queue.work('admin.mail', { pollingIntervalSeconds: 0.1 }, async (job) => {
      done.push(job.id);
      throw new Error('smtp down');
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await call(`${url}/enqueue`, 'POST', { queue: 'admin.mail', data: { i } })).body.id as string);
    // these three by id: the queue may hold failed jobs of an earlier test
    await until(async () => {
      const failed = (await queue.findJobs('admin.mail', { state: 'failed' })).jobs.map((j) => j.id);
      return ids.every((id) => failed.includes(id));
    }, 'the three jobs failed');
    await queue.offWork('admin.mail');

    const got = await call(`${url}/jobs/${ids[0]}`, 'GET', undefined, auth);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: ids[0],
      name: 'admin.mail',
      state: 'failed',
      data: { i: 0 },
      lastErrorDetail: { message: 'smtp down', attempt: 1 },
      // seed 002's job shape beside the engine's
      payload: { i: 0 },
      status: 'failed',
      attempts: 1,
      maxAttempts: 1,
      lastError: 'smtp down',
      dedupeKey: null,
      priority: 0,
    });
    expect(got.body.runAfter).toBe(got.body.startAfter);
    expect(got.body.startedAt).toBe(got.body.startedOn);
    expect(Date.parse(got.body.startedAt)).not.toBeNaN();
    expect((await call(`${url}/jobs/999999999`, 'GET', undefined, auth)).body).toMatchObject({ statusCode: 404, code: 'JOB_NOT_FOUND' });
    expect((await call(`${url}/jobs/abc`, 'GET', undefined, auth)).body).toMatchObject({ statusCode: 400, field: 'id' });

    const page1 = await call(`${url}/queues/admin.mail/jobs?state=failed&limit=2`, 'GET', undefined, auth);
    expect(page1.status).toBe(200);
    expect(page1.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2], ids[1]]);
    const page2 = await call(`${url}/queues/admin.mail/jobs?state=failed&limit=2&after=${page1.body.next}`, 'GET', undefined, auth);
    expect(page2.body.jobs.map((j: { id: string }) => j.id)).toContain(ids[0]);
    const both = await call(`${url}/queues/admin.mail/jobs?state=failed,created`, 'GET', undefined, auth);
    expect(both.body.jobs.length).toBeGreaterThanOrEqual(4);
    expect((await call(`${url}/queues/admin.mail/jobs?state=lost`, 'GET', undefined, auth)).body).toMatchObject({
      statusCode: 400,
      field: 'state',
    });
    expect((await call(`${url}/queues/admin.mail/jobs?limit=5000`, 'GET', undefined, auth)).body).toMatchObject({
      statusCode: 400,
      field: 'limit',
    });
    expect((await call(`${url}/queues/admin.mail/jobs?sort=id`, 'GET', undefined, auth)).body).toMatchObject({
      statusCode: 400,
      field: 'sort',
    });
    expect((await call(`${url}/queues/admin.none/jobs`, 'GET', undefined, auth)).body).toMatchObject({
      statusCode: 404,
      code: 'QUEUE_NOT_FOUND',
    });
    // a queue name with / and : travels encoded
    const nested = await call(`${url}/queues/${encodeURIComponent('admin/nested:name')}/jobs`, 'GET', undefined, auth);
    expect(nested).toMatchObject({ status: 200, body: { jobs: [], next: null } });

    const retried = await call(`${url}/jobs/${ids[0]}/retry`, 'POST', {});
    // a fresh budget: no attempt of it begun yet
    expect(retried).toMatchObject({ status: 200, body: { id: ids[0], state: 'retry', status: 'pending', attempts: 0, maxAttempts: 1 } });
    // the job is no longer failed: a second retry is refused, naming its state
    const refused = await call(`${url}/jobs/${ids[0]}/retry`, 'POST', {});
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'JOB_STATE' });
    expect(refused.body.message).toContain('is retry');
    expect((await call(`${url}/jobs/999999999/retry`, 'POST', {})).status).toBe(404);

    const deleted = await call(`${url}/jobs/${ids[0]}`, 'DELETE', {});
    expect(deleted).toMatchObject({ status: 200, body: { id: ids[0], queue: 'admin.mail', deleted: true } });
    expect(await queue.getJobById('admin.mail', ids[0]!)).toBeNull();
    expect((await call(`${url}/jobs/${ids[0]}`, 'DELETE', {})).status).toBe(404);
  });

  it('pauses and resumes a queue; an unknown queue is 404 and a bad name 400', async () => {
    const queue = app.get(QueueService);
    expect(await call(`${url}/queues/admin.mail/pause`, 'POST', {})).toMatchObject({
      status: 200,
      body: { queue: 'admin.mail', paused: true },
    });
    expect((await queue.getQueue('admin.mail'))!.paused).toBe(true);
    expect(await call(`${url}/queues/admin.mail/resume`, 'POST', {})).toMatchObject({ status: 200, body: { paused: false } });
    expect((await queue.getQueue('admin.mail'))!.paused).toBe(false);
    expect((await call(`${url}/queues/admin.none/pause`, 'POST', {})).status).toBe(404);
    expect((await call(`${url}/queues/${encodeURIComponent('bad name!')}/pause`, 'POST', {})).body).toMatchObject({
      statusCode: 400,
      field: 'name',
    });
  });

  it('the guard refuses first (401 without a token, 403 with a wrong one); a body that is not JSON is refused with 415', async () => {
    const queue = app.get(QueueService);
    const anonymous = await call(`${url}/jobs/1`, 'GET', undefined, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    expect(
      (await call(`${url}/enqueue`, 'POST', { queue: 'admin.mail' }, { authorization: 'Bearer wrong', 'content-type': 'application/json' }))
        .status,
    ).toBe(403);
    const before = (await queue.getQueue('admin.mail', { force: true }))!.queuedCount;
    const form = await call(`${url}/enqueue`, 'POST', 'queue=admin.mail&data=x', {
      ...auth,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    const text = await call(`${url}/queues/admin.mail/pause`, 'POST', 'x', { ...auth, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const untyped = await call(`${url}/queues/admin.mail/pause`, 'POST', '{}', auth);
    expect(untyped.status).toBe(415);
    expect((await queue.getQueue('admin.mail', { force: true }))!).toMatchObject({ queuedCount: before, paused: false });
  });

  it('refuses a request from another site’s page with 403 before the guard runs; a request with neither header, or from its own page, passes', async () => {
    const queue = app.get(QueueService);
    const own = new URL(url).origin;
    let guarded = 0;
    const before = (await queue.getQueue('admin.mail', { force: true }))!;
    for (const headers of [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: own.replace('127.0.0.1', 'localhost') },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: own },
    ] as Record<string, string>[]) {
      // a no-cors form or fetch from another site: no body, no type, the operator's credentials
      for (const [path, method] of [
        ['queues/admin.mail/pause', 'POST'],
        ['jobs/1', 'DELETE'],
        ['jobs/1', 'GET'],
      ] as const) {
        const res = await call(`${url}/${path}`, method, undefined, { ...auth, ...headers });
        expect({ headers, path, status: res.status, code: res.body.code }).toEqual({ headers, path, status: 403, code: 'CROSS_ORIGIN' });
        if (res.status !== 403) guarded++;
      }
    }
    expect(guarded).toBe(0);
    expect((await queue.getQueue('admin.mail', { force: true }))!).toMatchObject({ queuedCount: before.queuedCount, paused: false });
    // its own page (same origin), a browser's address bar, and curl: let through to the guard and the route
    for (const headers of [{ origin: own }, { 'sec-fetch-site': 'same-origin', origin: own }, { 'sec-fetch-site': 'none' }, {}] as Record<
      string,
      string
    >[]) {
      expect((await call(`${url}/queues/admin.mail/pause`, 'POST', undefined, { ...auth, ...headers })).status).toBe(200);
      expect((await call(`${url}/queues/admin.mail/resume`, 'POST', undefined, { ...auth, ...headers })).status).toBe(200);
    }
    // behind a proxy that ends TLS, the page's https origin names the request's own host
    const tls = { ...auth, origin: own.replace('http:', 'https:') };
    expect((await call(`${url}/queues/admin.mail/resume`, 'POST', undefined, tls)).status).toBe(200);
    // a page cannot name its own origin through the forwarding headers (sendable where the app's CORS allows them)
    const spoofed = { ...auth, origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    expect((await call(`${url}/queues/admin.mail/resume`, 'POST', undefined, spoofed)).status).toBe(403);
  });
});

describe('the admin API with the database away', () => {
  it('answers 503 while it cannot reach the database, and works again when it returns', async () => {
    const db = new URL(testUrl());
    const proxy = await tcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
    db.hostname = '127.0.0.1';
    db.port = String(proxy.port);
    @Module({
      imports: [
        QueueModule.forRoot({
          connectionString: db.toString(),
          schema: `${schema}_express`,
          supervise: false,
          logger: { log() {}, warn() {}, error() {} },
        }),
        QueueAdminModule.forRoot({ guards: [TokenGuard] }),
      ],
    })
    class App {}
    const app = await NestFactory.create(App, { logger: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/api/queue`;
      await app.get(QueueService).createQueue('admin.away');
      await proxy.cut();
      const away = await call(`${url}/enqueue`, 'POST', { queue: 'admin.away', data: {} });
      expect(away).toMatchObject({ status: 503, body: { code: 'DATABASE_UNAVAILABLE' } });
      expect((await call(`${url}/jobs/1`, 'GET', undefined, auth)).status).toBe(503);
      await proxy.restore();
      const back = await until(async () => {
        const res = await call(`${url}/enqueue`, 'POST', { queue: 'admin.away', data: {} });
        return res.status === 201 ? res : null;
      }, 'an enqueue once the database is back');
      expect(back.body).toMatchObject({ queue: 'admin.away', state: 'created' });
    } finally {
      await app.close();
      await proxy.close();
    }
  });
});

describe('the admin API under a flood of calls', () => {
  it('serves them through a quarter of the engine’s pool, refuses with 503 past 100 waiting, and leaves the rest to the engine', async () => {
    @Module({
      imports: [
        QueueModule.forRoot({ connectionString: testUrl(), schema: `${schema}_express`, supervise: false, poolSize: 4 }),
        QueueAdminModule.forRoot({ guards: [TokenGuard] }),
      ],
    })
    class App {}
    const app = await NestFactory.create(App, { logger: false });
    const locker = await pool.connect();
    try {
      await app.listen(0, '127.0.0.1');
      const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/api/queue`;
      const queue = app.get(QueueService);
      await queue.createQueue('admin.flood');
      const id = (await queue.send('admin.flood', {}))!;
      // every read of a job waits while the jobs table is locked: the first call to run holds the one turn of a pool
      // of 4, 100 wait for it, and the 5 past them are refused at once, whatever order the 106 arrive in
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}_express".jobs IN ACCESS EXCLUSIVE MODE`);
      let refused = 0;
      const calls = Array.from({ length: 106 }, () =>
        call(`${url}/jobs/${id}`, 'GET', undefined, auth).then((answer) => {
          if (answer.status === 503) refused++;
          return answer;
        }),
      );
      await until(() => refused === 5, 'five calls refused at once');
      // meanwhile the engine's other connections are free for its own work
      expect((await queue.getQueues(['admin.flood'])).map((q) => q.name)).toEqual(['admin.flood']);
      await locker.query('ROLLBACK');
      const answers = await Promise.all(calls);
      const refusals = answers.filter((a) => a.status === 503);
      expect(refusals).toHaveLength(5);
      for (const r of refusals) expect(r.body).toMatchObject({ code: 'OPERATOR_BUSY' });
      expect(answers.filter((a) => a.status === 200)).toHaveLength(101);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      await app.close();
    }
  });
});

describe('QueueAdminModule with redact', () => {
  it('answers a job’s data, payload, output and error only as redact lets them out', async () => {
    const redact = (job: { data: unknown; lastError: { message: string } | null }) => ({
      data: { masked: true },
      lastError: job.lastError && { name: 'Error', message: job.lastError.message.replace(/k-\w+/, '[key]') },
    });
    @Module({
      imports: [
        QueueModule.forRoot({ connectionString: testUrl(), schema: `${schema}_express`, supervise: false, logJobFailures: false }),
        QueueAdminModule.forRoot({ guards: [TokenGuard], redact }),
      ],
    })
    class App {}
    const app = await NestFactory.create(App, { logger: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/api/queue`;
      const queue = app.get(QueueService);
      await queue.createQueue('admin.redact', { retryLimit: 0 });
      const id = (await queue.send('admin.redact', { card: 'k-4242' }))!;
      await queue.work('admin.redact', { pollingIntervalSeconds: 0.1 }, () => {
        throw new Error('declined k-4242');
      });
      await until(async () => (await queue.getJobById('admin.redact', id))?.state === 'failed', 'the job failed');
      const got = await call(`${url}/jobs/${id}`, 'GET', undefined, auth);
      expect(JSON.stringify(got.body)).not.toContain('4242');
      expect(got.body).toMatchObject({ data: { masked: true }, payload: { masked: true }, lastError: 'declined [key]' });
      expect(got.body).not.toHaveProperty('output');
      const page = await call(`${url}/queues/admin.redact/jobs`, 'GET', undefined, auth);
      expect(JSON.stringify(page.body)).not.toContain('4242');
      const retried = await call(`${url}/jobs/${id}/retry`, 'POST');
      expect(JSON.stringify(retried.body)).not.toContain('4242');
    } finally {
      await app.close();
    }
  });
});

describe('QueueAdminModule.forRoot', () => {
  it('refuses to mount without a guard, with a bad prefix, an unknown option or an async redact, naming the option', () => {
    expect(() => QueueAdminModule.forRoot({ guards: [] })).toThrow(/guards must be at least one guard/);
    expect(() => QueueAdminModule.forRoot({} as never)).toThrow(/guards/);
    expect(() => QueueAdminModule.forRoot(undefined as never)).toThrow(InvalidOptionError);
    expect(() => QueueAdminModule.forRoot({ prefix: 'api', guards: [TokenGuard] })).toThrow(/prefix/);
    // a misspelt option would mount the API somewhere else than asked: refused
    expect(() => QueueAdminModule.forRoot({ path: '/admin', guards: [TokenGuard] } as never)).toThrow(
      /path must be absent: QueueAdminModule.forRoot takes prefix, guards, redact/,
    );
    expect(() => QueueAdminModule.forRoot({ guards: [TokenGuard], redact: (async () => ({})) as never })).toThrow(
      /redact must be a synchronous function/,
    );
    expect(() => QueueAdminModule.forRoot({ guards: [TokenGuard], redact: 'data' as never })).toThrow(InvalidOptionError);
  });

  it('takes application/json with or without parameters as JSON, nothing else', () => {
    for (const t of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8'])
      expect(isJsonContentType(t)).toBe(true);
    for (const t of ['application/x-www-form-urlencoded', 'text/plain', 'application/jsonp', 'multipart/form-data', undefined])
      expect(isJsonContentType(t)).toBe(false);
  });
});
