// The queue pages and the search in a real browser (Chromium as test/helpers/browser.ts finds it), on Express and on
// Fastify: from the main page to a queue's page by its link, its charts drawn from a backdated stats series, its
// failed jobs page by page, a search by key that goes straight to the job view. Markup in a job's error and key stays
// text and runs nothing; no console error all along. The Express run saves the screenshot README shows.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { Browser, Page } from 'playwright-core';
import { QueueModule, QueueService } from 'nestjs-pgqueue';
import { QueueDashboardModule } from 'nestjs-pgqueue/dashboard';
import { launchBrowser } from '../helpers/browser.js';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

/** The page's window as the functions that run in the browser use it (the project compiles without the DOM's types). */
declare const window: { __pwned?: number };

const SHOTS = process.env.PGQUEUE_SCREENSHOTS ?? join(tmpdir(), 'pgqueue-screenshots');
const schema = uniqueSchema('e2e_browser_q');
const pool = testPool();
let browser: Browser;
const XSS = '<img src=x onerror="window.__pwned=1">';

beforeAll(async () => {
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await dropSchema(pool, `${schema}_express`);
  await dropSchema(pool, `${schema}_fastify`);
  await pool.end();
});

describe.each(['express', 'fastify'] as const)('the queue pages in a browser on %s', (platform) => {
  let app: INestApplication;
  let url: string;
  let page: Page;
  const consoleErrors: string[] = [];
  const s = `${schema}_${platform}`;

  beforeAll(async () => {
    @Module({
      imports: [
        QueueModule.forRoot({
          connectionString: testUrl(),
          schema: s,
          supervise: false,
          persistQueueStats: true,
          logger: { log() {}, warn() {}, error() {} },
        }),
        QueueDashboardModule.forRoot({ localOnly: true }),
      ],
    })
    class App {}
    app =
      platform === 'fastify'
        ? await NestFactory.create(App, new FastifyAdapter(), { logger: false })
        : await NestFactory.create(App, { logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/queues`;
    page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.on('dialog', (d) => {
      consoleErrors.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    const queue = app.get(QueueService);
    await queue.createQueue('shop.orders', { retryLimit: 2, retryDelay: 5 });
    // 120 failed jobs (two pages and a bit), each with a key, the newest with markup for an error and a key
    await queue.insert(
      'shop.orders',
      Array.from({ length: 120 }, (_, i) => ({ data: { order: i }, singletonKey: i === 119 ? XSS : `order-${i}` })),
    );
    await pool.query(
      `UPDATE "${s}".jobs SET state = 'failed', started_on = now() - interval '2 seconds', completed_on = now(), keep_until = 'infinity',
         last_error = jsonb_build_object('error', jsonb_build_object('name', 'Error', 'message', $1::text), 'on', now(), 'attempt', 1)
       WHERE queue = 'shop.orders'`,
      [XSS],
    );
    await queue.insert('shop.orders', [{ data: { order: 'waiting' } }]);
    // an hour of stats: a snapshot a minute, completions rising from 10 to 69 a minute
    await pool.query(
      `INSERT INTO "${s}".queue_stats (queue, captured_on, queued_count, created_delta, completed_delta, failed_delta, delta_seconds, delta_on,
         wait_bins, run_bins)
       SELECT 'shop.orders', date_trunc('minute', now()) - m * interval '1 minute' + interval '30 seconds', 1, 70 - m, 70 - m, m % 3, 60,
         date_trunc('minute', now()) - m * interval '1 minute' + interval '20 seconds',
         array_fill(0, ARRAY[10]) || (70 - m) || array_fill(0, ARRAY[37]), array_fill(0, ARRAY[20]) || (70 - m) || array_fill(0, ARRAY[27])
       FROM generate_series(1, 60) m`,
    );
    await queue.monitor({ force: true });
  }, 60_000);

  afterAll(async () => {
    await page?.close();
    await app?.close();
  });

  it("goes from the main page to a queue's page, whose charts are drawn and whose jobs page by state", async () => {
    await page.goto(url);
    await page.click('a.queue:text("shop.orders")');
    await page.waitForSelector('h2.queue-title');
    expect(await page.textContent('h2.queue-title')).toBe('Queue shop.orders');
    // three charts, each with its lines
    expect(await page.$$eval('figure.chart', (els) => els.length)).toBe(3);
    expect(await page.getAttribute('polyline[data-line="completed"]', 'points')).toMatch(/^[\d.]+,[\d.]+( [\d.]+,[\d.]+){50,}$/);
    expect(await page.textContent('figure.chart')).toContain('peak 69/min');
    await page.click('a.state-filter:text("failed")');
    await page.waitForSelector('a.state-filter.current:text("failed")');
    const first = await page.$$eval('table.browser tbody tr', (rows) => rows.map((r) => r.getAttribute('data-id')));
    expect(first).toHaveLength(50);
    // markup in an error and a key is text
    expect(await page.textContent('table.browser tbody')).toContain(XSS);
    expect(await page.$$('table.browser img')).toHaveLength(0);
    if (platform === 'express') await page.screenshot({ path: join(SHOTS, 'dashboard-queue.png'), fullPage: true });
    await page.click('a.next');
    await page.waitForSelector('a:text("← Newest")');
    const second = await page.$$eval('table.browser tbody tr', (rows) => rows.map((r) => r.getAttribute('data-id')));
    expect(second).toHaveLength(50);
    expect(BigInt(String(second[0]))).toBeLessThan(BigInt(String(first.at(-1))));
    await page.click('a.next');
    await page.waitForSelector('text=No older jobs.');
    expect(await page.$$eval('table.browser tbody tr', (rows) => rows.length)).toBe(20);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
  });

  it('a job view shows every attempt with its error, and the flow the job belongs to', async () => {
    const queue = app.get(QueueService);
    await queue.createQueue('shop.pay', { retryLimit: 2 });
    await queue.createQueue('shop.ship');
    const ids = await queue.flow([
      { name: 'shop.pay', ref: 'pay', data: {} },
      { name: 'shop.ship', ref: 'ship', data: {}, dependsOn: ['pay'] },
    ]);
    for (let attempt = 0; attempt < 3; attempt++) {
      const [job] = await queue.fetch('shop.pay');
      expect(job!.id).toBe(ids.pay);
      await queue.fail('shop.pay', ids.pay!, new Error(`<i>declined ${attempt}</i>`));
    }
    await page.goto(`${url}/jobs/${ids.pay}`);
    await page.waitForSelector('table.attempts');
    const rows = await page.$$eval('table.attempts tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(rows).toHaveLength(3);
    rows.forEach((row, i) => expect(row).toContain(`<i>declined ${i}</i>`));
    expect(await page.$$('table.attempts i')).toHaveLength(0);
    // each stack opens under its attempt
    await page.click('table.attempts tr[data-attempt="3"] summary');
    expect(await page.textContent('table.attempts tr[data-attempt="3"] pre.stack')).toContain('declined 2');
    expect(await page.textContent('ul.links[data-kind="child"]')).toContain(ids.ship!);
    if (platform === 'express') await page.screenshot({ path: join(SHOTS, 'dashboard-attempts.png'), fullPage: true });
    await page.click(`ul.links[data-kind="child"] a.job`);
    await page.waitForSelector('ul.links[data-kind="parent"]');
    expect(await page.textContent('ul.links[data-kind="parent"]')).toContain('failed');
  });

  it("searches by key from the queue's page and lands on the job's view", async () => {
    await page.goto(`${url}/queues/shop.orders`);
    await page.fill('form.search input[name="q"]', 'order-7');
    await page.click('form.search button');
    await page.waitForSelector('h2.job-title');
    expect(await page.textContent('table.fields')).toContain('order-7');
    // from the main page, markup searched for is shown as text
    await page.goto(url);
    await page.fill('form.search input[name="q"]', '<b>nobody</b>');
    await page.click('form.search button');
    await page.waitForSelector('text=No job has this id or key.');
    expect(await page.textContent('h2')).toContain('<b>nobody</b>');
    expect(consoleErrors).toEqual([]);
  });
});
