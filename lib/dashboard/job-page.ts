// The dashboard's page for one job: why it does not run (when it waits), its fields, its last error, and its data and
// output as `redact` lets them be shown. Rendered on the server only; like the main page, everything stored goes
// through esc().
import type { JobView } from '../core/dashboard/job-view.js';
import { redactJob, type Redact, type RedactedError, type RedactedJob, type Shown } from '../core/http/redact.js';
import type { AttemptView } from '../core/dashboard/attempts.js';
import type { JobWithMetadata } from '../core/types.js';
import { boundedJson, Unrenderable } from './bounded-json.js';
import { documentOf } from './page.js';
import { duration, esc, jobLink } from './render.js';

export type { Redact } from '../core/http/redact.js';

/** The longest JSON shown of a payload or output (the rest is cut, and the page says so). */
export const SHOWN_JSON_MAX = 64 * 1024;

/** The job's data, output and last error as the page shows them: JSON text, or why it is not shown. */
export function shownValues(
  job: JobWithMetadata,
  redact: Redact | undefined,
  shown: RedactedJob = redactJob(job, redact),
): { data: string; output: string; error: RedactedError } {
  const text = (v: Shown<unknown>) => ('hidden' in v ? v.hidden : json(v.value));
  const error = shown.lastError;
  return {
    data: text(shown.data),
    output: text(shown.output),
    error: 'value' in error ? error.value : job.lastError ? { name: 'Error', message: error.hidden } : null,
  };
}

/** A job's last error in a line, as `redact` lets it be seen ('' without one): the queue pages' and the search's rows. */
export function shownError(job: JobWithMetadata, redact: Redact | undefined): string {
  if (!job.lastError) return '';
  const shown = redactJob(job, redact).lastError;
  if (!('value' in shown)) return shown.hidden;
  return shown.value ? `${shown.value.name}: ${shown.value.message}` : 'hidden by redact(job)';
}

function json(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  try {
    const { text, cut } = boundedJson(value, SHOWN_JSON_MAX);
    // a function or a symbol has no JSON: its type says what it was
    if (text === undefined) return `(${typeof value})`;
    return cut ? `${text}\n… cut at ${SHOWN_JSON_MAX.toLocaleString('en-US')} characters: the rest is not shown` : text;
  } catch (err) {
    return `not shown: ${err instanceof Unrenderable ? err.message : String(err)}`;
  }
}

/** A time as stored, and how far it is from the view's "now". */
function time(d: Date | null, now: number, empty = '–'): string {
  if (!d) return esc(empty);
  const s = (d.getTime() - now) / 1000;
  const rel = Math.abs(s) < 1 ? 'now' : s < 0 ? `${duration(-s)} ago` : `in ${duration(s)}`;
  return `<time datetime="${esc(d.toISOString())}">${esc(d.toISOString())}</time> <span class="muted">(${esc(rel)})</span>`;
}

function row(label: string, html: string): string {
  return `<tr><th scope="row">${esc(label)}</th><td>${html}</td></tr>`;
}

/** How each ending of an attempt reads. */
const OUTCOMES: Record<AttemptView['outcome'], string> = {
  failed: 'failed',
  'lease-expired': 'the lease ran out',
  running: 'running',
  completed: 'completed',
};

/**
 * An attempt's error as it may be shown: as stored without redact; with it, as redact(job) shows the job's last error
 * when that attempt's error is the job's lastError (each attempt's error passes through redact as the last one does).
 */
function attemptError(a: AttemptView, job: JobWithMetadata, redact: Redact | undefined): AttemptView['error'] | 'hidden' {
  if (!a.error || !redact) return a.error;
  const as = { ...a.error, stack: a.error.stack ?? undefined, on: a.endedOn ?? job.lastError?.on ?? new Date(0), attempt: a.attempt };
  const shown = redactJob({ ...job, lastError: as }, redact).lastError;
  if (!('value' in shown) || !shown.value) return 'hidden';
  return { name: shown.value.name, message: shown.value.message, stack: shown.value.stack ?? null };
}

