// The dashboard mounted in a Nest app over HTTP, on Express and on Fastify: the page and its empty states, its assets and their size,
// the security headers, the live stream, a job's error shown as text, redact wherever a job's data or error shows, and
// who may see it: guards or localOnly, never another site's page, never more streams than the cap.
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { QueueHandler, QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { DashboardHost, MAX_EVENT_STREAMS, QueueDashboardModule, isLocalHost, isLoopback } from 'nestjs-pgqueue/dashboard';
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

/** The status of a GET of `url` sent with exactly `headers` (fetch sets Host and Sec-Fetch-Mode itself). */
function statusWith(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
      .on('error', reject);
  });
}

/** The status of a GET of `url` sent with `host` as its Host header. */
const statusWithHost = (url: string, host: string) => statusWith(url, { host });

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
    const { app, url } = await start(platform, { localOnly: true });
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
    const { app, url } = await start(platform, { localOnly: true }, [Mailer]);
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
    const { app, url } = await start(platform, { path: '/ops/queues', localOnly: true, redact }, [Mailer]);
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
    const { app, url } = await start(platform, { localOnly: true });
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
    const { app, url } = await start(platform, { localOnly: true });
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

  it('redact decides what the feed, the problems, the stream and the job view show of a failure', async () => {
    const redact = (job: { lastError: { message: string } | null }) => ({
      data: null,
      output: null,
      lastError: job.lastError && { name: 'Error', message: job.lastError.message.replace(/tok-\w+/g, '[token]') },
    });
    const { app, url } = await start(platform, { localOnly: true, redact }, [Mailer]);
    try {
      const queue = app.get(QueueService);
      const id = (await queue.send('dash.mail', { html: 'refused tok-secret1' }))!;
      await until(async () => (await queue.getJobById('dash.mail', id))!.state === 'failed', 'the job failed');
      const snapshot = await until(async () => {
        const s = (await (await fetch(`${url}/queues/snapshot`)).json()) as any;
        return s.problems.some((p: { id: string }) => p.id === id) &&
          s.feed.some((e: { id: string; kind: string }) => e.id === id && e.kind === 'failed')
          ? s
          : null;
      }, 'the failure in the problems and the feed');
      const text = JSON.stringify(snapshot);
      expect(text).not.toContain('tok-secret1');
      expect(snapshot.problems.find((p: { id: string }) => p.id === id).error).toBe('refused [token]');
      expect(snapshot.feed.find((e: { id: string; kind: string }) => e.id === id && e.kind === 'failed').message).toBe('refused [token]');
      const event = await firstEvent(`${url}/queues/events`);
      expect(JSON.stringify(event.data)).not.toContain('tok-secret1');
      expect(JSON.stringify(event.data)).toContain('refused [token]');
      const page = await (await fetch(`${url}/queues`)).text();
      expect(page).not.toContain('tok-secret1');
      const view = await (await fetch(`${url}/queues/jobs/${id}`)).text();
      expect(view).not.toContain('tok-secret1');
      expect(view).toContain('refused [token]');
    } finally {
      await app.close();
    }
  });

  it('refuses a request from another site’s page with 403, before the guard; its own page, an address typed and curl pass', async () => {
    const guard = { calls: 0, canActivate: () => ++guard.calls > 0 };
    const { app, url } = await start(platform, { guards: [guard] });
    try {
      const own = new URL(url).origin;
      for (const path of [
        '/queues',
        '/queues/snapshot',
        '/queues/events',
        '/queues/jobs/1',
        '/queues/app.js',
        '/queues/queues/q',
        '/queues/search?q=1',
      ])
        for (const headers of [
          { origin: 'https://evil.example' },
          { 'sec-fetch-site': 'cross-site' },
          { 'sec-fetch-site': 'same-site' },
          { origin: 'null' },
        ] as Record<string, string>[]) {
          const res = await fetch(`${url}${path}`, { headers });
          expect({ path, headers, status: res.status }).toEqual({ path, headers, status: 403 });
          // refused before any work, with the dashboard's headers
          expect(res.headers.get('x-frame-options')).toBe('DENY');
          expect(await res.json()).toMatchObject({ code: 'CROSS_ORIGIN' });
        }
      expect(guard.calls).toBe(0);
      for (const headers of [{}, { 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }, { origin: own }] as Record<
        string,
        string
      >[])
        expect((await fetch(`${url}/queues/snapshot`, { headers })).status).toBe(200);
      // a person following a link from another site (a chat, a redirect back from single sign-on) sees the page
      // (over node:http: fetch sends a Sec-Fetch-Mode of its own)
      const link = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
      expect(await statusWith(`${url}/queues`, link)).toBe(200);
      expect(await statusWith(`${url}/queues/jobs/999999999`, link)).toBe(404);
      // but not in another site's frame
      expect(await statusWith(`${url}/queues`, { ...link, 'sec-fetch-dest': 'iframe' })).toBe(403);
    } finally {
      await app.close();
    }
  });

  it('serves at most MAX_EVENT_STREAMS event streams at once', async () => {
    const { app, url } = await start(platform, { localOnly: true });
    const controllers: AbortController[] = [];
    try {
      const host = app.get(DashboardHost);
      const open = () => {
        const c = new AbortController();
        controllers.push(c);
        return fetch(`${url}/queues/events`, { signal: c.signal });
      };
      const streams = await Promise.all(Array.from({ length: MAX_EVENT_STREAMS }, open));
      expect(streams.every((r) => r.status === 200)).toBe(true);
      await until(() => host.streams.size === MAX_EVENT_STREAMS, 'every stream counted');
      const refused = await open();
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ code: 'TOO_MANY_STREAMS' });
      // one page closed: the next one is served
      controllers[0]!.abort();
      await until(() => host.streams.size === MAX_EVENT_STREAMS - 1, 'a stream ended');
      expect((await open()).status).toBe(200);
    } finally {
      for (const c of controllers) c.abort();
      await app.close();
    }
  });

  it('with localOnly answers this host only, not a request through a proxy; a given guard decides instead', async () => {
    const open = await start(platform, { path: '/ops/queues', localOnly: true });
    try {
      expect((await fetch(`${open.url}/ops/queues`)).status).toBe(200);
      expect((await fetch(`${open.url}/ops/queues`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
      expect((await fetch(`${open.url}/ops/queues/events`, { headers: { forwarded: 'for=203.0.113.9' } })).status).toBe(403);
      // every header by which a proxy says it forwarded the request
      for (const header of ['via', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip'])
        expect({ header, status: (await fetch(`${open.url}/ops/queues`, { headers: { [header]: 'x' } })).status }).toEqual({
          header,
          status: 403,
        });
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

describe('a page too slow to read its events', () => {
  it('is dropped once more than MAX_PENDING_EVENT_CHARS of events wait for it', async () => {
    // over a Unix socket, whose buffers fill sooner than a loopback TCP connection's (tcp_rmem allows 32 MB here); even
    // so this machine's kernel takes in some 15 MB, about 30 s of these events, before they wait in the process
    const socketPath = join(mkdtempSync(join(tmpdir(), 'pgqueue-sse-')), 'app.sock');
    @Module({
      imports: [
        QueueModule.forRoot({ connectionString: testUrl(), schema: `${schema}_express`, supervise: false, logJobFailures: false }),
        // a guard that lets all in: a Unix socket's client has no address for localOnly to check
        QueueDashboardModule.forRoot({ guards: [{ canActivate: () => true }] }),
      ],
    })
    class App {}
    const app = await NestFactory.create(App, { logger: false });
    await app.listen(socketPath);
    let client: net.Socket | undefined;
    try {
      const queue = app.get(QueueService);
      // 50 failures of 2,000 characters each: every event carries them in its feed and problems (~140 kB a second)
      await queue.createQueue('dash.slow', { retryLimit: 0 });
      await queue.insert(
        'dash.slow',
        Array.from({ length: 50 }, (_, i) => ({ data: { i } })),
      );
      await queue.work('dash.slow', { batchSize: 50, pollingIntervalSeconds: 0.1 }, () => {
        throw new Error('x'.repeat(2000));
      });
      const host = app.get(DashboardHost);
      client = await new Promise<net.Socket>((resolve, reject) => {
        const c = net.connect(socketPath, () => resolve(c)).once('error', reject);
      });
      // a page whose tab hangs: it asks for the stream and never reads a byte of it (the socket is paused)
      client.write('GET /queues/events HTTP/1.1\r\nHost: localhost\r\n\r\n');
      client.pause();
      const open = client;
      await until(() => host.streams.size === 1, 'the stream open');
      await until(() => host.streams.size === 0, 'the slow stream dropped', 100_000);
      // dropped for what waited, not closed by the client
      expect(open.destroyed).toBe(false);
      expect(host.sampler.samples).toBeGreaterThan(1);
    } finally {
      client?.destroy();
      await app.close();
    }
  }, 120_000);
});

describe('the dashboard’s options', () => {
  it('refuses to start without guards unless localOnly says so, and localOnly in production', () => {
    expect(() => QueueDashboardModule.forRoot()).toThrow(/^guards must be at least one guard/);
    expect(() => QueueDashboardModule.forRoot({ guards: [] })).toThrow(/^guards must be/);
    expect(() => QueueDashboardModule.forRoot({ localOnly: false })).toThrow(/^guards must be/);
    expect(() => QueueDashboardModule.forRoot({ localOnly: 'yes' as never })).toThrow(/^localOnly must be true or false/);
    expect(() => QueueDashboardModule.forRoot({ localOnly: true })).not.toThrow();
    expect(() => QueueDashboardModule.forRoot({ guards: [new AdminHeaderGuard()] })).not.toThrow();
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      expect(() => QueueDashboardModule.forRoot({ localOnly: true })).toThrow(/^localOnly must be absent when NODE_ENV is production/);
      expect(() => QueueDashboardModule.forRoot({ guards: [new AdminHeaderGuard()] })).not.toThrow();
    } finally {
      process.env.NODE_ENV = env;
    }
  });

  it('refuses an unknown option and an async redact, naming them', () => {
    expect(() => QueueDashboardModule.forRoot({ localOnly: true, prefix: '/ops' } as never)).toThrow(
      /^prefix must be absent: QueueDashboardModule.forRoot takes path, guards, localOnly, redact/,
    );
    expect(() => QueueDashboardModule.forRoot({ localOnly: true, redact: (async () => ({})) as never })).toThrow(
      /^redact must be a synchronous function/,
    );
  });

  it('loopback is 127/8 and ::1, mapped or not; a bad path is refused naming it', () => {
    for (const a of ['127.0.0.1', '127.4.5.6', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '1270.0.0.1', undefined, '']) expect(isLoopback(a)).toBe(false);
    for (const h of ['localhost', 'localhost:3000', '127.0.0.1:80', '[::1]:3000', '[::1]']) expect(isLocalHost(h)).toBe(true);
    for (const h of ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', '[::2]:80', undefined])
      expect(isLocalHost(h)).toBe(false);
    expect(() => QueueDashboardModule.forRoot({ path: 'queues', localOnly: true })).toThrow('path');
    expect(() => QueueDashboardModule.forRoot({ path: '/a b', localOnly: true })).toThrow('"/a b"');
    expect(() => QueueDashboardModule.forRoot({ localOnly: true, redact: ['token'] as never })).toThrow(/redact.*a synchronous function/);
  });
});
