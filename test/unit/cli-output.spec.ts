// What the pgqueue command shows a person: aligned tables, times, durations, cut messages, and the progress bar.
import { cliLogger, type CliIo } from '../../lib/cli/io.js';
import { printable, printableLines } from '../../lib/cli/printable.js';
import { run } from '../../lib/cli/program.js';
import { ProgressBar, renderProgress } from '../../lib/cli/progress.js';
import { formatSeconds, formatTable, formatTime, oneLine } from '../../lib/cli/table.js';
import { jobsTable } from '../../lib/cli/jobs.js';
import { queuesTable } from '../../lib/cli/queues.js';
import type { JobWithMetadata, QueueResult } from '../../lib/core/types.js';

describe('tables', () => {
  it('pads each column to its widest cell, numbers to the right, with no trailing blanks', () => {
    const text = formatTable(
      [{ header: 'queue' }, { header: 'n', right: true }, { header: 'note' }],
      [
        ['emails', '7', ''],
        ['a', '1234', 'x'],
      ],
    );
    expect(text).toBe(['queue      n  note', 'emails     7', 'a       1234  x', ''].join('\n'));
  });

  it('writes times in UTC to the second, durations in their two largest units, and none as a dash', () => {
    expect(formatTime(new Date('2025-03-01T14:05:09.123Z'))).toBe('2025-03-01 14:05:09Z');
    expect(formatTime(null)).toBe('-');
    expect([0, 0.4, 45, 185, 7620, 356_400].map(formatSeconds)).toEqual(['-', '0s', '45s', '3m05s', '2h07m', '4d03h']);
  });

  it('puts a message on one line and cuts it with an ellipsis at the width', () => {
    expect(oneLine('connection\n  refused', 60)).toBe('connection refused');
    expect(oneLine('abcdefghij', 5)).toBe('abcd…');
    expect(oneLine('abcde', 5)).toBe('abcde');
  });

  it('shows a queue with its counts and paused flag, and with --cached when it was counted', () => {
    const queue = {
      name: 'emails',
      policy: 'standard',
      queuedCount: 12,
      readyCount: 10,
      deferredCount: 2,
      blockedCount: 0,
      activeCount: 3,
      failedCount: 1,
      totalCount: 40,
      readyOldestSeconds: 75,
      paused: true,
      countedOn: null,
    } as QueueResult;
    const [header, row] = queuesTable([queue], false).split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'queue',
      'policy',
      'queued',
      'ready',
      'deferred',
      'blocked',
      'active',
      'failed',
      'total',
      'oldest ready',
      'paused',
    ]);
    expect(row!.trim().split(/\s+/)).toEqual(['emails', 'standard', '12', '10', '2', '0', '3', '1', '40', '1m15s', 'yes']);
    expect(queuesTable([queue], true).split('\n')[1]).toMatch(/yes\s+never$/);
  });

  it('shows a job with its retries used of its limit and its last error on one line', () => {
    const job = {
      id: '42',
      state: 'failed',
      retryCount: 2,
      retryLimit: 2,
      createdOn: new Date('2025-01-01T00:00:00Z'),
      completedOn: new Date('2025-01-01T00:01:00Z'),
      lastError: { name: 'Error', message: 'smtp\nrefused', on: new Date(), attempt: 3 },
    } as JobWithMetadata;
    const row = jobsTable([job, { ...job, id: '7', state: 'created', retryCount: 0, completedOn: null, lastError: null }]).split('\n');
    expect(row[1]).toBe('42  failed       2/2  2025-01-01 00:00:00Z  2025-01-01 00:01:00Z  smtp refused');
    expect(row[2]).toBe(' 7  created      0/2  2025-01-01 00:00:00Z  -');
  });
});

describe('text from the database or a driver, written to a terminal', () => {
  const hostile = 'boom\x1b[2J\x1b]52;c;aGk=\x07\rok\u202egnp.exe\u2028\x9b31m\x7f';

  it('has every control and bidirectional formatting character escaped, and nothing else changed', () => {
    expect(printable(hostile)).toBe('boom\\x1b[2J\\x1b]52;c;aGk=\\x07\\x0dok\\u202egnp.exe\\u2028\\x9b31m\\x7f');
    expect(printable('plain text, accents é, emoji 😀, a tab\there')).toBe('plain text, accents é, emoji 😀, a tab\\x09here');
    expect(printable(printable(hostile))).toBe(printable(hostile));
    expect(printableLines('line one\x1b[2J\nline two\n')).toBe('line one\\x1b[2J\nline two\n');
  });

  /* eslint-disable no-control-regex -- no control character may reach the terminal but the line breaks */
  it('in a table, every cell; in a one-line message, blanks flattened then the rest escaped before the cut', () => {
    const table = formatTable([{ header: 'queue' }, { header: 'note' }], [['q\x1b[31m', 'x']]);
    expect(table).not.toMatch(/\x1b/);
    expect(table.split('\n')[1]).toBe('q\\x1b[31m  x');
    expect(oneLine('a\nb\x1b[2Jc', 60)).toBe('a b\\x1b[2Jc');
    expect(oneLine('\x1b'.repeat(100), 10)).toHaveLength(10);
    const job = {
      id: '1',
      state: 'failed',
      retryCount: 0,
      retryLimit: 0,
      createdOn: new Date(0),
      completedOn: null,
      lastError: { name: 'Error', message: hostile, on: new Date(), attempt: 1 },
    } as JobWithMetadata;
    expect(jobsTable([job])).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\u2028]/);
  });

  it("in the engine's warnings and a failed command's message, on stderr", async () => {
    const written: string[] = [];
    const io: CliIo = { out: (t) => written.push(t), err: (t) => written.push(t), errIsTty: false, env: {} };
    cliLogger(io).warn(`stale ${hostile}`);
    cliLogger(io).error(hostile);
    // a queue name is checked by the command line before anything else: its message quotes what was typed
    expect(await run(['jobs', `q${hostile}`], io)).toBe(2);
    expect(written.join('')).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\u2028]/);
    expect(written[0]).toBe(`pgqueue: warning: stale ${printable(hostile)}\n`);
  });
  /* eslint-enable no-control-regex */
});

describe('the progress bar', () => {
  it('fills with the share done, and grows its total when the count passes it', () => {
    expect(renderProgress('retried', 40, 100, 20)).toBe('retried 40/100 [########------------]  40%');
    expect(renderProgress('retried', 0, 100, 10)).toBe('retried 0/100 [----------]   0%');
    expect(renderProgress('retried', 5, 3, 10)).toBe('retried 5/5 [##########] 100%');
    expect(renderProgress('retried', 0, 0, 4)).toBe('retried 0/0 [####] 100%');
  });

  it('redraws in place and ends its line; disabled (no terminal, or JSON) it writes nothing', () => {
    const written: string[] = [];
    const bar = new ProgressBar((t) => written.push(t), 'retried', true);
    bar.update(1, 2);
    bar.update(2, 2);
    bar.end();
    expect(written).toEqual([`\r${renderProgress('retried', 1, 2)}\x1b[K`, `\r${renderProgress('retried', 2, 2)}\x1b[K`, '\n']);
    const quiet: string[] = [];
    const off = new ProgressBar((t) => quiet.push(t), 'retried', false);
    off.update(1, 2);
    off.end();
    expect(quiet).toEqual([]);
  });
});
