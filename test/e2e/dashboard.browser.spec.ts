// The dashboard in a real browser (Chromium as test/helpers/browser.ts finds it, driven by playwright-core): the
// empty install shows every empty state, the page follows jobs as they flow without a reload, a job's error that is
// markup stays text and runs nothing, and a database that goes away is said and recovered from. No console error
// all along.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Browser, Page } from 'playwright-core';
import { QueueModule, QueueService, type Job } from 'nestjs-pgqueue';
import { QueueDashboardModule } from 'nestjs-pgqueue/dashboard';
import { launchBrowser } from '../helpers/browser.js';
import { dropSchema, testPool, testUrl, uniqueSchema } from '../helpers/db.js';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** The page's document as the functions that run in the browser use it (the project compiles without the DOM's types). */
declare const document: {
  getElementById(id: string): { textContent: string | null } | null;
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
};

/** Where the screenshots go: PGQUEUE_SCREENSHOTS, else a folder of the system's temporary directory. */
const SHOTS = process.env.PGQUEUE_SCREENSHOTS ?? join(tmpdir(), 'pgqueue-screenshots');

const schema = uniqueSchema('e2e_browser');
const pool = testPool();
let proxy: TcpProxy;
let app: INestApplication;
let browser: Browser;
let page: Page;
let url: string;
const consoleErrors: string[] = [];
const dialogs: string[] = [];

/** The jobs' handler, started once the empty install has been looked at (a loop would make a worker). */
async function welcome(job: Job<{ error?: string }>) {
  if (job.data.error) throw new Error(job.data.error);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return 'sent';
}

beforeAll(async () => {
  const db = new URL(testUrl());
  proxy = await tcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
  db.hostname = '127.0.0.1';
  db.port = String(proxy.port);
  @Module({
    imports: [
      QueueModule.forRoot({ connectionString: db.toString(), schema, supervise: false, logger: { log() {}, warn() {}, error() {} } }),
      QueueDashboardModule.forRoot({ localOnly: true }),
    ],
  })
  class App {}
  app = await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/queues`;
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await proxy?.close();
  await dropSchema(pool, schema);
  await pool.end();
});

describe('the dashboard in a browser', () => {
  it('an empty install shows every section with its empty state', async () => {
    await page.goto(url);
    await page.waitForFunction(() => document.getElementById('connection')?.textContent === 'live', undefined, { timeout: 10_000 });
    const text = (await page.textContent('body'))!;
    for (const empty of [
      'No jobs yet',
      'No workers running',
      'Waiting for jobs…',
      'Nothing is running right now',
      'Nothing here',
      'No schedules',
    ])
      expect(text).toContain(empty);
    await page.screenshot({ path: join(SHOTS, 'dashboard-empty.png'), fullPage: true });
  });

  it('follows jobs as they flow, without a reload', async () => {
    const queue = app.get(QueueService);
    await queue.createQueue('browser.signup', { retryLimit: 0 });
    await queue.work('browser.signup', { concurrency: 4, pollingIntervalSeconds: 0.1 }, welcome);
    const before = await page.textContent('#tiles');
    const sending = setInterval(() => void queue.send('browser.signup', {}).catch(() => undefined), 50);
    try {
      // within 2 s of the first jobs: the tiles, the throughput chart and the feed have changed on the same page
      await page.waitForFunction((t) => document.getElementById('tiles')?.textContent !== t, before, { timeout: 2000 });
      await page.waitForSelector('#throughput rect', { timeout: 2000 });
      await page.waitForSelector('#feed li.completed', { timeout: 2000 });
      // the depth chart grows a point a second from the stream's later events, which carry only the new point
      const points = await page.evaluate(() => document.querySelector('#queues polyline')?.getAttribute('points')?.split(' ').length ?? 0);
      await page.waitForFunction(
        (n) => (document.querySelector('#queues polyline')?.getAttribute('points')?.split(' ').length ?? 0) >= n + 2,
        points,
        { timeout: 5000 },
      );
    } finally {
      clearInterval(sending);
    }
  });

  it('shows an error that is markup as text, and runs none of it', async () => {
    const queue = app.get(QueueService);
    await queue.send('browser.signup', { error: '<img src=x onerror=alert(1)>' });
    await page.waitForFunction(
      () => document.getElementById('problems')?.textContent?.includes('<img src=x onerror=alert(1)>'),
      undefined,
      {
        timeout: 10_000,
      },
    );
    expect(await page.$$('#problems img, #feed img')).toHaveLength(0);
    expect(dialogs).toEqual([]);
    // the picture README shows: jobs flowed, one failed
    await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
  });

  it('a problem links to its job view, which shows the error as text and why nothing runs it', async () => {
    const href = await page.getAttribute('#problems a.job', 'href');
    expect(href).toMatch(/\/jobs\/\d+$/);
    const view = await browser.newPage();
    view.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    try {
      await view.goto(new URL(href!, url).toString());
      expect(await view.textContent('h2.job-title')).toContain('failed');
      expect(await view.textContent('p.error')).toContain('<img src=x onerror=alert(1)>');
      expect(await view.$$('img')).toHaveLength(0);
      expect(dialogs).toEqual([]);
      await view.screenshot({ path: join(SHOTS, 'dashboard-job.png'), fullPage: true });
    } finally {
      await view.close();
    }
  });

  it('says so when the database goes away, and recovers when it returns', async () => {
    await proxy.cut();
    await page.waitForFunction(() => document.getElementById('alerts')?.textContent?.includes('The database cannot be read'), undefined, {
      timeout: 15_000,
    });
    await page.screenshot({ path: join(SHOTS, 'dashboard-database-away.png'), fullPage: true });
    // a job view cannot be read either: it answers 503 and says so
    const jobView = await fetch(`${url}/jobs/1`);
    expect(jobView.status).toBe(503);
    expect(await jobView.text()).toContain('The database cannot be read');
    await proxy.restore();
    await page.waitForFunction(() => !document.getElementById('alerts')?.textContent?.includes('The database cannot be read'), undefined, {
      timeout: 30_000,
    });
    expect(consoleErrors).toEqual([]);
  }, 60_000);
});
