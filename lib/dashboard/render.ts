// The dashboard's HTML, section by section, from one snapshot. The same module renders the first page on the server
// and every update in the browser (it is served to the page as /render.js, so it imports nothing at run time).
// Everything from the database goes through esc(): a job's error or payload is always shown as text.
import type { DashboardSnapshot, SecondCount } from '../core/dashboard/model.js';

/** The sections the page updates on each snapshot, by element id. */
export const SECTIONS = ['alerts', 'tiles', 'throughput', 'queues', 'workers', 'feed', 'running', 'problems', 'schedules'] as const;
export type SectionId = (typeof SECTIONS)[number];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content or a quoted attribute. */
export function esc(value: string | number | null | undefined): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A duration for people: 840 ms, 2.4 s, 3 min, 5 h. */
export function duration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '–';
  const s = Math.abs(seconds);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${(s / 3600).toFixed(s < 36000 ? 1 : 0)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** A count with thousands separated; `over`: a lower bound. */
export function count(n: number, over = false): string {
  return `${n.toLocaleString('en-US')}${over ? '+' : ''}`;
}

/** A time of the database's clock, relative to the snapshot's: "4 s ago", "in 3 min". */
function when(at: number | null, now: number): string {
  if (at === null) return '–';
  const d = (at - now) / 1000;
  return Math.abs(d) < 1 ? 'now' : d < 0 ? `${duration(-d)} ago` : `in ${duration(d)}`;
}

/** A link to the job view of job `id` (the dashboard is at `base`), its text the id unless given. */
export function jobLink(base: string, id: string, text = id): string {
  return `<a class="job" href="${esc(base)}/jobs/${esc(encodeURIComponent(id))}">${esc(text)}</a>`;
}

/** A link to the page of queue `name` (the dashboard is at `base`). */
export function queueLink(base: string, name: string): string {
  return `<a class="queue" href="${esc(base)}/queues/${esc(encodeURIComponent(name))}">${esc(name)}</a>`;
}

/** A table; without rows, its column headers above `empty` (an operator sees what would be listed). */
function table(headers: string[], rows: string[][], empty: string): string {
  const head = headers.map((h) => `<th>${esc(h)}</th>`).join('');
  const body =
    rows.length === 0
      ? `<tr><td class="empty" colspan="${headers.length}">${esc(empty)}</td></tr>`
      : rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function tile(label: string, value: string, sub: string, id: string): string {
  return `<div class="tile" id="tile-${id}"><div class="label">${esc(label)}</div><div class="value">${value}</div><div class="sub">${esc(sub)}</div></div>`;
}

function alerts(s: DashboardSnapshot): string {
  const out: string[] = [];
  if (s.error)
    out.push(
      `<p class="alert error" role="alert">The database cannot be read: ${esc(s.error)}. ${s.at ? `The figures are those of ${esc(new Date(s.at).toISOString())}.` : ''}</p>`,
    );
  for (const q of s.unworked)
    out.push(`<p class="alert warn" role="alert">Queue <b>${esc(q)}</b> has ready jobs and no live worker works it.</p>`);
  return out.join('');
}

function tiles(s: DashboardSnapshot): string {
  const t = s.tiles;
  const pair = (a: number | null, b: number | null) => `${esc(duration(a))} <small>/ ${esc(duration(b))}</small>`;
  const oldest = t.oldestReadySeconds === null ? 'no job is ready' : `oldest ready job waits ${duration(t.oldestReadySeconds)}`;
  return [
    tile('Throughput', t.throughput === null ? '–' : esc(t.throughput.toFixed(t.throughput < 10 ? 1 : 0)), 'jobs / second', 'throughput'),
    tile('Pickup latency', pair(t.pickupP50, t.pickupP95), 'p50 / p95 · due to claimed', 'pickup'),
    tile('Run time', pair(t.runP50, t.runP95), 'p50 / p95 · handler', 'run'),
    tile('Waiting', esc(count(t.waiting, t.waitingOver)), `queued + retrying · ${oldest}`, 'waiting'),
    tile('Running', esc(count(t.running)), 'holding a lease', 'running'),
    tile('Retries', esc(count(t.retries)), 'last 60 s', 'retries'),
    tile('Failed', esc(count(t.failed)), 'last 60 s', 'failed'),
  ].join('');
}

const W = 600;
const H = 120;

function bars(series: readonly SecondCount[]): string {
  const max = Math.max(1, ...series.map((x) => (x.completed ?? 0) + (x.failed ?? 0)));
  const w = W / Math.max(1, series.length);
  const out: string[] = [];
  series.forEach((x, i) => {
    if (x.completed === null) return;
    const ok = (x.completed / max) * H;
    const bad = ((x.failed ?? 0) / max) * H;
    const at = (i * w).toFixed(1);
    const bw = Math.max(1, w - 1).toFixed(1);
    if (ok > 0) out.push(`<rect class="ok" x="${at}" y="${(H - ok).toFixed(1)}" width="${bw}" height="${ok.toFixed(1)}"/>`);
    if (bad > 0) out.push(`<rect class="bad" x="${at}" y="${(H - ok - bad).toFixed(1)}" width="${bw}" height="${bad.toFixed(1)}"/>`);
  });
  return out.join('');
}

function throughput(s: DashboardSnapshot): string {
  const peak = Math.max(0, ...s.throughput.map((x) => (x.completed ?? 0) + (x.failed ?? 0)));
  return `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="finished jobs per second"><line class="axis" x1="0" y1="${H}" x2="${W}" y2="${H}"/>${bars(s.throughput)}</svg>
<p class="legend"><span class="key ok"></span>succeeded <span class="key bad"></span>failed / dead <span class="scale">peak ${esc(count(peak))}/s</span></p>`;
}

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];

/** A queue's waiting jobs in one depth sample (own keys only: a queue may be named `constructor`). */
function waitingOf(d: { waiting: Record<string, number> }, name: string): number {
  return Object.hasOwn(d.waiting, name) ? d.waiting[name]! : 0;
}

function depthChart(s: DashboardSnapshot): string {
  const names = s.queues.map((q) => q.name);
  const from = s.at - 120_000;
  const max = Math.max(1, ...s.depth.flatMap((d) => Object.values(d.waiting)));
  // the queues that had jobs waiting, else the first ones (flat at zero)
  const busy = names.filter((n) => s.depth.some((d) => waitingOf(d, n) > 0));
  const shown = (busy.length > 0 ? busy : names).slice(0, PALETTE.length);
  const lines = shown.map((name, i) => {
    const points = s.depth
      .map((d) => `${(((d.at - from) / 120_000) * W).toFixed(1)},${(H - (waitingOf(d, name) / max) * H).toFixed(1)}`)
      .join(' ');
    return `<polyline fill="none" stroke="${PALETTE[i]}" stroke-width="2" points="${points}"/>`;
  });
  const legend = shown.map((name, i) => `<span class="key" data-color="${i}"></span>${esc(name)}`).join(' ');
  return `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="waiting jobs per queue"><line class="axis" x1="0" y1="${H}" x2="${W}" y2="${H}"/>${lines.join('')}</svg>
<p class="legend">${legend} <span class="scale">peak ${esc(count(max))}</span></p>`;
}

function queues(s: DashboardSnapshot, base: string): string {
  const rows = s.queues.map((q) => [
    `${queueLink(base, q.name)}${q.paused ? ' <span class="badge">paused</span>' : ''}`,
    esc(q.policy),
    esc(count(q.waiting, q.waitingOver)),
    esc(count(q.ready, q.readyOver)),
    esc(count(q.running)),
    esc(q.oldestReadySeconds === null ? '–' : duration(q.oldestReadySeconds)),
    esc(q.tasks.join(', ') || (q.loops === 0 ? 'no live worker' : '–')),
  ]);
  const list = table(['Queue', 'Policy', 'Waiting', 'Ready', 'Running', 'Oldest ready', 'Task'], rows, 'No jobs yet');
  return s.queues.length === 0 ? list : depthChart(s) + list;
}

function workers(s: DashboardSnapshot): string {
  const rows = s.workers.map((w) => [
    esc(w.id),
    esc(w.version),
    esc(duration(w.heartbeatAgeSeconds)),
    esc(count(w.leases)),
    esc(
      w.loops.map((l) => `${l.queue} ${l.active}/${l.concurrency}`).join(', ') +
        (w.stopped.length ? ` · stopped: ${w.stopped.join(', ')}` : ''),
    ),
  ]);
  return table(['Instance', 'Version', 'Heartbeat', 'Leases', 'Loops (active / concurrency)'], rows, 'No workers running');
}

function feed(s: DashboardSnapshot, base: string): string {
  if (s.feed.length === 0) return `<ol class="feed"><li class="empty">Waiting for jobs…</li></ol>`;
  const items = s.feed.map(
    (e) =>
      `<li class="${esc(e.kind)}"><span class="kind">${esc(e.kind)}</span> ${jobLink(base, e.id)} <span class="queue">${esc(e.queue)}</span> <span class="at">${esc(when(e.at, s.at))}</span>${e.message ? ` <span class="message">${esc(e.message)}</span>` : ''}</li>`,
  );
  return `<ol class="feed">${items.join('')}</ol>`;
}

function running(s: DashboardSnapshot, base: string): string {
  const rows = s.running.map((r) => {
    const left = r.leaseUntil === null ? null : (Math.min(r.leaseUntil, r.heartbeatUntil ?? Infinity) - s.at) / 1000;
    return [
      jobLink(base, r.id),
      esc(r.task ?? '–'),
      esc(r.queue),
      esc(r.instance ?? '–'),
      esc(r.attempt),
      esc(duration((s.at - r.startedAt) / 1000)),
      left !== null && left <= 0 ? '<span class="expired">expired, waiting for the reaper</span>' : esc(duration(left)),
    ];
  });
  const more = s.runningCount > s.running.length ? `<p class="more">${esc(count(s.runningCount - s.running.length))} more running</p>` : '';
  return table(['Job', 'Task', 'Queue', 'Worker', 'Attempt', 'Running', 'Lease left'], rows, 'Nothing is running right now') + more;
}

function problems(s: DashboardSnapshot, base: string): string {
  const rows = s.problems.map((p) => [
    jobLink(base, p.id),
    esc(p.task ?? '–'),
    esc(p.queue),
    esc(p.attempts),
    `<span class="error">${esc(p.error)}</span>`,
    esc(when(p.at, s.at)),
  ]);
  return table(['Job', 'Task', 'Queue', 'Attempts', 'Last error', 'When'], rows, 'Nothing here');
}

function schedules(s: DashboardSnapshot): string {
  const rows = s.schedules.map((c) => [
    esc(c.key || c.name),
    esc(c.tz === 'UTC' ? c.cron : `${c.cron} (${c.tz})`),
    esc(c.task ?? '–'),
    esc(c.name),
    esc(when(c.next, s.at)),
    esc(when(c.last, s.at)),
  ]);
  return table(['Name', 'Cron (UTC)', 'Task', 'Queue', 'Next run', 'Last run'], rows, 'No schedules');
}

/**
 * A snapshot as the stream sent it, made whole again: a first event carries its `depth`; a later one carries only
 * `depthAppend`, added to the points held (`held`) and trimmed to the last two minutes as the sampler keeps them.
 */
export function withDepth(
  held: DashboardSnapshot['depth'],
  event: Omit<DashboardSnapshot, 'depth'> & { depth?: DashboardSnapshot['depth']; depthAppend?: DashboardSnapshot['depth'] },
): DashboardSnapshot {
  const { depth: given, depthAppend, ...rest } = event;
  let depth = given ?? held;
  if (!given && depthAppend?.length) {
    const last = held.at(-1)?.at ?? -Infinity;
    depth = held.concat(depthAppend.filter((p) => p.at > last));
  }
  return { ...rest, depth: depth.filter((p) => p.at >= event.at - 120_000) };
}

/** One section's inner HTML. `base`: the dashboard's path without a trailing slash, for links to job views. */
export function renderSection(id: SectionId, s: DashboardSnapshot, base = ''): string {
  switch (id) {
    case 'alerts':
      return alerts(s);
    case 'tiles':
      return tiles(s);
    case 'throughput':
      return throughput(s);
    case 'queues':
      return queues(s, base);
    case 'workers':
      return workers(s);
    case 'feed':
      return feed(s, base);
    case 'running':
      return running(s, base);
    case 'problems':
      return problems(s, base);
    case 'schedules':
      return schedules(s);
  }
}
