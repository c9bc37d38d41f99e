// Why a waiting job does not run, from its facts alone (lib/core/dashboard/job-view.ts), and the job page's
// rendering: everything stored shown as text, data and output only as redact(job) allows.
import { waitReasons, type JobFacts, type JobView, type QueueWorkers } from '../../lib/core/dashboard/job-view.js';
import type { JobWithMetadata } from '../../lib/core/types.js';
import { attemptsOf } from '../../lib/core/dashboard/attempts.js';
import { renderJobPage, renderMissingJobPage, shownValues, SHOWN_JSON_MAX } from '../../lib/dashboard/job-page.js';

const now = 1_800_000_000_000;
const facts = (over: Partial<JobFacts> = {}): JobFacts => ({
  state: 'created',
  policy: 'standard',
  singletonKey: null,
  group: null,
  now,
  startAfter: now - 1000,
  retryCount: 0,
  blockedBy: 0,
  paused: false,
  concurrencyLimit: null,
  queueRunning: null,
  rateLimit: null,
  keyRunningId: null,
  keyHolder: null,
  keyEarlierId: null,
  groupRunning: null,
  ahead: 0,
  ...over,
});
const worked: QueueWorkers = { loops: [{ groupConcurrency: null }], stoppedBy: 0 };
const codes = (f: JobFacts, w = worked) => waitReasons(f, w).map((r) => r.code);

describe('why a job waits', () => {
  it('gives no reason for a job that does not wait', () => {
    for (const state of ['active', 'completed', 'failed', 'cancelled'] as const) expect(waitReasons(facts({ state }), worked)).toEqual([]);
  });

  it('deferred and backing off end at the job’s start; waiting for parents says how many', () => {
    expect(waitReasons(facts({ startAfter: now + 60_000 }), worked)).toEqual([
      { code: 'deferred', text: 'Deferred until 2027-01-15T08:01:00Z.', until: now + 60_000 },
    ]);
    const back = waitReasons(facts({ state: 'retry', retryCount: 2, startAfter: now + 5000 }), worked)[0]!;
    expect(back).toMatchObject({ code: 'backing_off', until: now + 5000 });
    expect(back.text).toContain('attempt 2 failed');
    expect(waitReasons(facts({ blockedBy: 2, startAfter: Infinity }), worked)[0]!.text).toBe(
      'It waits for 2 jobs it depends on to complete.',
    );
  });

  it('lists every reason that holds, with the job that holds it back', () => {
    const f = facts({
      paused: true,
      policy: 'key_strict_fifo',
      singletonKey: 'k',
      keyHolder: { id: '12', state: 'failed' },
      concurrencyLimit: 2,
      queueRunning: 2,
      rateLimit: { count: 5, seconds: 60, started: 5, windowEnds: now + 30_000 },
    });
    const reasons = waitReasons(f, { loops: [], stoppedBy: 0 });
    expect(reasons.map((r) => r.code)).toEqual(['paused', 'key_blocked', 'concurrency_limit', 'rate_limit', 'no_worker']);
    expect(reasons[1]).toMatchObject({ jobId: '12', text: expect.stringContaining('Key "k" is blocked by job 12, which failed') });
    expect(reasons[3]!.until).toBe(now + 30_000);
    expect(codes(facts({ policy: 'key_strict_fifo', singletonKey: 'k', keyHolder: { id: '3', state: 'retry' } }))).toEqual(['key_busy']);
    expect(codes(facts({ policy: 'singleton', keyRunningId: '4' }))).toEqual(['key_busy']);
    expect(codes(facts({ concurrencyLimit: 3, queueRunning: 2, ahead: 0 }))).toEqual(['ready']);
    expect(codes(facts(), { loops: [], stoppedBy: 1 })).toEqual(['workers_stopped']);
  });

  it('a group is held back only when every live loop of its queue limits it, at the largest of their limits', () => {
    const group = { id: 'acme', tier: 'pro' };
    const loops = (...limits: ({ default: number | null; tiers: Record<string, number> } | null)[]) => ({
      loops: limits.map((groupConcurrency) => ({ groupConcurrency })),
      stoppedBy: 0,
    });
    const f = facts({ group, groupRunning: 2 });
    expect(codes(f, loops({ default: 1, tiers: { pro: 2 } }))).toEqual(['group_limit']);
    expect(codes(f, loops({ default: 1, tiers: { pro: 3 } }))).toEqual(['ready']);
    // a tier the loop does not name takes its default; a loop with no limit claims the job
    expect(codes(facts({ group: { id: 'x', tier: 'free' }, groupRunning: 1 }), loops({ default: 1, tiers: { pro: 3 } }))).toEqual([
      'group_limit',
    ]);
    expect(codes(f, loops({ default: 1, tiers: { pro: 2 } }, null))).toEqual(['ready']);
    expect(codes(f, loops({ default: 1, tiers: { pro: 2 } }, { default: 4, tiers: {} }))).toEqual(['ready']);
  });

  it('a ready job says where it stands', () => {
    expect(waitReasons(facts({ ahead: 0 }), worked)[0]!.text).toBe('Ready: no ready job of its queue is ahead of it in claim order.');
    expect(waitReasons(facts({ ahead: 1 }), worked)[0]!.text).toBe('Ready: 1 ready job of its queue is ahead of it in claim order.');
    expect(waitReasons(facts({ ahead: 1001 }), worked)[0]!.text).toBe(
      'Ready: more than 1,000 ready jobs of its queue are ahead of it in claim order.',
    );
  });
});

