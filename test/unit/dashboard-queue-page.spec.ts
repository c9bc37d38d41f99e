// The queue page's pure parts: its query string and the search's, the charts' values from a stats series, and their
// drawing (lines broken where nothing was measured, text escaped).
import { parseQueuePageQuery } from '../../lib/core/dashboard/queue-view.js';
import { parseSearchQuery, SEARCH_MAX_CHARS } from '../../lib/core/dashboard/search.js';
import { InvalidOptionError } from '../../lib/core/errors.js';
import type { QueueStats } from '../../lib/core/types.js';
import { chartsOf, renderChart, segmentsOf } from '../../lib/dashboard/queue-charts.js';
import { queuePath } from '../../lib/dashboard/queue-page.js';
import { pathOf } from '../../lib/nest/mount.js';

const point = (minute: number, o: Partial<QueueStats>): QueueStats => ({
  name: 'q',
  queuedCount: 0,
  deferredCount: 0,
  blockedCount: 0,
  readyCount: 0,
  activeCount: 0,
  failedCount: 0,
  totalCount: 0,
  readyOldestSeconds: 0,
  createdDelta: null,
  completedDelta: null,
  failedDelta: null,
  deltaSeconds: null,
  deltaOn: null,
  waitBins: null,
  runBins: null,
  capturedOn: new Date(Date.UTC(2026, 0, 1, 0, minute)),
  ...o,
});

const refusal = (fn: () => unknown): InvalidOptionError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidOptionError) return err;
    throw err;
  }
  throw new Error('no refusal');
};

describe("the queue page's query string", () => {
  it('reads state, after and range, each with its default', () => {
    expect(parseQueuePageQuery({})).toEqual({ state: null, after: null, range: 'hour' });
    expect(parseQueuePageQuery({ state: 'failed', after: '42', range: 'day' })).toEqual({ state: 'failed', after: '42', range: 'day' });
    expect(parseQueuePageQuery({ state: 'all', after: '' })).toEqual({ state: null, after: null, range: 'hour' });
  });

  it('names each bad parameter, what it accepts and what it got', () => {
    expect(refusal(() => parseQueuePageQuery({ state: 'done' })).message).toMatch(
      /state.*created, retry, active, completed, cancelled, failed.*done/s,
    );
    expect(refusal(() => parseQueuePageQuery({ after: '0' })).message).toMatch(/after/);
    expect(refusal(() => parseQueuePageQuery({ after: '99999999999999999999' })).message).toMatch(/after/);
    expect(refusal(() => parseQueuePageQuery({ range: 'week' })).message).toMatch(/range.*hour, day.*week/s);
    expect(refusal(() => parseQueuePageQuery({ state: ['failed', 'created'] })).message).toMatch(/state/);
    expect(refusal(() => parseQueuePageQuery({ sort: 'asc' })).message).toMatch(/sort/);
  });
});

describe("the search's query string", () => {
  it('trims the text; the queue is optional', () => {
    expect(parseSearchQuery({ q: '  order-42 ' })).toEqual({ q: 'order-42', queue: null });
    expect(parseSearchQuery({ q: '7', queue: 'mail' })).toEqual({ q: '7', queue: 'mail' });
    expect(parseSearchQuery({ q: '7', queue: '' })).toEqual({ q: '7', queue: null });
  });

  it('refuses no text, too much text, and unknown parameters, naming them', () => {
    expect(refusal(() => parseSearchQuery({})).message).toMatch(/\bq\b/);
    expect(refusal(() => parseSearchQuery({ q: '   ' })).message).toMatch(/\bq\b/);
    expect(refusal(() => parseSearchQuery({ q: 'x'.repeat(SEARCH_MAX_CHARS + 1) })).message).toMatch(/1–1000 characters/);
    expect(refusal(() => parseSearchQuery({ q: 'x', page: '2' })).message).toMatch(/page/);
    expect(refusal(() => parseSearchQuery({ q: ['a', 'b'] })).message).toMatch(/\bq\b/);
  });
});

describe("the queue page's charts", () => {
  it('throughput per minute from each point’s deltas over its seconds; null where no window was measured', () => {
    const [throughput] = chartsOf([
      point(0, { createdDelta: 30, completedDelta: 60, failedDelta: 3, deltaSeconds: 30 }),
      point(1, {}),
      point(2, { createdDelta: 0, completedDelta: 120, failedDelta: 0, deltaSeconds: 120 }),
    ]);
    expect(throughput!.lines.map((l) => [l.label, l.values])).toEqual([
      ['created', [60, null, 0]],
      ['completed', [120, null, 60]],
      ['failed', [6, null, 0]],
    ]);
  });

  it('wait and run p50 / p95 from the percentiles getQueueStats read', () => {
    const [, wait, run] = chartsOf([
      point(0, {
        percentiles: [
          { p: 50, waitSeconds: 0.2, runSeconds: 1.5 },
          { p: 95, waitSeconds: 0.9, runSeconds: null },
        ],
      }),
    ]);
    expect(wait!.lines.map((l) => l.values)).toEqual([[0.2], [0.9]]);
    expect(run!.lines.map((l) => l.values)).toEqual([[1.5], [null]]);
  });

  it('draws a line per run of measured points, scaled to the peak, across the range', () => {
    const at = [0, 1000, 2000, 3000];
    expect(segmentsOf({ label: 'x', values: [10, null, 5, 0] }, at, 0, 3000, 10)).toEqual(['0.0,0.0', '400.0,70.0 600.0,140.0']);
    const svg = renderChart({ title: 'Throughput', unit: 'per minute', at: [0], lines: [{ label: '<b>', values: [3] }] }, 0, 1000);
    // a single point is drawn as a dot, and a label is text
    expect(svg).toContain('points="0.0,0.0 0.0,0.0"');
    expect(svg).toContain('data-line="&lt;b&gt;"');
    expect(svg).toContain('peak 3.0/min');
    expect(renderChart({ title: 'Run time', unit: 'seconds', at: [0], lines: [{ label: 'p50', values: [null] }] }, 0, 1000)).toContain(
      'no data in this range',
    );
  });

  it('links a queue by its name, encoded', () => {
    expect(queuePath('/ops', 'mail/out:1', { state: 'failed', after: null })).toBe('/ops/queues/mail%2Fout%3A1?state=failed');
  });
});

describe("the base of the dashboard's links and redirects", () => {
  it('is the request path alone: no query, no trailing slash, no host, never two leading slashes', () => {
    expect(pathOf({ url: '/ops/queues/search?q=1' })).toBe('/ops/queues/search');
    expect(pathOf({ originalUrl: '/api/queues/', url: '/queues/' })).toBe('/api/queues');
    expect(pathOf({ url: 'http://evil.example/queues/search?q=1' })).toBe('/queues/search');
    expect(pathOf({ url: '//queues/search' })).toBe('/queues/search');
    expect(pathOf({ url: '/' })).toBe('');
  });
});
