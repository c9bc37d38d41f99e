// Attacks through input the engine passes to PostgreSQL, each answered with a typed error naming the field (a 4xx
// through the admin API, exit code 2 through the CLI), before anything is written: a NUL character in a key, a filter
// or a payload (text and jsonb cannot hold one: the driver's 22021 or 22P05 was a 500), a payload nested thousands
// deep (a RangeError in Node, a 54001 in PostgreSQL), and a queue named `__proto__`, which vanished from the health
// report.
import { InvalidOptionError, InvalidPayloadError, QueueError } from '../../lib/core/errors.js';
import type { PgQueue } from '../../lib/core/pg-queue.js';
import { MAX_PAYLOAD_DEPTH } from '../../lib/core/config/validate.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('secinput');
const q = f.create({ supervise: false });
beforeAll(() => q.createQueue('good'));
afterAll(() => f.cleanup());

const NUL = 'a\u0000b';

/** `levels` arrays, each inside the next. */
function nested(levels: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}

interface Case {
  what: string;
  call: (q: PgQueue) => unknown;
  error: new (...args: never[]) => QueueError;
  /** The field the error names (InvalidOptionError and InvalidPayloadError carry it). */
  field: string;
  says: string[];
}

const cases: Case[] = [
  ...(['singletonKey', 'dedupeKey'] as const).map((key): Case => ({
    what: `a NUL in send's ${key}`,
    call: (q) => q.send('good', {}, { [key]: NUL }),
    error: InvalidOptionError,
    field: `options.${key}`,
    says: [`options.${key} must be text without NUL characters`, 'got "a\\u0000b"'],
  })),
  {
    what: 'a NUL in a group id',
    call: (q) => q.send('good', {}, { group: { id: NUL } }),
    error: InvalidOptionError,
    field: 'options.group.id',
    says: ['options.group.id must be text without NUL'],
  },
  {
    what: 'a NUL in a group tier',
    call: (q) => q.send('good', {}, { group: { id: 'g', tier: NUL } }),
    error: InvalidOptionError,
    field: 'options.group.tier',
    says: ['options.group.tier must be text without NUL'],
  },
  {
    what: 'a NUL in the key of one job of insert()',
    call: (q) => q.insert('good', [{ data: 1 }, { data: 2, singletonKey: NUL }]),
    error: InvalidOptionError,
    field: 'jobs[1].singletonKey',
    says: ['jobs[1].singletonKey must be text without NUL'],
  },
  {
    what: "a NUL in sendThrottled's key",
    call: (q) => q.sendThrottled('good', {}, null, 60, NUL),
    error: InvalidOptionError,
    field: 'key',
    says: ['key must be text without NUL'],
  },
  {
    what: "a NUL in findJobs' singletonKey filter",
    call: (q) => q.findJobs('good', { singletonKey: NUL }),
    error: InvalidOptionError,
    field: 'options.singletonKey',
    says: ['options.singletonKey must be text without NUL'],
  },
  {
    what: "a NUL in findJobs' dedupeKey filter",
    call: (q) => q.findJobs('good', { dedupeKey: NUL }),
    error: InvalidOptionError,
    field: 'options.dedupeKey',
    says: ['options.dedupeKey must be text without NUL'],
  },
  {
    what: "a NUL in update()'s singletonKey",
    call: (q) => q.update('good', { n: 1 }, { singletonKey: NUL }),
    error: InvalidOptionError,
    field: 'options.singletonKey',
    says: ['options.singletonKey must be text without NUL'],
  },
  {
    what: "a NUL in a schedule's key",
    call: (q) => q.schedule('good', '* * * * *', {}, { key: NUL }),
    error: InvalidOptionError,
    field: 'options.key',
    says: ['options.key must be text without NUL'],
  },
  {
    what: "a NUL in unschedule's key",
    call: (q) => q.unschedule('good', NUL),
    error: InvalidOptionError,
    field: 'key',
    says: ['key must be text without NUL'],
  },
  {
    what: 'a lone surrogate in a singletonKey (the driver would store U+FFFD: two keys would become one)',
    call: (q) => q.send('good', {}, { singletonKey: 'k\ud800' }),
    error: InvalidOptionError,
    field: 'options.singletonKey',
    says: ['lone UTF-16 surrogates'],
  },
  {
    what: 'a NUL in a payload string',
    call: (q) => q.send('good', { user: { name: NUL } }),
    error: InvalidPayloadError,
    field: 'data',
    says: ['data must be JSON-serialisable', 'NUL character', 'at user.name'],
  },
  {
    what: 'a NUL in a payload key',
    call: (q) => q.send('good', { [NUL]: 1 }),
    error: InvalidPayloadError,
    field: 'data',
    says: ['NUL character', 'in a key'],
  },
  {
    what: 'a NUL in what a toJSON() of the payload returns',
    call: (q) => q.send('good', { amount: { toJSON: () => NUL } }),
    error: InvalidPayloadError,
    field: 'data',
    says: ['NUL character', 'toJSON()'],
  },
  {
    what: 'a NUL in a payload given to update()',
    call: (q) => q.update('good', { s: NUL }, { singletonKey: 'k' }),
    error: InvalidPayloadError,
    field: 'data',
    says: ['NUL character', 'at s'],
  },
  {
    what: "a NUL in a schedule's data",
    call: (q) => q.schedule('good', '* * * * *', { s: NUL }),
    error: InvalidPayloadError,
    field: 'data',
    says: ['NUL character', 'at s'],
  },
  {
    what: 'a payload nested 10,000 levels deep',
    call: (q) => q.send('good', nested(10_000)),
    error: InvalidPayloadError,
    field: 'data',
    says: [`data must be JSON nested at most ${MAX_PAYLOAD_DEPTH} levels deep`, 'got deeper nesting at 0.0.0'],
  },
  {
    what: 'a payload one level past the limit, in an object',
    call: (q) => q.send('good', { tree: nested(MAX_PAYLOAD_DEPTH) }),
    error: InvalidPayloadError,
    field: 'data',
    says: [`at most ${MAX_PAYLOAD_DEPTH} levels deep`, 'at tree.0.0'],
  },
  {
    what: 'a toJSON() returning a payload nested 100,000 levels deep',
    call: (q) => q.send('good', { deep: { toJSON: () => nested(100_000) } }),
    error: InvalidPayloadError,
    field: 'data',
    says: [`at most ${MAX_PAYLOAD_DEPTH} levels deep`, 'toJSON()'],
  },
  {
    what: "one of insert()'s jobs nested too deep",
    call: (q) => q.insert('good', [{ data: 1 }, { data: nested(20_000) }]),
    error: InvalidPayloadError,
    field: 'jobs[1].data',
    says: ['jobs[1].data must be JSON nested at most'],
  },
];

