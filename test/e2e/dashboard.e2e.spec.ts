// The dashboard mounted in a Nest app over HTTP, on Express and on Fastify: the page and its empty states, its assets and their size,
// the security headers, the live stream, a job's error shown as text, and who may see it.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Injectable, Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { DashboardHost, QueueDashboardModule, isLocalHost, isLoopback } from 'nestjs-pgqueue/dashboard';
import { dropSchema, testPool, testUrl, uniqueSchema, until } from '../helpers/db.js';

const schema = uniqueSchema('e2e_dash');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, `${schema}_express`);
  await dropSchema(pool, `${schema}_fastify`);
  await pool.end();
});

@Injectable()
class Mailer {
  @QueueHandler('dash.mail', { retryLimit: 0, pollingIntervalSeconds: 0.1 })
  send(job: Job<{ html: string }>) {
    throw new Error(job.data.html);
  }
}

/** Allows a request that carries the header `x-admin: yes`. */
class AdminHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-admin'] === 'yes';
  }
}

type Platform = 'express' | 'fastify';

async function start(
  platform: Platform,
  dashboard: Parameters<typeof QueueDashboardModule.forRoot>[0],
  providers: unknown[] = [],
): Promise<{ app: INestApplication; url: string }> {
  @Module({
    // a schema per platform: each one's first test looks at an empty install
    imports: [
      QueueModule.forRoot({ connectionString: testUrl(), schema: `${schema}_${platform}`, supervise: false }),
      QueueDashboardModule.forRoot(dashboard),
    ],
    providers: providers as never[],
  })
  class App {}
  const app =
    platform === 'fastify'
      ? await NestFactory.create(App, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

/** The status of a GET of `url` sent with `host` as its Host header (fetch does not let a caller set it). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
      .on('error', reject);
  });
}

/** The first `data:` event of an SSE stream, within a deadline. */
async function firstEvent(url: string): Promise<{ status: number; type: string | null; data: any }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  try {
    const res = await fetch(url, { signal: controller.signal });
    const reader = res.body!.getReader();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before an event: ${text}`);
      text += new TextDecoder().decode(value);
      const line = text.split('\n').find((l) => l.startsWith('data: '));
      if (line) return { status: res.status, type: res.headers.get('content-type'), data: JSON.parse(line.slice(6)) };
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

describe.each(['express', 'fastify'] as const)('QueueDashboardModule on %s', (platform) => {
  it('serves the page with every section and its empty state, its assets, and the security headers', async () => {
    const { app, url } = await start(platform, {});
    try {
      const res = await fetch(`${url}/queues`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const html = await res.text();
      const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      expect(html).toContain(`<a href="/queues">pgqueue</a> <span class="version">v${version}</span> <span class="badge">read-only</span>`);
      for (const text of [
        'Throughput · finished jobs per second, last two minutes',
        'Queues · depth over the last two minutes',
        'No jobs yet',
        'Workers · heartbeats and leases',
        'No workers running',
        'Live job feed',
        'Waiting for jobs…',
        'Running jobs · each one holds a lease that its worker keeps extending',
        'Nothing is running right now',
        'Problems',
        'Nothing here',
        'Periodic schedules',
        'No schedules',
        'How it works',
        `${schema}_${platform}.jobs`,
      ])
        expect(html).toContain(text);
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(html).not.toMatch(/\sstyle=/);
      let total = Buffer.byteLength(html);
      for (const [asset, type] of [
        ['app.js', 'text/javascript'],
        ['render.js', 'text/javascript'],
        ['app.css', 'text/css'],
      ]) {
        const a = await fetch(`${url}/queues/${asset}`);
        expect(a.status).toBe(200);
        expect(a.headers.get('content-type')).toContain(type);
        expect(a.headers.get('x-frame-options')).toBe('DENY');
        total += Buffer.byteLength(await a.text());
      }
      expect(total).toBeLessThan(100 * 1024);
      // read-only: no route takes a write
      expect((await fetch(`${url}/queues`, { method: 'POST' })).status).toBe(404);
    } finally {
      await app.close();
    }
  });

  it('streams snapshots to the page, and shows a job error as text, never as markup', async () => {
    const { app, url } = await start(platform, {}, [Mailer]);
    try {
      const queue = app.get(QueueService);
      const id = (await queue.send('dash.mail', { html: '<img src=x onerror=alert(1)>' }))!;
      await until(async () => (await queue.getJobById('dash.mail', id))!.state === 'failed', 'the job failed');
      const event = await firstEvent(`${url}/queues/events`);
      expect(event.status).toBe(200);
      expect(event.type).toContain('text/event-stream');
      expect(event.data.tiles).toBeDefined();
      const html = await until(async () => {
        const page = await (await fetch(`${url}/queues`)).text();
        return page.includes('onerror') ? page : null;
      }, 'the failure on the page');
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
      expect(html).not.toContain('<img src=x');
      const snapshot = (await (await fetch(`${url}/queues/snapshot`)).json()) as any;
      expect(snapshot.problems[0]).toMatchObject({ id, queue: 'dash.mail', task: 'Mailer.send' });
    } finally {
      await app.close();
    }
  });

  it('a job view says why the job waits, links there from the lists, and shows data only as redact allows', async () => {
    const redact = (job: { data: unknown }) => ({ data: { ...(job.data as object), token: '[hidden]' } });
    const { app, url } = await start(platform, { path: '/ops/queues', redact }, [Mailer]);
    try {
      const queue = app.get(QueueService);
      await queue.createQueue('dash.later');
      const id = (await queue.sendAfter('dash.later', { to: 'a@b.c', token: 'tok-secret' }, {}, new Date(Date.now() + 3_600_000)))!;
      const failed = (await queue.send('dash.mail', { html: '<b>x</b>' }))!;
      await until(async () => (await queue.getJobById('dash.mail', failed))!.state === 'failed', 'the job failed');
      const res = await fetch(`${url}/ops/queues/jobs/${id}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      const html = await res.text();
      expect(html).toContain(`Job ${id}`);
      expect(html).toContain('Why it is not running');
      expect(html).toContain('Deferred until');
      expect(html).toContain('No live worker works its queue.');
      expect(html).toContain('[hidden]');
      expect(html).not.toContain('tok-secret');
      expect(html).toContain('href="/ops/queues/app.css"');
      // the failed job is linked from the problems, and its view shows its error as text
      const page = await until(async () => {
        const text = await (await fetch(`${url}/ops/queues`)).text();
        return text.includes(`href="/ops/queues/jobs/${failed}"`) ? text : null;
      }, 'the link to the failed job');
      expect(page).toContain(`<a class="job" href="/ops/queues/jobs/${failed}">${failed}</a>`);
      const failedView = await (await fetch(`${url}/ops/queues/jobs/${failed}`)).text();
      expect(failedView).toContain('&lt;b&gt;x&lt;/b&gt;');
      expect(failedView).not.toContain('<b>x</b>');
      const missing = await fetch(`${url}/ops/queues/jobs/999999999`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-frame-options')).toBe('DENY');
      expect(await missing.text()).toContain('No job 999999999');
      expect((await fetch(`${url}/ops/queues/jobs/abc`)).status).toBe(404);
      // the guard covers the job view too
      expect((await fetch(`${url}/ops/queues/jobs/${id}`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
    } finally {
      await app.close();
    }
  });

  it('closes while a page is open: the app’s shutdown ends the event stream instead of waiting for it', async () => {
    const { app, url } = await start(platform, {});
    const res = await fetch(`${url}/queues/events`);
    expect(res.status).toBe(200);
    const reading = res.body!.getReader();
    await reading.read();
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      app.close().then(() => 'closed'),
      new Promise((resolve) => (timer = setTimeout(() => resolve('still open after 10 s'), 10_000))),
    ]);
    clearTimeout(timer);
    expect(closed).toBe('closed');
  });

  it('fifty open pages cost the database what one does: one sample a second', async () => {
    const { app, url } = await start(platform, {});
    const controller = new AbortController();
    try {
      const host = app.get(DashboardHost);
      // when each sample starts: a sample's first step is its connect(), and the sampler starts with the first page
      const starts: number[] = [];
      const connect = host.source.connect.bind(host.source);
      host.source.connect = () => {
        starts.push(performance.now());
        return connect();
      };
      const streams = await Promise.all(Array.from({ length: 50 }, () => fetch(`${url}/queues/events`, { signal: controller.signal })));
      expect(streams.every((r) => r.status === 200)).toBe(true);
      await until(() => host.sampler.samples >= 5, 'five samples');
      // one sample a second (SAMPLE_INTERVAL_MS), not one per viewer: the sampler times each sample from the start of
      // the one before (a slow sample shortens the wait after it), so samples start at least a second apart, less
      // 50 ms for a timer that fires a millisecond early, whole-millisecond clocks and the steps before connect()
      const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
      expect(gaps.length).toBeGreaterThanOrEqual(4);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000 - 50);
    } finally {
      controller.abort();
      await app.close();
    }
  });

  it('with no guard answers this host only, not a request through a proxy; a given guard decides instead', async () => {
    const open = await start(platform, { path: '/ops/queues' });
    try {
      expect((await fetch(`${open.url}/ops/queues`)).status).toBe(200);
      expect((await fetch(`${open.url}/ops/queues`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
      expect((await fetch(`${open.url}/ops/queues/events`, { headers: { forwarded: 'for=203.0.113.9' } })).status).toBe(403);
      // a page elsewhere whose name was rebound to 127.0.0.1 sends its own name as Host
      expect(await statusWithHost(`${open.url}/ops/queues`, 'evil.example')).toBe(403);
      expect(await statusWithHost(`${open.url}/ops/queues`, 'localhost:8080')).toBe(200);
    } finally {
      await open.app.close();
    }
    const guarded = await start(platform, { guards: [new AdminHeaderGuard()] });
    try {
      const refused = await fetch(`${guarded.url}/queues`);
      expect(refused.status).toBe(403);
      // the guard's refusal carries the security headers too
      expect(refused.headers.get('x-frame-options')).toBe('DENY');
      expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect((await fetch(`${guarded.url}/queues/snapshot`)).status).toBe(403);
      expect((await fetch(`${guarded.url}/queues`, { headers: { 'x-admin': 'yes' } })).status).toBe(200);
    } finally {
      await guarded.app.close();
    }
  });
});

describe('the dashboard’s options', () => {
  it('loopback is 127/8 and ::1, mapped or not; a bad path is refused naming it', () => {
    for (const a of ['127.0.0.1', '127.4.5.6', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '1270.0.0.1', undefined, '']) expect(isLoopback(a)).toBe(false);
    for (const h of ['localhost', 'localhost:3000', '127.0.0.1:80', '[::1]:3000', '[::1]']) expect(isLocalHost(h)).toBe(true);
    for (const h of ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', '[::2]:80', undefined])
      expect(isLocalHost(h)).toBe(false);
    expect(() => QueueDashboardModule.forRoot({ path: 'queues' })).toThrow('path');
    expect(() => QueueDashboardModule.forRoot({ path: '/a b' })).toThrow('"/a b"');
    expect(() => QueueDashboardModule.forRoot({ redact: ['token'] as never })).toThrow(/redact.*a function/);
  });
});
