import { SnapshotRedactor } from '../../lib/core/dashboard/redacted.js';
import { emptySnapshot } from '../../lib/core/dashboard/sampler.js';
import type { DashboardSnapshot } from '../../lib/core/dashboard/model.js';
import { redactJob, redactMessage, redactOption } from '../../lib/core/http/redact.js';
import type { JobWithMetadata } from '../../lib/core/types.js';

const job = { id: '7', name: 'mail', data: { token: 't' }, output: { ok: 1 }, lastError: null } as unknown as JobWithMetadata;

describe('redact', () => {
  it('is a synchronous function or absent; an async one is refused at the start', () => {
    expect(redactOption(undefined)).toBeUndefined();
    const fn = () => ({});
    expect(redactOption(fn)).toBe(fn);
    expect(() => redactOption(async () => ({}))).toThrow(/^redact must be a synchronous function .*, got "an async function"$/);
    expect(() => redactOption(function* () {})).toThrow(/got "a generator function"$/);
    expect(() => redactOption('data')).toThrow(/^redact must be/);
  });

  it('shows what it answers, hides what it leaves out, and hides all when it throws, answers a promise or no object', () => {
    expect(redactJob(job, undefined)).toEqual({
      data: { value: { token: 't' } },
      output: { value: { ok: 1 } },
      sourceOutput: { value: undefined },
      lastError: { value: null },
    });
    expect(redactJob(job, () => ({ data: { token: '[x]' }, sourceOutput: null }))).toEqual({
      data: { value: { token: '[x]' } },
      output: { hidden: 'hidden by redact(job)' },
      sourceOutput: { value: null },
      lastError: { value: null },
    });
    expect(redactJob(job, () => ({ lastError: { name: 'E', message: 'm', extra: 1 } as never })).lastError).toEqual({
      value: { name: 'E', message: 'm' },
    });
    const threw = redactJob(job, () => {
      throw new TypeError('secret t in message');
    });
    expect(threw.data).toEqual({ hidden: 'hidden: redact(job) threw TypeError' });
    expect(JSON.stringify(threw)).not.toContain('secret');
    const promised = redactJob(job, (() => Promise.reject(new Error('x'))) as never);
    expect(promised.output).toEqual({ hidden: 'hidden: redact(job) returned a promise (it must answer at once)' });
    expect(redactJob(job, (() => null) as never).data).toEqual({ hidden: 'hidden: redact(job) returned null' });
  });

  it('gets a copy: it cannot change the job it is shown', () => {
    redactJob(job, (copy) => {
      (copy.data as { token: string }).token = 'changed';
      return {};
    });
    expect((job.data as { token: string }).token).toBe('t');
  });

  it('decides a list’s failure message with what the list knows of the job', () => {
    const seen: unknown[] = [];
    const message = redactMessage({ id: '9', queue: 'q', message: 'key=abc', at: 1000, attempt: 2 }, (j) => {
      seen.push(j);
      return { lastError: { name: 'Error', message: j.lastError!.message.replace('abc', '***') } };
    });
    expect(message).toBe('key=***');
    expect(seen[0]).toMatchObject({
      id: '9',
      name: 'q',
      state: 'failed',
      lastError: { message: 'key=abc', attempt: 2, on: new Date(1000) },
    });
    expect(redactMessage({ id: '9', queue: 'q', message: 'm', at: null, attempt: null }, () => ({ lastError: null }))).toBe(
      'hidden by redact(job)',
    );
    // a redact that reads the data a list does not have: hidden, never shown as stored
    expect(redactMessage({ id: '9', queue: 'q', message: 'm', at: null, attempt: null }, (j) => ({ data: (j.data as { a: 1 }).a }))).toBe(
      'hidden: redact(job) threw TypeError',
    );
  });

  it('applies to a snapshot’s feed and problems once per snapshot and once per feed event', () => {
    let calls = 0;
    const r = new SnapshotRedactor((j) => {
      calls++;
      return { lastError: { name: 'Error', message: j.lastError!.message.toUpperCase() } };
    });
    const event = { kind: 'failed' as const, id: '1', queue: 'q', at: 1, message: 'boom' };
    const s: DashboardSnapshot = {
      ...emptySnapshot(),
      feed: [event, { kind: 'sent', id: '2', queue: 'q', at: 1 }],
      problems: [{ id: '1', queue: 'q', task: null, attempts: 1, error: 'boom', at: 1 }],
    };
    const v = r.view(s);
    expect(v.feed[0]!.message).toBe('BOOM');
    expect(v.feed[1]).toBe(s.feed[1]);
    expect(v.problems[0]!.error).toBe('BOOM');
    expect(r.view(s)).toBe(v);
    expect(calls).toBe(2);
    // the next snapshot keeps the same event and problem: not redacted again
    r.view({ ...s });
    expect(calls).toBe(2);
    expect(new SnapshotRedactor(undefined).view(s)).toBe(s);
  });
});