async function snapshot(): Promise<{ jobs: number; schedules: number }> {
  const [row] = await f.sql<{ jobs: number; schedules: number }>(
    'SELECT (SELECT count(*) FROM $schema.jobs)::int AS jobs, (SELECT count(*) FROM $schema.schedules)::int AS schedules',
  );
  return row!;
}

describe('input PostgreSQL cannot take is refused up front, naming the field, and nothing is written', () => {
  it.each(cases.map((c) => [c.what, c] as const))('%s', async (_what, c) => {
    const before = await snapshot();
    const thrown = await Promise.resolve()
      .then(() => c.call(q))
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(thrown).toBeInstanceOf(c.error);
    expect((thrown as { field?: string }).field).toBe(c.field);
    for (const fragment of c.says) expect((thrown as Error).message).toContain(fragment);
    expect(await snapshot()).toEqual(before);
  });

  it(`a payload nested exactly ${MAX_PAYLOAD_DEPTH} levels deep is stored and read back whole`, async () => {
    const id = (await q.send('good', nested(MAX_PAYLOAD_DEPTH)))!;
    const job = (await q.getJobById('good', id))!;
    let depth = 0;
    for (let v = job.data; Array.isArray(v); v = v[0] as unknown) depth++;
    expect(depth).toBe(MAX_PAYLOAD_DEPTH);
    await q.deleteJob('good', id);
  });
});

describe('a queue named like an Object.prototype property', () => {
  it.each(['__proto__', 'constructor', 'toString'])('%s keeps its entry in the health report, and in its JSON', async (name) => {
    await q.createQueue(name);
    await q.send(name, { n: 1 });
    await q.monitor({ force: true });
    const report = await q.checkHealth({ queues: [name, 'good'] });
    expect(report.reasons).toEqual([]);
    expect(Object.getPrototypeOf(report.queues)).toBe(Object.prototype);
    expect(Object.hasOwn(report.queues, name)).toBe(true);
    expect(report.queues[name]).toMatchObject({ queued: 1, ready: 1 });
    const json = JSON.parse(JSON.stringify(report)) as { queues: Record<string, { queued: number }> };
    expect(Object.keys(json.queues).sort()).toEqual(['good', name].sort());
    expect(Object.getOwnPropertyDescriptor(json.queues, name)?.value).toMatchObject({ queued: 1 });
    await q.deleteQueue(name);
  });

  it('a flow whose job is referred to as __proto__ links its children to it', async () => {
    await q.createQueue('flow.p');
    const ids = await q.flow([
      { name: 'flow.p', ref: '__proto__', data: { step: 1 } },
      { name: 'flow.p', ref: 'child', data: { step: 2 }, dependsOn: ['__proto__'] },
    ]);
    expect(Object.hasOwn(ids, '__proto__')).toBe(true);
    expect(await q.getDependencies('flow.p', ids.child!)).toEqual([
      expect.objectContaining({ id: Object.getOwnPropertyDescriptor(ids, '__proto__')!.value }),
    ]);
    await q.deleteQueue('flow.p');
  });
});
