import { InvalidOptionError, InvalidPayloadError, PayloadTooLargeError, QueueError, QueueNotFoundError } from '../../lib/core/errors.js';
import { resolveConfig } from '../../lib/core/config/config.js';
import type { PgQueue } from '../../lib/core/pg-queue.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('badinput');
const q = f.create({ maxPayloadBytes: 1000 });
beforeAll(() => q.createQueue('good'));
afterAll(() => f.cleanup());

const cycle: Record<string, unknown> = { a: 1 };
cycle.self = cycle;

interface Case {
  what: string;
  call: (q: PgQueue) => unknown;
  error: new (...args: never[]) => QueueError;
  /** Every fragment must appear in the message: the field, the accepted range, the value given. */
  says: string[];
}

const url = 'postgres://unused';
const cases: Case[] = [
  // queue names
  {
    what: 'empty queue name',
    call: (q) => q.send('', {}),
    error: InvalidOptionError,
    says: ['name must be', '1 to 100 characters', 'got ""'],
  },
  {
    what: 'queue name over 100 characters',
    call: (q) => q.send('x'.repeat(101), {}),
    error: InvalidOptionError,
    says: ['name must be', '1 to 100', 'got "xxx'],
  },
  {
    what: 'queue name with a space',
    call: (q) => q.send('bad name', {}),
    error: InvalidOptionError,
    says: ['name must be', '[A-Za-z0-9_.-/:]', 'got "bad name"'],
  },
  {
    what: 'queue name that is not a string',
    call: (q) => q.send(42 as never, {}),
    error: InvalidOptionError,
    says: ['name must be', 'got 42'],
  },
  {
    what: 'createQueue with a bad name',
    call: (q) => q.createQueue('no*stars'),
    error: InvalidOptionError,
    says: ['name must be', 'got "no*stars"'],
  },
  // unknown queue
  {
    what: 'unknown queue',
    call: (q) => q.send('missing-queue', {}),
    error: QueueNotFoundError,
    says: ['queue "missing-queue" does not exist'],
  },
  {
    what: 'insert into unknown queue',
    call: (q) => q.insert('missing-queue', [{ data: 1 }]),
    error: QueueNotFoundError,
    says: ['"missing-queue"'],
  },
  // integers
  {
    what: 'negative retryLimit',
    call: (q) => q.send('good', {}, { retryLimit: -1 }),
    error: InvalidOptionError,
    says: ['options.retryLimit must be', 'from 0 to 1000000', 'got -1'],
  },
  {
    what: 'fractional retryLimit',
    call: (q) => q.send('good', {}, { retryLimit: 1.5 }),
    error: InvalidOptionError,
    says: ['options.retryLimit', 'integer', 'got 1.5'],
  },
  {
    what: 'NaN retryDelay',
    call: (q) => q.send('good', {}, { retryDelay: NaN }),
    error: InvalidOptionError,
    says: ['options.retryDelay', 'integer from 0 to 315360000', 'got NaN'],
  },
  {
    what: 'priority as a string',
    call: (q) => q.send('good', {}, { priority: '5' as never }),
    error: InvalidOptionError,
    says: ['options.priority', 'integer', 'got "5"'],
  },
  {
    what: 'fractional priority',
    call: (q) => q.send('good', {}, { priority: 0.5 }),
    error: InvalidOptionError,
    says: ['options.priority', 'integer', 'got 0.5'],
  },
  {
    what: 'expireInSeconds of 0',
    call: (q) => q.send('good', {}, { expireInSeconds: 0 }),
    error: InvalidOptionError,
    says: ['options.expireInSeconds', 'from 1 to 86400', 'got 0'],
  },
  {
    what: 'expireInSeconds over a day',
    call: (q) => q.send('good', {}, { expireInSeconds: 86401 }),
    error: InvalidOptionError,
    says: ['options.expireInSeconds', 'from 1 to 86400', 'got 86401'],
  },
  {
    what: 'heartbeatSeconds of 0',
    call: (q) => q.send('good', {}, { heartbeatSeconds: 0 }),
    error: InvalidOptionError,
    says: ['options.heartbeatSeconds', 'from 1 to 86400', 'got 0'],
  },
  {
    what: 'negative deleteAfterSeconds',
    call: (q) => q.send('good', {}, { deleteAfterSeconds: -5 }),
    error: InvalidOptionError,
    says: ['options.deleteAfterSeconds', 'from 0', 'got -5'],
  },
  {
    what: 'retentionSeconds of 0',
    call: (q) => q.send('good', {}, { retentionSeconds: 0 }),
    error: InvalidOptionError,
    says: ['options.retentionSeconds', 'from 1', 'got 0'],
  },
  {
    what: 'Infinity retryDelayMax',
    call: (q) => q.send('good', {}, { retryDelayMax: Infinity }),
    error: InvalidOptionError,
    says: ['options.retryDelayMax', 'integer', 'got Infinity'],
  },
  {
    what: 'retryBackoff as a string',
    call: (q) => q.send('good', {}, { retryBackoff: 'yes' as never }),
    error: InvalidOptionError,
    says: ['options.retryBackoff', 'true or false', 'got "yes"'],
  },
  // startAfter
  {
    what: 'startAfter as prose',
    call: (q) => q.send('good', {}, { startAfter: 'tomorrow' }),
    error: InvalidOptionError,
    says: ['options.startAfter', 'ISO-8601', 'got "tomorrow"'],
  },
  {
    what: 'startAfter as an invalid Date',
    call: (q) => q.send('good', {}, { startAfter: new Date('nope') }),
    error: InvalidOptionError,
    says: ['options.startAfter', 'a Date', 'got Invalid Date'],
  },
  {
    what: 'negative startAfter seconds',
    call: (q) => q.send('good', {}, { startAfter: -5 }),
    error: InvalidOptionError,
    says: ['options.startAfter', 'from 0 to 315360000', 'got -5'],
  },
  {
    what: 'fractional startAfter seconds',
    call: (q) => q.sendAfter('good', {}, {}, 1.5),
    error: InvalidOptionError,
    says: ['startAfter must be', 'integer', 'got 1.5'],
  },
  // other options
  {
    what: 'a group without an id',
    call: (q) => q.send('good', {}, { group: { tier: 'pro' } as never }),
    error: InvalidOptionError,
    says: ['options.group.id', '1 to 255 characters', 'got undefined'],
  },
  {
    what: 'a concurrencyLimit of 0',
    call: (q) => q.createQueue('never-made', { concurrencyLimit: 0 }),
    error: InvalidOptionError,
    says: ['options.concurrencyLimit', 'from 1 to 100000', 'got 0'],
  },
  {
    what: 'a rateLimit without perSeconds',
    call: (q) => q.createQueue('never-made', { rateLimit: { count: 5 } as never }),
    error: InvalidOptionError,
    says: ['options.rateLimit.perSeconds', 'from 1 to 86400', 'got undefined'],
  },
  {
    what: 'work with groupConcurrency 0',
    call: (q) => q.work('good', { groupConcurrency: 0 }, () => 1),
    error: InvalidOptionError,
    says: ['options.groupConcurrency', 'from 1 to 100000', 'got 0'],
  },
  {
    what: 'empty singletonKey',
    call: (q) => q.send('good', {}, { singletonKey: '' }),
    error: InvalidOptionError,
    says: ['options.singletonKey', '1 to 1000 characters', 'got ""'],
  },
  {
    what: 'misspelt option',
    call: (q) => q.send('good', {}, { retryLimt: 3 } as never),
    error: InvalidOptionError,
    says: ['options.retryLimt', 'known options', 'got 3'],
  },
  {
    what: 'db that is not a transaction',
    call: (q) => q.send('good', {}, { db: 'tx' as never }),
    error: InvalidOptionError,
    says: ['options.db', 'Drizzle', 'got "tx"'],
  },
  {
    what: 'options that are not an object',
    call: (q) => q.send('good', {}, 5 as never),
    error: InvalidOptionError,
    says: ['options must be an object', 'got 5'],
  },
  // data
  {
    what: 'BigInt data',
    call: (q) => q.send('good', { n: 10n }),
    error: InvalidPayloadError,
    says: ['data must be JSON-serialisable', 'a BigInt at n'],
  },
  {
    what: 'circular data',
    call: (q) => q.send('good', cycle),
    error: InvalidPayloadError,
    says: ['data must be JSON-serialisable', 'circular reference at self'],
  },
  {
    what: 'a function as data',
    call: (q) => q.send('good', { run: () => 1 }),
    error: InvalidPayloadError,
    says: ['data must be JSON-serialisable', 'a function at run'],
  },
  {
    what: 'NaN inside data',
    call: (q) => q.send('good', { list: [1, NaN] }),
    error: InvalidPayloadError,
    says: ['data must be JSON-serialisable', 'NaN at list.1'],
  },
  {
    what: 'data over maxPayloadBytes',
    call: (q) => q.send('good', { s: 'x'.repeat(2000) }),
    error: PayloadTooLargeError,
    says: ['data must serialise to at most 1000 bytes', 'got 2008 bytes'],
  },
  // insert: one bad job among good ones writes none
  {
    what: 'insert with one bad job',
    call: (q) => q.insert('good', [{ data: 1 }, { data: 2, priority: 1.5 }]),
    error: InvalidOptionError,
    says: ['jobs[1].priority', 'integer', 'got 1.5'],
  },
  {
    what: 'insert with one oversized job',
    call: (q) => q.insert<unknown>('good', [{ data: 1 }, { data: 'y'.repeat(2000) }]),
    error: PayloadTooLargeError,
    says: ['jobs[1].data', 'at most 1000 bytes'],
  },
  {
    what: 'insert with jobs not an array',
    call: (q) => q.insert('good', {} as never),
    error: InvalidOptionError,
    says: ['jobs must be an array', 'got {}'],
  },
  // queues
  {
    what: 'createQueue with negative retryLimit',
    call: (q) => q.createQueue('never-made', { retryLimit: -1 }),
    error: InvalidOptionError,
    says: ['options.retryLimit', 'from 0', 'got -1'],
  },
  {
    what: 'createQueue with an unknown policy',
    call: (q) => q.createQueue('never-made', { policy: 'fifo' as never }),
    error: InvalidOptionError,
    says: ['options.policy', '"standard"', 'got "fifo"'],
  },
  {
    what: 'createQueue with expireInSeconds 0',
    call: (q) => q.createQueue('never-made', { expireInSeconds: 0 }),
    error: InvalidOptionError,
    says: ['options.expireInSeconds', 'from 1 to 86400', 'got 0'],
  },
  {
    what: 'createQueue with warningQueueSize 0',
    call: (q) => q.createQueue('never-made', { warningQueueSize: 0 }),
    error: InvalidOptionError,
    says: ['options.warningQueueSize', 'integer >= 1', 'got 0'],
  },
  // job ids and fetch
  {
    what: 'a job id that is not digits',
    call: (q) => q.complete('good', 'abc'),
    error: InvalidOptionError,
    says: ['id must be', 'string of digits', 'got "abc"'],
  },
  {
    what: 'a job id past the bigint range',
    call: (q) => q.getJobById('good', '9999999999999999999'),
    error: InvalidOptionError,
    says: ['id must be', 'to 9223372036854775807', 'got "9999999999999999999"'],
  },
  {
    what: 'a fenced id with a negative retryCount',
    call: (q) => q.complete('good', [{ id: '1', retryCount: -1 }]),
    error: InvalidOptionError,
    says: ['ids[0].retryCount', 'integer >= 0', 'got -1'],
  },
  {
    what: 'fetch batchSize of 0',
    call: (q) => q.fetch('good', { batchSize: 0 }),
    error: InvalidOptionError,
    says: ['options.batchSize', 'from 1 to 10000', 'got 0'],
  },
  // worker options
  {
    what: 'work with concurrency 0',
    call: (q) => q.work('good', { concurrency: 0 }, () => 1),
    error: InvalidOptionError,
    says: ['options.concurrency', 'from 1 to 10000', 'got 0'],
  },
  {
    what: 'work with a fractional batchSize',
    call: (q) => q.work('good', { batchSize: 2.5 }, () => 1),
    error: InvalidOptionError,
    says: ['options.batchSize', 'integer', 'got 2.5'],
  },
  {
    what: 'work with pollingIntervalSeconds 0',
    call: (q) => q.work('good', { pollingIntervalSeconds: 0 }, () => 1),
    error: InvalidOptionError,
    says: ['options.pollingIntervalSeconds', 'from 0.05 to 3600', 'got 0'],
  },
  // module configuration
  {
    what: 'no connection',
    call: () => resolveConfig({}),
    error: InvalidOptionError,
    says: ['connectionString/pool/db', 'exactly one', 'got "none"'],
  },
  {
    what: 'two connections',
    call: () => resolveConfig({ connectionString: url, db: { $client: {} } }),
    error: InvalidOptionError,
    says: ['connectionString/pool/db', 'got "connectionString and db"'],
  },
  {
    what: 'a schema name with capitals',
    call: () => resolveConfig({ connectionString: url, schema: 'My-Schema' }),
    error: InvalidOptionError,
    says: ['schema must be', 'lower-case identifier', 'got "My-Schema"'],
  },
  {
    what: 'maxPayloadBytes of 0',
    call: () => resolveConfig({ connectionString: url, maxPayloadBytes: 0 }),
    error: InvalidOptionError,
    says: ['maxPayloadBytes must be', 'from 1 to', 'got 0'],
  },
  {
    what: 'negative shutdownTimeoutMs',
    call: () => resolveConfig({ connectionString: url, shutdownTimeoutMs: -1 }),
    error: InvalidOptionError,
    says: ['shutdownTimeoutMs', 'from 0 to 3600000', 'got -1'],
  },
  {
    what: 'a logger without warn',
    call: () => resolveConfig({ connectionString: url, logger: { log() {}, error() {} } as never }),
    error: InvalidOptionError,
    says: ['logger must be', 'an object with log, warn and error methods'],
  },
  {
    what: 'logJobFailures not a boolean',
    call: () => resolveConfig({ connectionString: url, logJobFailures: 'no' as never }),
    error: InvalidOptionError,
    says: ['logJobFailures', 'got "no"'],
  },
  {
    what: 'a misspelt module option',
    call: () => resolveConfig({ connectionString: url, shutdownTimeout: 5 }),
    error: InvalidOptionError,
    says: ['QueueModuleOptions.shutdownTimeout', 'known options', 'got 5'],
  },
];

async function snapshot(): Promise<{ jobs: number; queues: number }> {
  const [row] = await f.sql<{ jobs: number; queues: number }>(
    'SELECT (SELECT count(*) FROM $schema.jobs)::int AS jobs, (SELECT count(*) FROM $schema.queues)::int AS queues',
  );
  return row!;
}

describe('bad input is refused with a typed error that names the field, the range and the value, and writes nothing', () => {
  it.each(cases.map((c) => [c.what, c] as const))('%s', async (_what, c) => {
    const before = await snapshot();
    let thrown: unknown;
    try {
      await c.call(q);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(c.error);
    expect(thrown).toBeInstanceOf(QueueError);
    for (const fragment of c.says) expect((thrown as Error).message).toContain(fragment);
    expect(await snapshot()).toEqual(before);
  });

  it('every InvalidOptionError carries the field and the value as properties', async () => {
    const err = await q.send('good', {}, { retryLimit: -3 }).catch((e) => e);
    expect(err).toMatchObject({ code: 'INVALID_OPTION', field: 'options.retryLimit', value: -3 });
  });
});