const job = (over: Partial<JobWithMetadata> = {}): JobWithMetadata => ({
  id: '42',
  name: 'mail',
  data: { to: 'a@b.c', token: 'secret-token' },
  state: 'failed',
  priority: 0,
  retryCount: 2,
  retryBase: 0,
  claimCount: 3,
  retryLimit: 2,
  retryDelay: 0,
  retryBackoff: false,
  retryDelayMax: null,
  expireInSeconds: 900,
  heartbeatSeconds: null,
  deleteAfterSeconds: 0,
  singletonKey: null,
  dedupeKey: null,
  startAfter: new Date(now - 60_000),
  createdOn: new Date(now - 60_000),
  startedOn: new Date(now - 10_000),
  completedOn: new Date(now - 5000),
  keepUntil: new Date(now + 86_400_000),
  leaseUntil: null,
  workerId: null,
  output: { sent: false, apiKey: 'k-123' },
  deadLetter: null,
  sourceName: null,
  sourceId: null,
  sourceCreatedOn: null,
  sourceRetryCount: null,
  sourceOutput: null,
  sourceRootId: null,
  lastError: { name: 'Error', message: '<img src=x onerror=alert(1)>', on: new Date(now - 5000), attempt: 3 },
  ...over,
});
const noLinks = { jobs: [], more: false };
const view = (j: JobWithMetadata, reasons: JobView['reasons'] = [], more: Partial<JobView> = {}): JobView => ({
  job: j,
  policy: 'standard',
  group: null,
  now,
  reasons,
  attempts: [],
  links: { parent: noLinks, child: noLinks, copy: noLinks },
  ...more,
});

