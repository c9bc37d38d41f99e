// Attack: the dashboard mounted with no guard behind the most common proxy setup, nginx's `proxy_pass
// http://127.0.0.1:3000` on the app's own host, which adds no forwarding header: every request then comes from
// 127.0.0.1 with a local Host, as a developer's browser would. Answer: forRoot() without guards refuses to start;
// `localOnly: true` is the explicit opt-in for a developer's machine, refused when NODE_ENV is production, and a
// proxy that says it forwarded is refused even then. Attack: a page on another site reads the dashboard or changes
// jobs through an operator's logged-in browser. Answer: 403 before any guard or handler runs. Against the built
// package (`npm run build` first), as an app uses it.
import { Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueModule, QueueService } from 'nestjs-pgqueue';
import { QueueAdminModule } from 'nestjs-pgqueue/admin';
import { QueueDashboardModule } from 'nestjs-pgqueue/dashboard';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const schema = uniqueSchema('secexpose');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

/** An operator's session: a cookie the browser sends with every request, from any page. */
class CookieGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.cookie === 'session=operator';
  }
}

async function start(dashboard: Parameters<typeof QueueDashboardModule.forRoot>[0]): Promise<{ app: INestApplication; port: number }> {
  @Module({
    imports: [
      QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false }),
      QueueDashboardModule.forRoot(dashboard),
      QueueAdminModule.forRoot({ guards: [new CookieGuard()] }),
    ],
  })
  class App {}
  const app = await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, port: Number(new URL(await app.getUrl()).port) };
}

describe('a dashboard behind a proxy on the same host that adds no forwarding header', () => {
  let proxy: TcpProxy | undefined;
  let app: INestApplication | undefined;
  afterEach(async () => {
    await proxy?.close();
    await app?.close();
    proxy = app = undefined;
  });

  it('cannot be mounted without guards: forRoot() refuses to start, naming guards', () => {
    expect(() => QueueDashboardModule.forRoot()).toThrow(/^guards must be at least one guard/);
    expect(() => QueueDashboardModule.forRoot({ path: '/queues' })).toThrow(/^guards must be/);
  });

  it('with guards, answers through the proxy only what the guard lets in', async () => {
    ({ app } = await start({ guards: [new CookieGuard()] }));
    proxy = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(await app.getUrl()).port) });
    const via = `http://127.0.0.1:${proxy.port}/queues`;
    expect((await fetch(via)).status).toBe(403);
    expect((await fetch(`${via}/snapshot`)).status).toBe(403);
    expect((await fetch(via, { headers: { cookie: 'session=operator' } })).status).toBe(200);
  });

  it('with localOnly, is open through such a proxy: which is why localOnly is refused in production', async () => {
    ({ app } = await start({ localOnly: true }));
    proxy = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(await app.getUrl()).port) });
    const via = `http://127.0.0.1:${proxy.port}/queues`;
    expect((await fetch(via)).status).toBe(200);
    // a proxy that says it forwarded is refused
    expect((await fetch(via, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
    expect((await fetch(via, { headers: { via: '1.1 nginx' } })).status).toBe(403);
    const env = process.env.NODE_ENV;
    // defined outside production, started in it (an env file loaded after the app module was imported): refused too
    @Module({
      imports: [
        QueueModule.forRoot({ connectionString: testUrl(), schema, supervise: false }),
        QueueDashboardModule.forRoot({ localOnly: true }),
      ],
    })
    class LateProduction {}
    process.env.NODE_ENV = 'production';
    try {
      expect(() => QueueDashboardModule.forRoot({ localOnly: true })).toThrow(/^localOnly must be absent when NODE_ENV is production/);
      const late = await NestFactory.create(LateProduction, { logger: false, abortOnError: false });
      try {
        await expect(late.init()).rejects.toThrow(/^localOnly must be absent when NODE_ENV is production/);
      } finally {
        await late.close();
      }
    } finally {
      process.env.NODE_ENV = env;
    }
  });
});

describe('a page on another site, in an operator’s browser', () => {
  it('reads nothing of the dashboard and changes no job: 403 before the guard, with the cookie or without', async () => {
    const { app, port } = await start({ guards: [new CookieGuard()] });
    try {
      const queue = app.get(QueueService);
      await queue.createQueue('sec.expose');
      const id = (await queue.send('sec.expose', { secret: 's3' }))!;
      const base = `http://127.0.0.1:${port}`;
      const cross = { cookie: 'session=operator', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
      for (const [path, method] of [
        ['/queues', 'GET'],
        ['/queues/snapshot', 'GET'],
        [`/queues/jobs/${id}`, 'GET'],
        [`/api/queue/jobs/${id}`, 'GET'],
        [`/api/queue/jobs/${id}`, 'DELETE'],
        ['/api/queue/queues/sec.expose/pause', 'POST'],
      ] as const) {
        const res = await fetch(`${base}${path}`, { method, headers: cross });
        const text = await res.text();
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 403 });
        expect(text).not.toContain('s3');
      }
      // a form posted from elsewhere (no Sec-Fetch-Site in an older browser, its Origin only)
      const form = await fetch(`${base}/api/queue/enqueue`, {
        method: 'POST',
        headers: { cookie: 'session=operator', origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'queue=sec.expose',
      });
      expect(form.status).toBe(403);
      expect(await queue.getJobById('sec.expose', id)).not.toBeNull();
      expect((await queue.getQueue('sec.expose', { force: true }))!).toMatchObject({ paused: false, queuedCount: 1 });
      // the operator's own page, and curl, pass
      expect(
        (await fetch(`${base}/api/queue/jobs/${id}`, { headers: { cookie: 'session=operator', 'sec-fetch-site': 'same-origin' } })).status,
      ).toBe(200);
      expect((await fetch(`${base}/queues/snapshot`, { headers: { cookie: 'session=operator' } })).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
