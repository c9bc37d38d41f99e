// The dashboard's HTML from a snapshot, without a server: escaping, the figures' formats, the empty states, and the
// running jobs' lease column.
import { emptySnapshot } from '../../lib/core/dashboard/sampler.js';
import type { DashboardSnapshot } from '../../lib/core/dashboard/model.js';
import { renderPage } from '../../lib/dashboard/page.js';
import { count, duration, esc, renderSection, SECTIONS } from '../../lib/dashboard/render.js';

const at = 1_800_000_000_000;

describe('dashboard rendering', () => {
  it('escapes every character markup could start with', () => {
    expect(esc(`<img src=x onerror="alert('1')">&`)).toBe('&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;');
    expect(esc(null)).toBe('');
    expect(esc(42)).toBe('42');
  });

  it('formats durations and counts for people', () => {
    expect([0.0123, 2.44, 42, 185, 7200, 200_000].map(duration)).toEqual(['12 ms', '2.4 s', '42 s', '3 min', '2.0 h', '2 d']);
    expect(duration(null)).toBe('–');
    expect(count(12345)).toBe('12,345');
    expect(count(1000, true)).toBe('1,000+');
  });

  it('an empty snapshot renders every empty state, and the page holds no inline script or style', () => {
    const html = renderPage({ ...emptySnapshot(), at }, '/queues', 'pgqueue');
    for (const text of [
      'No jobs yet',
      'No workers running',
      'Waiting for jobs…',
      'Nothing is running right now',
      'Nothing here',
      'No schedules',
    ])
      expect(html).toContain(text);
    for (const id of SECTIONS) expect(html).toContain(`id="${id}"`);
    // an empty table keeps its column headers above its empty message
    expect(renderSection('problems', { ...emptySnapshot(), at })).toBe(
      '<table><thead><tr><th>Job</th><th>Task</th><th>Queue</th><th>Attempts</th><th>Last error</th><th>When</th></tr></thead>' +
        '<tbody><tr><td class="empty" colspan="6">Nothing here</td></tr></tbody></table>',
    );
    for (const [section, header] of [
      ['queues', '<th>Oldest ready</th>'],
      ['workers', '<th>Heartbeat</th>'],
      ['running', '<th>Lease left</th>'],
      ['schedules', '<th>Next run</th>'],
    ] as const)
      expect(renderSection(section, { ...emptySnapshot(), at })).toContain(header);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).toContain('<code>pgqueue.jobs</code>');
  });

  it('shows a running job’s lease left, or that it expired and waits for the reaper; errors as text', () => {
    const s: DashboardSnapshot = {
      ...emptySnapshot(),
      at,
      running: [
        {
          id: '7',
          queue: 'q',
          task: 'Mailer.send',
          instance: 'host:1:ab',
          attempt: 2,
          startedAt: at - 90_000,
          leaseUntil: at + 30_000,
          heartbeatUntil: null,
        },
        { id: '8', queue: 'q', task: null, instance: null, attempt: 1, startedAt: at - 5000, leaseUntil: at - 1000, heartbeatUntil: null },
      ],
      runningCount: 3,
      problems: [{ id: '9', queue: 'q', task: null, attempts: 3, error: '<b>bold</b>', at: at - 4000 }],
      unworked: ['orphan<queue>'],
      error: 'connect ECONNREFUSED',
    };
    const running = renderSection('running', s);
    expect(running).toContain('Mailer.send');
    expect(running).toContain('<td>2 min</td><td>30 s</td>');
    expect(running).toContain('expired, waiting for the reaper');
    expect(running).toContain('1 more running');
    expect(renderSection('problems', s)).toContain('&lt;b&gt;bold&lt;/b&gt;</span></td><td>4.0 s ago');
    // each job links to its view, under the dashboard's path
    expect(renderSection('running', s, '/ops/queues')).toContain('<a class="job" href="/ops/queues/jobs/7">7</a>');
    expect(renderSection('problems', s, '/q')).toContain('<a class="job" href="/q/jobs/9">9</a>');
    const alerts = renderSection('alerts', s);
    expect(alerts).toContain('The database cannot be read: connect ECONNREFUSED.');
    expect(alerts).toContain('Queue <b>orphan&lt;queue&gt;</b> has ready jobs and no live worker works it.');
  });
});
