// The dashboard's page: the document around the sections of render.ts, rendered on the server with the latest
// snapshot (useful before any script runs), and "How it works", which says what this queue does in PostgreSQL.
// No inline script or style: the page loads its own app.js and app.css, as its Content-Security-Policy requires.
import type { DashboardSnapshot } from '../core/dashboard/model.js';
import { esc, renderSection, type SectionId } from './render.js';

/** The headings of the page's sections, in the page's order (the reference page's). */
const HEADINGS: [SectionId, string][] = [
  ['throughput', 'Throughput · finished jobs per second, last two minutes'],
  ['queues', 'Queues · depth over the last two minutes'],
  ['workers', 'Workers · heartbeats and leases'],
  ['feed', 'Live job feed'],
  ['running', 'Running jobs · each one holds a lease that its worker keeps extending'],
  ['problems', 'Problems'],
  ['schedules', 'Periodic schedules'],
];

/** The whole page. `base`: the path it is mounted at, without a trailing slash; `schema`: the queue's schema. */
export function renderPage(s: DashboardSnapshot, base: string, schema: string): string {
  const sections = HEADINGS.map(
    ([id, title]) => `<section><h2>${esc(title)}</h2><div id="${id}">${renderSection(id, s, base)}</div></section>`,
  ).join('\n');
  const body = `<form class="search" method="get" action="${esc(base)}/search"><input type="search" name="q" placeholder="job id, singleton key or dedupe key" aria-label="search jobs"><button type="submit">Search</button></form>
<div id="alerts">${renderSection('alerts', s)}</div>
<div id="tiles" class="tiles">${renderSection('tiles', s)}</div>
`;
  return documentOf(s.version, base, body + sections + '\n' + howItWorks(schema), true);
}

/**
 * A page of the dashboard: its header (version, read-only, and the live connection's state when it has a script)
 * around `body`. `base`: the dashboard's path, without a trailing slash.
 */
export function documentOf(version: string, base: string, body: string, live: boolean, title = 'pgqueue'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${esc(base)}/app.css">
${live ? `<script type="module" src="${esc(base)}/app.js"></script>\n` : ''}</head>
<body data-base="${esc(base)}">
<header><h1><a href="${esc(base) || '/'}">pgqueue</a> <span class="version">v${esc(version)}</span> <span class="badge">read-only</span></h1>
${live ? '<span id="connection" class="connection">connecting…</span>' : ''}</header>
${body}
</body>
</html>`;
}

/** "How it works": this project's tables and statements, and a diagram of them. */
function howItWorks(schema: string): string {
  const t = (name: string) => `<code>${esc(schema)}.${name}</code>`;
  return `<section class="how"><h2>How it works</h2>
<p>A job is a row of ${t('jobs')}, and PostgreSQL is the whole queue: there is no broker to run beside it. Four of its
features carry the work.</p>
${DIAGRAM}
<p class="caption">Solid arrows are SQL statements; dashed arrows are LISTEN/NOTIFY wake-ups.</p>
<h3>Claiming with SKIP LOCKED</h3>
<p>A worker claims a batch in one statement: it picks ready rows of its queue through the partial index
<code>jobs_ready_idx</code>, locks them with <code>FOR UPDATE SKIP LOCKED</code>, and marks them active under its lease.
A row another worker has locked is passed over, not waited for, so any number of workers take different jobs at
once.</p>
<pre>UPDATE jobs SET state = 'active', claim_count = claim_count + 1, lease_until = …
WHERE ctid = ANY (SELECT … FROM jobs
  WHERE queue = $1 AND state &lt; 'active' AND start_after &lt;= now()
  ORDER BY priority DESC, start_after, id
  LIMIT $2 FOR UPDATE SKIP LOCKED)</pre>
<h3>Leases, heartbeats and fencing</h3>
<p>A running job holds a lease (<code>lease_until</code>) and, when it has a heartbeat interval, a heartbeat
(<code>heartbeat_until</code>) that its worker keeps extending. When a worker dies, its leases run out and any
instance's maintenance pass puts the jobs back, counting the attempt. A result is written only by the attempt that
holds the job (its <code>claim_count</code> and claim time), so a worker that stalled cannot overwrite a newer
attempt's result. Each instance also keeps its row in ${t('workers')}, the workers shown above.</p>
<h3>LISTEN/NOTIFY</h3>
<p>An insert wakes the workers of its queue with a NOTIFY (a trigger on ${t('jobs')}), and so does a retry or a
job released by another's end, so an idle worker claims within milliseconds. Polling stays as the safety net: a
lost wake-up costs latency, never a job.</p>
<h3>Retries and dead letters</h3>
<p>A failed attempt is retried after its delay, with exponential backoff and jitter when the queue asks for it; a
handler may ask for a delay of its own or fail for good. A job that uses up its attempts stays failed and visible
(the problems above) until someone retries it, or it is copied to its dead-letter queue.</p>
</section>`;
}

/** Producers, the jobs table and three workers, with the four statements between them. */
const DIAGRAM = `<svg class="diagram" viewBox="0 0 640 220" role="img" aria-label="producers insert jobs into PostgreSQL; workers claim them with SKIP LOCKED">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>
<rect x="10" y="80" width="130" height="60" rx="8" fill="#eef3fa" stroke="#4e79a7"/>
<text x="75" y="106" text-anchor="middle" font-size="13">producers</text>
<text x="75" y="124" text-anchor="middle" font-size="11">send() · cron</text>
<rect x="230" y="40" width="180" height="140" rx="8" fill="#f4f4f4" stroke="#555"/>
<text x="320" y="64" text-anchor="middle" font-size="13">PostgreSQL</text>
<text x="320" y="92" text-anchor="middle" font-size="12">jobs</text>
<text x="320" y="110" text-anchor="middle" font-size="10">jobs_ready_idx (waiting)</text>
<text x="320" y="132" text-anchor="middle" font-size="12">workers</text>
<text x="320" y="156" text-anchor="middle" font-size="10">trigger → NOTIFY</text>
<rect x="500" y="20" width="130" height="44" rx="8" fill="#eef7ee" stroke="#59a14f"/>
<text x="565" y="47" text-anchor="middle" font-size="12">worker A</text>
<rect x="500" y="88" width="130" height="44" rx="8" fill="#eef7ee" stroke="#59a14f"/>
<text x="565" y="115" text-anchor="middle" font-size="12">worker B</text>
<rect x="500" y="156" width="130" height="44" rx="8" fill="#eef7ee" stroke="#59a14f"/>
<text x="565" y="183" text-anchor="middle" font-size="12">worker C</text>
<line x1="140" y1="110" x2="228" y2="110" stroke="#555" marker-end="url(#arrow)"/>
<text x="184" y="102" text-anchor="middle" font-size="10">1 · INSERT</text>
<line x1="410" y1="70" x2="498" y2="42" stroke="#555" stroke-dasharray="5 4" marker-end="url(#arrow)"/>
<text x="452" y="46" text-anchor="middle" font-size="10">2 · NOTIFY</text>
<line x1="498" y1="110" x2="412" y2="110" stroke="#555" marker-end="url(#arrow)"/>
<text x="455" y="102" text-anchor="middle" font-size="10">3 · SKIP LOCKED</text>
<line x1="498" y1="178" x2="412" y2="160" stroke="#555" marker-end="url(#arrow)"/>
<text x="455" y="186" text-anchor="middle" font-size="10">4 · heartbeat</text>
</svg>`;