describe('the job page', () => {
  it('shows the stored error as text, and the reasons with links to the job that holds it back', () => {
    const html = renderJobPage(
      view(job({ state: 'created' }), [{ code: 'key_blocked', text: 'Key "<k>" is blocked by job 7', jobId: '7' }]),
      '1.2.3',
      '/queues',
      undefined,
    );
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toContain('<img');
    expect(html).toContain('Why it is not running');
    expect(html).toContain('Key &quot;&lt;k&gt;&quot; is blocked by job 7 <a class="job" href="/queues/jobs/7">view that job</a>');
    expect(html).not.toMatch(/<script|style=/);
    expect(renderMissingJobPage('<1>', '1.2.3', '/queues')).toContain('No job &lt;1&gt;');
  });

  it('shows data and output as stored without redact, and only what redact(job) answers with it', () => {
    expect(shownValues(job(), undefined).data).toContain('secret-token');
    const shown = shownValues(job(), (j) => ({ data: { ...(j.data as object), token: '[hidden]' } }));
    expect(shown.data).toContain('[hidden]');
    expect(shown.data).not.toContain('secret-token');
    // output left out of the answer: not shown
    expect(shown.output).toBe('hidden by redact(job)');
    const html = renderJobPage(view(job()), '1.2.3', '/queues', () => ({ data: null, output: { sent: false } }));
    expect(html).not.toContain('secret-token');
    expect(html).not.toContain('k-123');
    // the stored error is shown unless the answer has a lastError of its own (null hides it)
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const masked = renderJobPage(view(job()), '1.2.3', '/queues', () => ({ lastError: { name: 'Error', message: 'token [hidden]' } }));
    expect(masked).toContain('Error: token [hidden]');
    expect(masked).not.toContain('onerror');
    const hidden = renderJobPage(view(job()), '1.2.3', '/queues', () => ({ lastError: null }));
    expect(hidden).toContain('Last error · attempt 3');
    expect(hidden).not.toContain('onerror');
  });

  it('a redact that throws hides both; redact gets a copy it cannot change the job through; long JSON is cut', () => {
    const j = job();
    // only the thrown error's name: its message may quote what redact was hiding
    expect(
      shownValues(j, () => {
        throw new SyntaxError('Unexpected token in "secret-token"');
      }),
    ).toEqual({
      data: 'hidden: redact(job) threw SyntaxError',
      output: 'hidden: redact(job) threw SyntaxError',
      error: { name: 'Error', message: 'hidden: redact(job) threw SyntaxError' },
    });
    shownValues(j, (copy) => {
      (copy.data as { token: string }).token = 'changed';
      return {};
    });
    expect((j.data as { token: string }).token).toBe('secret-token');
    const big = shownValues(job({ data: 'x'.repeat(SHOWN_JSON_MAX + 10) }), undefined).data;
    expect(big).toContain('cut at 65,536 characters: the rest is not shown');
    expect(big.length).toBeLessThan(SHOWN_JSON_MAX + 100);
  });

  it('lists the attempts with their errors and stacks, and the linked jobs, all as text', () => {
    const j = job({ output: { sent: false } });
    const attempts = attemptsOf(j, [
      {
        attempt: 1,
        worker: 'w<1>',
        startedOn: new Date(now - 9000).toISOString(),
        endedOn: new Date(now - 8500).toISOString(),
        name: 'LeaseExpiredError',
        message: 'lease of 900 seconds ran out (worker w1)',
      },
      { attempt: 2, worker: 'w2', startedOn: null, endedOn: null, name: 'Error', message: 'two' },
      {
        attempt: 3,
        worker: 'w3',
        startedOn: null,
        endedOn: null,
        name: 'Error',
        message: '<b>three</b>',
        stack: 'Error: <b>three</b>\n  at x',
      },
    ]);
    const links = {
      parent: { jobs: [{ queue: 'up<>', id: '7', state: 'completed' as const }], more: false },
      child: { jobs: [], more: false },
      copy: { jobs: [{ queue: 'dlq', id: '9', state: 'created' as const }], more: true },
    };
    const html = renderJobPage(view(j, [], { attempts, links }), '1.2.3', '/queues', undefined);
    expect(html).toContain('<td>the lease ran out</td><td>w&lt;1&gt;</td>');
    expect(html).toContain('<td>500 ms</td>');
    expect(html).toContain('Error: &lt;b&gt;three&lt;/b&gt;</span><details><summary>stack</summary>');
    // an attempt recorded without a stack shows its message alone
    expect(html).toMatch(/data-attempt="2">.*Error: two<\/span><\/td>/);
    expect(html).toContain('<a class="job" href="/queues/jobs/7">7</a> <span class="queue">up&lt;&gt;</span>');
    expect(html).toContain('Dead-letter copies');
    expect(html).toContain('and more: the first ones are listed');
    expect(html).not.toContain('<b>three</b>');
    // with redact: each attempt's error as redact(job) shows it when it is the job's last error
    const redacted = renderJobPage(view(j, [], { attempts, links }), '1.2.3', '/queues', (copy) => ({
      lastError: copy.lastError?.message === 'two' ? null : { name: 'Error', message: `[attempt ${copy.lastError?.attempt}]` },
    }));
    expect(redacted).toMatch(/data-attempt="1">.*Error: \[attempt 1\]/);
    expect(redacted).toMatch(/data-attempt="2">.*hidden by redact\(job\)/);
    expect(redacted).toMatch(/data-attempt="3">.*Error: \[attempt 3\]<\/span><\/td>/);
    expect(redacted).not.toContain('lease of 900 seconds');
    expect(redacted).not.toContain('two</span>');
  });
});

describe("a job's attempts", () => {
  it('adds the running attempt, or the completing one that started after the last failure, to the failed ones', () => {
    const at = (s: number) => new Date(now - s * 1000);
    const failedOnce = [
      { attempt: 1, worker: 'w', startedOn: at(60).toISOString(), endedOn: at(50).toISOString(), name: 'Error', message: 'x' },
    ];
    expect(
      attemptsOf(job({ state: 'active', retryCount: 1, workerId: 'w2', startedOn: at(5) }), failedOnce).map((a) => [
        a.attempt,
        a.outcome,
        a.worker,
      ]),
    ).toEqual([
      [1, 'failed', 'w'],
      [2, 'running', 'w2'],
    ]);
    expect(attemptsOf(job({ state: 'completed', retryCount: 1, startedOn: at(5) }), failedOnce).map((a) => a.outcome)).toEqual([
      'failed',
      'completed',
    ]);
    // completed by hand while it waited for its retry: its start is the failed attempt's, no attempt of its own
    expect(attemptsOf(job({ state: 'completed', retryCount: 1, startedOn: at(60) }), failedOnce).map((a) => a.outcome)).toEqual(['failed']);
    // completed by hand before any claim
    expect(attemptsOf(job({ state: 'completed', retryCount: 0, startedOn: null }), null)).toEqual([]);
    expect(attemptsOf(job({ state: 'completed', retryCount: 0, startedOn: at(5) }), null).map((a) => a.outcome)).toEqual(['completed']);
    expect(attemptsOf(job({ state: 'created', retryCount: 0 }), null)).toEqual([]);
    // failed for good: its last failure is the last attempt
    expect(attemptsOf(job({ state: 'failed', retryCount: 0 }), failedOnce)).toHaveLength(1);
    // errors in output (a dead-letter copy's source's, a failure before migration 18) are no attempts of this job
    expect(
      attemptsOf(job({ state: 'created', retryCount: 0, output: { errors: [{ name: 'E', message: 'b', retryCount: 0 }] } }), null),
    ).toEqual([]);
  });
});
