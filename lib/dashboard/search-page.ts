// The dashboard's search results (`{path}/search?q=`): the jobs that hold the key asked, newest first, each linking
// to its job view and its queue's page. One match never comes here: the route goes straight to the job view.
import type { SearchQuery, SearchResult } from '../core/dashboard/search.js';
import { SEARCH_BUDGET_MS, SEARCH_MAX_QUEUES, SEARCH_MAX_RESULTS } from '../core/dashboard/search.js';
import { shownError, type Redact } from './job-page.js';
import { documentOf } from './page.js';
import { queuePath } from './queue-page.js';
import { count, esc, jobLink } from './render.js';

/** The results page of a search that did not find one job alone. */
export function renderSearchPage(
  query: SearchQuery,
  result: Extract<SearchResult, { kind: 'list' }>,
  version: string,
  base: string,
  redact: Redact | undefined,
): string {
  const where = query.queue === null ? `${count(result.queues)} queue${result.queues === 1 ? '' : 's'}` : `queue ${query.queue}`;
  const rows = result.jobs
    .map((job) => {
      const error = shownError(job, redact);
      return `<tr data-id="${esc(job.id)}"><td>${jobLink(base, job.id)}</td><td><a href="${esc(queuePath(base, job.name))}">${esc(job.name)}</a></td><td><span class="state">${esc(job.state)}</span></td><td>${esc(job.createdOn.toISOString())}</td><td class="keys">${esc(job.singletonKey ?? '–')}</td><td class="keys">${esc(job.dedupeKey ?? '–')}</td><td class="message">${esc(error)}</td></tr>`;
    })
    .join('');
  const notes = [
    result.more ? `More jobs hold it: the ${SEARCH_MAX_RESULTS} newest are listed.` : '',
    result.unsearched > 0
      ? `${count(result.unsearched)} queue${result.unsearched === 1 ? ' was' : 's were'} not searched for it as a key (a search looks in at most ${SEARCH_MAX_QUEUES} queues, by name, for at most ${SEARCH_BUDGET_MS / 1000} s): search from a queue's page for the others.`
      : '',
  ]
    .filter(Boolean)
    .map((n) => `<p class="muted">${esc(n)}</p>`)
    .join('');
  const byId = result.byId
    ? `<p class="by-id">Job ${jobLink(base, result.byId.id)} of queue <a href="${esc(queuePath(base, result.byId.queue))}">${esc(result.byId.queue)}</a> has this id.</p>`
    : '';
  const body = `<h2>Search · <span class="query">${esc(query.q)}</span></h2>
<p class="muted">Jobs whose id, singleton key or dedupe key is this, in ${esc(where)}. <a href="${esc(base) || '/'}">Back to the dashboard</a></p>
${byId}${notes}
<table class="browser"><thead><tr><th>Job</th><th>Queue</th><th>State</th><th>Created</th><th>Singleton key</th><th>Dedupe key</th><th>Last error</th></tr></thead><tbody>${
    rows || `<tr><td class="empty" colspan="7">${result.byId ? 'No job holds it as a key.' : 'No job has this id or key.'}</td></tr>`
  }</tbody></table>`;
  return documentOf(version, base, body, false, `Search · pgqueue`);
}
