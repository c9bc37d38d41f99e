// The names each call accepts are written once (lib/core/config/option-keys.ts): docs/options.md names every one of them,
// and a name outside them is refused with what the call takes, a near miss's "did you mean", or what to write
// instead of pg-boss's name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidOptionError } from '../../lib/core/errors.js';
import * as keys from '../../lib/core/config/option-keys.js';
import type { OptionKeys } from '../../lib/core/config/option-keys.js';
import { closestKey, noUnknownKeys } from '../../lib/core/config/validate.js';

const optionsPage = readFileSync(fileURLToPath(new URL('../../docs/options.md', import.meta.url)), 'utf8');

/** The text of the `## title` section of docs/options.md. */
function section(title: string): string {
  const start = optionsPage.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/options.md has no section "${title}"`);
  const end = optionsPage.indexOf('\n## ', start + 1);
  return optionsPage.slice(start, end < 0 ? undefined : end);
}

const MODULE = 'Module options';
const QUEUE = 'Queue settings';
const JOB = 'Job options';
const WORK = 'Worker loop options';
const OTHER = 'Options of the other calls';

const documented: [string, OptionKeys, string[]][] = [
  ['MODULE_OPTIONS', keys.MODULE_OPTIONS, [MODULE]],
  ['QUEUE_OPTIONS', keys.QUEUE_OPTIONS, [QUEUE]],
  ['DEFINE_JOB_OPTIONS', keys.DEFINE_JOB_OPTIONS, [QUEUE, OTHER]],
  ['WORK_OPTIONS', keys.WORK_OPTIONS, [WORK]],
  ['HANDLER_OPTIONS', keys.HANDLER_OPTIONS, [QUEUE, WORK, OTHER]],
  ['SEND_OPTIONS', keys.SEND_OPTIONS, [JOB]],
  ['INSERT_JOB_OPTIONS', keys.INSERT_JOB_OPTIONS, [JOB]],
  ['FLOW_JOB_OPTIONS', keys.FLOW_JOB_OPTIONS, [JOB, OTHER]],
  ['BULK_CALL_OPTIONS', keys.BULK_CALL_OPTIONS, [OTHER]],
  ['SCHEDULE_OPTIONS', keys.SCHEDULE_OPTIONS, [JOB, OTHER]],
  ['DECLARED_SCHEDULE_OPTIONS', keys.DECLARED_SCHEDULE_OPTIONS, [JOB, OTHER]],
  ['FETCH_OPTIONS', keys.FETCH_OPTIONS, [OTHER]],
  ['QUEUE_EVENT_OPTIONS', keys.QUEUE_EVENT_OPTIONS, [OTHER]],
];

describe('docs/options.md and the names the code accepts', () => {
  it('covers every set of option-keys.ts', () => {
    const sets = Object.entries(keys).filter(([, v]) => (v as Partial<OptionKeys>).keys instanceof Set);
    expect(sets.map(([name]) => name).sort()).toEqual(documented.map(([name]) => name).sort());
  });

  it.each(documented)('%s: every name is in the page, where the call is described', (_name, set, titles) => {
    const text = titles.map(section).join('\n');
    expect([...set.keys].filter((key) => !text.includes(`\`${key}\``))).toEqual([]);
  });

  it('no hint is given for a name the set accepts', () => {
    for (const [name, set] of documented) expect([name, Object.keys(set.hints).filter((k) => set.keys.has(k))]).toEqual([name, []]);
  });
});

describe('noUnknownKeys', () => {
  const refusal = (value: Record<string, unknown>, set: OptionKeys): InvalidOptionError => {
    try {
      noUnknownKeys('options', value, set.keys, set.hints);
    } catch (err) {
      return err as InvalidOptionError;
    }
    throw new Error('not refused');
  };

  it("says what to write instead of pg-boss's work options", () => {
    const err = refusal({ localConcurrency: 4 }, keys.WORK_OPTIONS);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err).toMatchObject({ field: 'options.localConcurrency', value: 4 });
    expect(err.message).toMatch(/^options\.localConcurrency must be left out: pg-boss 12's localConcurrency is concurrency here/);
    expect(err.message).toContain('(known options: concurrency, batchSize,');
    for (const [key, says] of [
      ['teamSize', 'is concurrency here'],
      ['teamConcurrency', 'is concurrency here'],
      ['newJobCheckInterval', 'is pollingIntervalSeconds here, in seconds'],
      ['newJobCheckIntervalSeconds', 'is pollingIntervalSeconds here'],
      ['includeMetadata', 'getJobById'],
      ['minPriority', 'a fetch() option'],
    ] as const)
      expect(refusal({ [key]: 1 }, keys.WORK_OPTIONS).message).toContain(says);
  });

  it('says where a misplaced option goes: a job of insert or flow has no db of its own, send takes no data', () => {
    expect(refusal({ db: {} }, keys.INSERT_JOB_OPTIONS).message).toContain('give the call its options.db, insert(name, jobs, { db })');
    expect(refusal({ db: {} }, keys.FLOW_JOB_OPTIONS).message).toContain('flow(jobs, { db })');
    expect(refusal({ options: {} }, keys.FLOW_JOB_OPTIONS).message).toContain("pg-boss's options sit on the job itself");
    expect(refusal({ data: 1 }, keys.SEND_OPTIONS).message).toContain("the payload is the call's data argument");
    expect(refusal({ data: 1 }, keys.SCHEDULE_OPTIONS).message).toContain("schedule()'s third argument");
    expect(refusal({ concurrency: 2 }, keys.DEFINE_JOB_OPTIONS).message).toContain('@QueueHandler(job, { concurrency })');
    expect(refusal({ max: 5 }, keys.MODULE_OPTIONS).message).toContain("pg-boss's max is poolSize here");
  });

  it('suggests the name one or two letters away, and lists the known ones otherwise', () => {
    expect(refusal({ retryLimt: 3 }, keys.SEND_OPTIONS).message).toMatch(
      /^options\.retryLimt must be one of the known options \(priority, .*\); did you mean retryLimit\?, got 3$/,
    );
    expect(refusal({ zzz: 1 }, keys.SEND_OPTIONS).message).toMatch(/^options\.zzz must be one of the known options \([^)]*\), got 1$/);
  });

  it('leaves a key whose value is undefined alone, as if it were not given', () => {
    expect(() => noUnknownKeys('options', { nope: undefined }, keys.SEND_OPTIONS.keys)).not.toThrow();
  });
});

describe('closestKey', () => {
  it.each([
    ['concurency', 'concurrency'],
    ['Concurrency', 'concurrency'],
    ['bacthSize', 'batchSize'],
    ['queues', 'queue'],
    ['pollingIntervalSecond', 'pollingIntervalSeconds'],
  ])('%s → %s', (typo, meant) => {
    expect(closestKey(typo, [...keys.WORK_OPTIONS.keys, 'queue'])).toBe(meant);
  });

  it.each(['cc', 'timeout', 'pollingInterval'])('%s: nothing close enough', (typo) => {
    expect(closestKey(typo, keys.WORK_OPTIONS.keys)).toBeNull();
  });
});