/** The attempts, oldest first: who ran each, when, how it ended, and its error. */
function attemptsSection(view: JobView, redact: Redact | undefined): string {
  if (view.attempts.length === 0) return '';
  const rows = view.attempts
    .map((a) => {
      const e = attemptError(a, view.job, redact);
      const span = a.startedOn && a.endedOn ? duration((a.endedOn.getTime() - a.startedOn.getTime()) / 1000) : '–';
      const error =
        e === 'hidden'
          ? '<span class="muted">hidden by redact(job)</span>'
          : e
            ? `<span class="error">${esc(e.name)}: ${esc(e.message)}</span>${e.stack ? `<details><summary>stack</summary><pre class="stack">${esc(e.stack)}</pre></details>` : ''}`
            : '';
      return `<tr data-attempt="${esc(a.attempt)}"><td>${esc(a.attempt)}</td><td>${esc(OUTCOMES[a.outcome])}</td><td>${esc(a.worker ?? '–')}</td><td>${esc(a.startedOn?.toISOString() ?? '–')}</td><td>${esc(a.endedOn?.toISOString() ?? '–')}</td><td>${esc(span)}</td><td>${error}</td></tr>`;
    })
    .join('');
  return `<section><h2>Attempts</h2><table class="attempts"><thead><tr><th>#</th><th>Outcome</th><th>Worker</th><th>Started</th><th>Ended</th><th>Took</th><th>Error</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** The jobs linked to it: its flow's parents and children, its dead-letter copies. */
function linksSection(view: JobView, base: string): string {
  const part = (kind: keyof JobView['links'], title: string) => {
    const { jobs, more } = view.links[kind];
    if (jobs.length === 0) return '';
    const items = jobs
      .map((l) => `<li>${jobLink(base, l.id)} <span class="queue">${esc(l.queue)}</span> <span class="state">${esc(l.state)}</span></li>`)
      .join('');
    return `<h3>${esc(title)}</h3><ul class="links" data-kind="${esc(kind)}">${items}${more ? '<li class="muted">and more: the first ones are listed</li>' : ''}</ul>`;
  };
  const parts =
    part('parent', 'Waits for (flow parents)') + part('child', 'Waited for by (flow children)') + part('copy', 'Dead-letter copies');
  return parts ? `<section><h2>Linked jobs</h2>${parts}</section>` : '';
}

/** The job page. `base`: the dashboard's path, without a trailing slash. */
export function renderJobPage(view: JobView, version: string, base: string, redact: Redact | undefined): string {
  const { job, now } = view;
  const reasons =
    view.reasons.length === 0
      ? ''
      : `<section><h2>Why it is not running</h2><ul class="reasons">${view.reasons
          .map((r) => `<li data-code="${esc(r.code)}">${esc(r.text)}${r.jobId ? ` ${jobLink(base, r.jobId, 'view that job')}` : ''}</li>`)
          .join('')}</ul></section>`;
  const lease =
    job.state === 'active' && job.leaseUntil
      ? job.leaseUntil.getTime() <= now
        ? '<span class="expired">expired, waiting for the reaper</span>'
        : time(job.leaseUntil, now)
      : '–';
  const fields = [
    row('State', `<span class="state">${esc(job.state)}</span>`),
    row('Queue', `${esc(job.name)} <span class="muted">(${esc(view.policy)} policy)</span>`),
    row('Priority', esc(job.priority)),
    row('Retries', `${esc(job.retryCount)} of ${esc(job.retryLimit)}`),
    row('Created', time(job.createdOn, now)),
    row('Start after', job.startAfter ? time(job.startAfter, now) : 'when the jobs it depends on complete'),
    row('Started', time(job.startedOn, now)),
    row('Finished', time(job.completedOn, now)),
    row('Worker', esc(job.workerId ?? '–')),
    row('Lease', lease),
    row('Singleton key', esc(job.singletonKey ?? '–')),
    row('Dedupe key', esc(job.dedupeKey ?? '–')),
    row(
      'Group',
      view.group ? `${esc(view.group.id)}${view.group.tier ? ` <span class="muted">(tier ${esc(view.group.tier)})</span>` : ''}` : '–',
    ),
    row('Dead letter', esc(job.deadLetter ?? '–')),
    row('Copied from', job.sourceId ? `${jobLink(base, job.sourceId)} <span class="muted">(${esc(job.sourceName ?? '')})</span>` : '–'),
    row('Kept until', time(job.keepUntil, now, 'while it waits')),
  ].join('');
  const redacted = redactJob(job, redact);
  const shown = shownValues(job, redact, redacted);
  const e = shown.error;
  const error = job.lastError
    ? `<section><h2>Last error · attempt ${esc(job.lastError.attempt)}, ${time(job.lastError.on, now)}</h2>
${e ? `<p class="error">${esc(e.name)}: ${esc(e.message)}</p>${e.stack ? `<pre class="stack">${esc(e.stack)}</pre>` : ''}` : '<p class="muted">hidden by redact(job)</p>'}</section>`
    : '';
  const body = `<h2 class="job-title">Job ${esc(job.id)} <span class="badge">${esc(job.state)}</span></h2>
<p class="muted">As read at ${esc(new Date(now).toISOString())}. <a href="">Read again</a> · <a href="${esc(base) || '/'}">Back to the dashboard</a></p>
${reasons}
<section><h2>Fields</h2><table class="fields"><tbody>${fields}</tbody></table></section>
${error}
${attemptsSection(view, redact)}
${linksSection(view, base)}
<section><h2>Data</h2><pre class="json">${esc(shown.data)}</pre></section>
<section><h2>Output</h2><pre class="json">${esc(shown.output)}</pre></section>`;
  return documentOf(version, base, body, false, `Job ${job.id} · pgqueue`);
}

/** The page when the database cannot be read (the main page keeps its last figures; this one has none). */
export function renderUnreadableJobPage(id: string, version: string, base: string, reason: string): string {
  return documentOf(
    version,
    base,
    `<h2>Job ${esc(id)}</h2><p class="alert error" role="alert">The database cannot be read: ${esc(reason)}. <a href="">Try again</a></p>`,
    false,
    `Job ${id} · pgqueue`,
  );
}

/** The page for an id that names no job. */
export function renderMissingJobPage(id: string, version: string, base: string): string {
  return documentOf(
    version,
    base,
    `<h2>No job ${esc(id)}</h2><p>No job has this id: it may have been deleted, or removed after its retention. <a href="${esc(base) || '/'}">Back to the dashboard</a></p>`,
    false,
    'No such job · pgqueue',
  );
}
