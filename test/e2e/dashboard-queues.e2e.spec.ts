// The dashboard's queue pages and search over HTTP, on Express and on Fastify: a queue's settings, counts and charts
// (drawn from a backdated stats series whose values are known), its jobs page by page in a stable keyset order (10,000
// failed jobs, with newer ones arriving meanwhile), the search by id, singleton key and dedupe key, bad input named,
// and markup in every new field shown as text.
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { QueueModule, QueueService } from 'nestjs-pgqueue';
import { QueueDashboardModule } from 'nestjs-pgqueue/dashboard';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

const schema = uniqueSchema('e2e_dash_q');
const pool = testPool();
afterAll(async () => {
  await dropSchema(pool, `${schema}_express`);
  await dropSchema(pool, `${schema}_fastify`);
  await pool.end();
});

const XSS = '<img src=x onerror="window.__pwned=1">';

async function start(platform: 'express' | 'fastify'): Promise<{ app: INestApplication; url: string; queue: QueueService; s: string }> {
  const s = `${schema}_${platform}`;
  @Module({
    imports: [
      QueueModule.forRoot({ connectionString: testUrl(), schema: s, supervise: false, persistQueueStats: true }),
      // an error that names a secret is shown as [hidden], wherever a job's last error shows
      QueueDashboardModule.forRoot({
        localOnly: true,
        redact: (job) => ({
          data: job.data,
          // a failure's output holds its errors: the job view shows none of it
          output: job.lastError ? '[hidden output]' : job.output,
          ...(job.lastError?.message.includes('secret') ? { lastError: { name: 'Error', message: '[hidden]' } } : {}),
        }),
      }),
    ],
  })
  class App {}
  const app =
    platform === 'fastify'
      ? await NestFactory.create(App, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/queues`, queue: app.get(QueueService), s };
}

/** The ids a page of the job browser lists, in its order, and the link to the next page (null: the last page). */
function browsed(html: string): { ids: string[]; next: string | null } {
  const ids = [...html.matchAll(/<tr data-id="(\d+)">/g)].map((m) => m[1]!);
  const next = /<a class="next" rel="next" href="([^"]+)">/.exec(html)?.[1]?.replaceAll('&amp;', '&') ?? null;
  return { ids, next };
}

describe.each(['express', 'fastify'] as const)('the queue pages and search on %s', (platform) => {
  let app: INestApplication;
  let url: string;
  let queue: QueueService;
  let s: string;
  beforeAll(async () => {
    ({ app, url, queue, s } = await start(platform));
  }, 30_000);
  afterAll(() => app?.close());

  it('pages 10,000 failed jobs newest first in a stable keyset order, and shows their errors and keys as text', async () => {
    const name = 'dash/failed.1';
    await queue.createQueue(name, { retryLimit: 0 });
    await queue.insert(
      name,
      Array.from({ length: 10_000 }, (_, i) => ({ data: { i }, singletonKey: i === 0 ? XSS : undefined })),
    );
    // failed for good, with an error whose message is markup
    await pool.query(
      `UPDATE "${s}".jobs SET state = 'failed', started_on = now(), completed_on = now(), keep_until = 'infinity',
         last_error = jsonb_build_object('error', jsonb_build_object('name', 'Error', 'message', $2::text), 'on', now(), 'attempt', 1)
       WHERE queue = $1`,
      [name, XSS],
    );
    const stored = (
      await pool.query<{ id: string }>(`SELECT j.id::text AS id FROM "${s}".jobs j WHERE j.queue = $1 ORDER BY j.id DESC`, [name])
    ).rows.map((r) => r.id);
    const seen: string[] = [];
    let next: string | null = `${url}/queues/${encodeURIComponent(name)}?state=failed`;
    let pages = 0;
    while (next) {
      const res = await fetch(next.startsWith('http') ? next : new URL(next, url).toString());
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("form-action 'self'");
      const html = await res.text();
      if (pages === 0) {
        expect(html).toContain(`Queue ${name}`);
        expect(html).not.toContain(XSS);
        expect(html).toContain('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;');
      }
      const page = browsed(html);
      seen.push(...page.ids);
      next = page.next;
      // newer jobs fail while the operator pages: the pages after the first go on below the cursor, unmoved
      if (pages++ === 0) {
        const late = (await queue.send(name, { late: true }))!;
        await pool.query(`UPDATE "${s}".jobs SET state = 'failed', completed_on = now(), keep_until = 'infinity' WHERE id = $1`, [late]);
      }
    }
    expect(pages).toBe(200);
    expect(seen).toEqual(stored);
  }, 120_000);

  it('draws the charts from a backdated stats series whose values are known, and shows the settings and counts', async () => {
    const name = 'dash.charts';
    await queue.createQueue(name, { retryLimit: 4, retryDelay: 30, concurrencyLimit: 3 });
    // three snapshots in the last hour, each alone in its minute: 60-second windows of 120 completed, 60 created and
    // 6 failed, that is 120, 60 and 6 a minute
    await pool.query(
      `INSERT INTO "${s}".queue_stats (queue, captured_on, created_delta, completed_delta, failed_delta, delta_seconds, delta_on)
       SELECT $1, date_trunc('minute', now()) - m * interval '1 minute' + interval '30 seconds', 60, 120, 6, 60,
         date_trunc('minute', now()) - m * interval '1 minute' + interval '20 seconds'
       FROM unnest(ARRAY[50, 30, 10]) m`,
      [name],
    );
    await queue.monitor({ force: true });
    const html = await (await fetch(`${url}/queues/${name}`)).text();
    expect(html).toContain('Concurrency limit');
    expect(html).toMatch(/<th scope="row">Retries<\/th><td>4 · delay 30 s/);
    const line = (label: string) =>
      [...html.matchAll(new RegExp(`<polyline class="line\\d" data-line="${label}" points="([^"]+)"`, 'g'))].map((m) => m[1]!);
    // one polyline per run of measured points; the y of each point is 140 × (1 − value / peak)
    const ys = (label: string) =>
      line(label)
        .flatMap((p) => p.split(' '))
        .map((xy) => Number(xy.split(',')[1]));
    expect(ys('completed')).toEqual(expect.arrayContaining([0]));
    expect(new Set(ys('completed'))).toEqual(new Set([0]));
    expect(new Set(ys('created'))).toEqual(new Set([70]));
    expect(new Set(ys('failed'))).toEqual(new Set([133]));
    expect(html).toContain('peak 120/min');
    // the day's range has the same points, in buckets of 24 minutes
    const day = await (await fetch(`${url}/queues/${name}?range=day`)).text();
    expect(day).toContain('aria-current="page" href="/queues/queues/dash.charts?range=day"');
  });

  it('search: an id or a key held by one job goes to its view, a key held by several lists them, in one queue or all', async () => {
    await queue.createQueue('dash.search.a');
    await queue.createQueue('dash.search.b');
    const a = (await queue.send('dash.search.a', {}, { singletonKey: 'order-42' }))!;
    const b = (await queue.send('dash.search.b', {}, { singletonKey: 'order-42' }))!;
    const d = (await queue.send('dash.search.b', {}, { dedupeKey: 'mail-7' }))!;
    const go = (q: string, extra = '') => fetch(`${url}/search?q=${encodeURIComponent(q)}${extra}`, { redirect: 'manual' });
    for (const [q, id] of [
      [a, a],
      ['mail-7', d],
    ] as const) {
      const res = await go(q);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(`/queues/jobs/${id}`);
    }
    const both = await go('order-42');
    expect(both.status).toBe(200);
    const html = await both.text();
    expect(browsed(html).ids).toEqual([b, a]);
    expect(html).toContain('href="/queues/queues/dash.search.a"');
    const one = await go('order-42', '&queue=dash.search.b');
    expect(one.status).toBe(302);
    expect(one.headers.get('location')).toBe(`/queues/jobs/${b}`);
    // markup searched for is shown as text
    const none = await go('<b onmouseover="x()">nobody</b>');
    expect(none.status).toBe(200);
    const text = await none.text();
    expect(text).toContain('No job has this id or key.');
    expect(text).toContain('&lt;b onmouseover=&quot;x()&quot;&gt;nobody&lt;/b&gt;');
    expect(text).not.toContain('<b onmouseover');
  });

  it('shows a last error in the rows only as redact lets it be seen', async () => {
    await queue.createQueue('dash.redact', { retryLimit: 0 });
    const id = (await queue.send('dash.redact', {}))!;
    await queue.fetch('dash.redact');
    await queue.fail('dash.redact', id, new Error('token secret-123 refused'));
    for (const page of [`${url}/queues/dash.redact`, `${url}/search?q=${id}&queue=dash.redact`]) {
      const res = await fetch(page, { redirect: 'manual' });
      const html = res.status === 302 ? await (await fetch(new URL(res.headers.get('location')!, url))).text() : await res.text();
      expect(html).toContain('[hidden]');
      expect(html).not.toContain('secret-123');
    }
  });

  it('a text that is an id and a key lists both matches', async () => {
    await queue.createQueue('dash.ids');
    const holder = (await queue.send('dash.ids', {}))!;
    // a job whose singleton key is the id of another job
    const other = (await queue.send('dash.ids', {}, { singletonKey: holder }))!;
    const res = await fetch(`${url}/search?q=${holder}`, { redirect: 'manual' });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`<p class="by-id">Job <a class="job" href="/queues/jobs/${holder}">${holder}</a> of queue`);
    expect(browsed(html).ids).toEqual([other]);
  });

  it('says what is wrong: no such queue (404), a bad parameter (400, named), and the main page links each queue', async () => {
    expect((await fetch(`${url}/queues/no.such.queue`)).status).toBe(404);
    for (const [query, named] of [
      ['?state=done', 'state'],
      ['?after=abc', 'after'],
      ['?range=week', 'range'],
      ['?color=red', 'color'],
    ] as const) {
      const res = await fetch(`${url}/queues/dash.charts${query}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(named);
    }
    const empty = await fetch(`${url}/search?q=`);
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('q');
    expect((await fetch(`${url}/queues/dash.charts`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
    expect((await fetch(`${url}/search?q=1`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
    const main = await (await fetch(url)).text();
    expect(main).toContain('<a class="queue" href="/queues/queues/dash.charts">dash.charts</a>');
  });

  // last: its 200 more queues would leave the others' searches short of queues
  it('a search that could not look in every queue lists what it found and says so, never going straight to one job', async () => {
    const holder = (await queue.send('dash.charts', {}, { singletonKey: 'only-one' }))!;
    for (let i = 0; i < 200; i++) await queue.createQueue(`zz.${String(i).padStart(3, '0')}`);
    const res = await fetch(`${url}/search?q=only-one`, { redirect: 'manual' });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(browsed(html).ids).toEqual([holder]);
    expect(html).toMatch(/\d+ queues were not searched for it as a key/);
    // in its own queue, one match goes straight to it
    const own = await fetch(`${url}/search?q=only-one&queue=dash.charts`, { redirect: 'manual' });
    expect(own.status).toBe(302);
  }, 60_000);
});
