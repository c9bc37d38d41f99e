// The dashboard's page of one queue (`{path}/queues/:name`): its settings and counts, its charts over the last hour
// or day, and a browser of its jobs by state, newest first, page by page (`?state=failed&after=<cursor>`), each row
// linking to the job view. Rendered on the server; everything stored goes through esc(), and a job's error through
// `redact` as on the job view.
import type { QueueView } from '../core/dashboard/queue-view.js';
import { RANGES } from '../core/dashboard/queue-view.js';
import { JOB_STATES } from '../core/jobs/finder.js';
import type { JobWithMetadata, QueueResult } from '../core/types.js';
import { shownError, type Redact } from './job-page.js';
import { documentOf } from './page.js';
import { chartsOf, renderChart } from './queue-charts.js';
import { count, duration, esc, jobLink } from './render.js';

/** The path of queue `name`'s page under the dashboard at `base`, with its query. */
export function queuePath(base: string, name: string, query: Record<string, string | null> = {}): string {
  const params = Object.entries(query).filter((e): e is [string, string] => e[1] !== null && e[1] !== '');
  const search = params.length ? `?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : '';
  return `${base}/queues/${encodeURIComponent(name)}${search}`;
}

/** A setting in seconds: its duration for people, and the exact seconds where the duration rounds them. */
const seconds = (s: number | null) => (s === null ? '–' : s < 60 ? `${count(s)} s` : `${duration(s)} (${count(s)} s)`);

/** The queue's settings, as getQueue returns them. */
function settings(q: QueueResult, base: string): string {
  const row = (label: string, html: string) => `<tr><th scope="row">${esc(label)}</th><td>${html}</td></tr>`;
  const retries = `${count(q.retryLimit)} · delay ${seconds(q.retryDelay)}${q.retryBackoff ? ', exponential backoff' : ''}${q.retryDelayMax !== null ? `, at most ${seconds(q.retryDelayMax)}` : ''}`;
  return `<table class="fields"><tbody>${[
    row('Policy', esc(q.policy)),
    row('Paused', q.paused ? '<span class="badge">paused</span>' : 'no'),
    row('Retries', esc(retries)),
    row('Dead letter', q.deadLetter ? `<a href="${esc(queuePath(base, q.deadLetter))}">${esc(q.deadLetter)}</a>` : '–'),
    row('Expires after', esc(seconds(q.expireInSeconds))),
    row('Heartbeat', esc(seconds(q.heartbeatSeconds))),
    row('Concurrency limit', esc(q.concurrencyLimit === null ? '–' : count(q.concurrencyLimit))),
    row('Rate limit', esc(q.rateLimit ? `${count(q.rateLimit.count)} per ${seconds(q.rateLimit.perSeconds)}` : '–')),
    row(
      'Retention',
      esc(
        `completed kept ${q.removeOnComplete ? 'not at all (removeOnComplete)' : q.deleteAfterSeconds === 0 ? 'forever' : seconds(q.deleteAfterSeconds)}, failed kept ${seconds(q.failedDeleteAfterSeconds)}, waiting at most ${seconds(q.retentionSeconds)}`,
      ),
    ),
    row('Partition', q.partition ? 'its own table' : 'shared'),
  ].join('')}</tbody></table>`;
}

/** The counts of the last monitor pass. */
function counts(q: QueueResult): string {
  const tile = (label: string, value: number) =>
    `<div class="tile"><div class="label">${esc(label)}</div><div class="value">${esc(count(value))}</div></div>`;
  const when = q.countedOn
    ? `Counted at ${esc(q.countedOn.toISOString())} by the monitor pass.`
    : 'Not counted yet: no monitor pass has run.';
  return `<div class="tiles">${[
    tile('Ready', q.readyCount),
    tile('Deferred', q.deferredCount),
    tile('Blocked', q.blockedCount),
    tile('Running', q.activeCount),
    tile('Failed', q.failedCount),
    tile('Stored', q.totalCount),
  ].join('')}</div><p class="muted">${when} Oldest ready job waits ${esc(duration(q.readyOldestSeconds))}.</p>`;
}

/** The job browser's rows. */
function jobRows(jobs: readonly JobWithMetadata[], base: string, redact: Redact | undefined): string {
  if (jobs.length === 0) return `<tr><td class="empty" colspan="7">No job in this state.</td></tr>`;
  return jobs
    .map((job) => {
      const error = shownError(job, redact);
      const key = [job.singletonKey, job.dedupeKey].filter((k) => k !== null).join(' · ');
      return `<tr data-id="${esc(job.id)}"><td>${jobLink(base, job.id)}</td><td><span class="state">${esc(job.state)}</span></td><td>${esc(job.createdOn.toISOString())}</td><td>${esc((job.completedOn ?? job.startedOn)?.toISOString() ?? '–')}</td><td>${esc(job.retryCount)}</td><td class="keys">${esc(key || '–')}</td><td class="message">${esc(error)}</td></tr>`;
    })
    .join('');
}

/** The browser: a link per state, the page of jobs, and a link to the next page. */
function browser(view: QueueView, base: string, redact: Redact | undefined): string {
  const { query } = view;
  const name = view.queue.name;
  const states = ['all', ...JOB_STATES]
    .map((s) => {
      const current = (query.state ?? 'all') === s;
      return `<a class="state-filter${current ? ' current' : ''}"${current ? ' aria-current="page"' : ''} href="${esc(queuePath(base, name, { state: s === 'all' ? null : s, range: query.range === 'hour' ? null : query.range }))}">${esc(s)}</a>`;
    })
    .join(' ');
  const stateParam = query.state;
  const range = query.range === 'hour' ? null : query.range;
  const next = view.next
    ? `<a class="next" rel="next" href="${esc(queuePath(base, name, { state: stateParam, after: view.next, range }))}">Older jobs →</a>`
    : '<span class="muted">No older jobs.</span>';
  const first = query.after ? `<a href="${esc(queuePath(base, name, { state: stateParam, range }))}">← Newest</a> · ` : '';
  return `<nav class="states">${states}</nav>
<table class="browser"><thead><tr><th>Job</th><th>State</th><th>Created</th><th>Started or finished</th><th>Retries</th><th>Keys</th><th>Last error</th></tr></thead><tbody>${jobRows(view.jobs, base, redact)}</tbody></table>
<p class="pager">${first}${next}</p>`;
}

/** The charts, or why there are none. */
function charts(view: QueueView, base: string): string {
  const ranges = Object.keys(RANGES)
    .map((r) => {
      const current = view.query.range === r;
      return `<a class="range${current ? ' current' : ''}"${current ? ' aria-current="page"' : ''} href="${esc(queuePath(base, view.queue.name, { state: view.query.state, range: r === 'hour' ? null : r }))}">last ${esc(r)}</a>`;
    })
    .join(' ');
  if (view.series === null)
    return `<p class="muted">No stats series: this instance runs with persistQueueStats off, so no monitor pass keeps one.</p>`;
  return `<nav class="ranges">${ranges}</nav><div class="charts">${chartsOf(view.series)
    .map((c) => renderChart(c, view.from, view.to))
    .join('')}</div>`;
}

/** The queue's page. `base`: the dashboard's path, without a trailing slash. */
export function renderQueuePage(view: QueueView, version: string, base: string, redact: Redact | undefined): string {
  const q = view.queue;
  const body = `<h2 class="queue-title">Queue ${esc(q.name)}</h2>
<p class="muted"><a href="${esc(base) || '/'}">Back to the dashboard</a> · <a href="">Read again</a></p>
<form class="search" method="get" action="${esc(base)}/search"><input type="search" name="q" placeholder="job id, singleton key or dedupe key" aria-label="search jobs"><input type="hidden" name="queue" value="${esc(q.name)}"><button type="submit">Search this queue</button></form>
<section><h2>Counts</h2>${counts(q)}</section>
<section><h2>Stats</h2>${charts(view, base)}</section>
<section><h2>Jobs · newest first</h2>${browser(view, base, redact)}</section>
<section><h2>Settings</h2>${settings(q, base)}</section>`;
  return documentOf(version, base, body, false, `Queue ${q.name} · pgqueue`);
}

/** The page for a name that is no queue. */
export function renderMissingQueuePage(name: string, version: string, base: string): string {
  return documentOf(
    version,
    base,
    `<h2>No queue ${esc(name)}</h2><p>No queue has this name. <a href="${esc(base) || '/'}">Back to the dashboard</a></p>`,
    false,
    'No such queue · pgqueue',
  );
}

/** A page that says what went wrong: a bad query (400) or a database that cannot be read (503). */
export function renderProblemPage(title: string, message: string, version: string, base: string): string {
  return documentOf(
    version,
    base,
    `<h2>${esc(title)}</h2><p class="alert error" role="alert">${esc(message)} <a href="${esc(base) || '/'}">Back to the dashboard</a></p>`,
    false,
    `${title} · pgqueue`,
  );
}
