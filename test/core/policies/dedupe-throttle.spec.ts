import { queueFixture } from '../../helpers/queue.js';

const f = queueFixture('p_dedupe');
const q = f.create({ supervise: false });
beforeAll(() => q.createQueue('d'));
afterAll(() => f.cleanup());

describe('dedupeKey', () => {
  it('while a job with the key is pending, another send inserts nothing and returns the pending job’s id', async () => {
    const first = await q.send('d', { n: 1 }, { dedupeKey: 'order-1' });
    expect(await q.send('d', { n: 2 }, { dedupeKey: 'order-1' })).toBe(first);
    await q.fetch('d');
    expect(await q.send('d', { n: 3 }, { dedupeKey: 'order-1' })).toBe(first);
    await q.complete('d', first!);
    const again = await q.send('d', { n: 4 }, { dedupeKey: 'order-1' });
    expect(again).not.toBe(first);
    expect(again).not.toBeNull();
  });

  it('holds across racing senders: one job, one id', async () => {
    const senders = Array.from({ length: 5 }, () => f.create({ supervise: false, poolSize: 2 }));
    const ids = await Promise.all(senders.flatMap((s) => [s.send('d', {}, { dedupeKey: 'race' }), s.send('d', {}, { dedupeKey: 'race' })]));
    expect(new Set(ids).size).toBe(1);
    const rows = await f.sql(`SELECT id FROM $schema.jobs WHERE queue = 'd' AND dedupe_key = 'race'`);
    expect(rows).toHaveLength(1);
  });
});

describe('sendThrottled and sendDebounced', () => {
  it('the first send of a slot wins; later ones return null; keys are separate', async () => {
    await q.createQueue('t');
    const first = await q.sendThrottled('t', { n: 1 }, null, 3600);
    expect(first).not.toBeNull();
    expect(await q.sendThrottled('t', { n: 2 }, null, 3600)).toBeNull();
    expect(await q.sendThrottled('t', { n: 3 }, null, 3600, 'tenant-b')).not.toBeNull();
  });

  it('a throttled job keeps its slot after it completes', async () => {
    await q.createQueue('t.done');
    const id = (await q.sendThrottled('t.done', {}, null, 3600))!;
    await q.fetch('t.done');
    await q.complete('t.done', id);
    expect(await q.sendThrottled('t.done', {}, null, 3600)).toBeNull();
  });

  it('a debounced send into a taken slot waits for the next slot; at most one waits', async () => {
    await q.createQueue('deb');
    const now = await q.sendDebounced('deb', { n: 1 }, null, 3600);
    const next = await q.sendDebounced('deb', { n: 2 }, null, 3600);
    const third = await q.sendDebounced('deb', { n: 3 }, null, 3600);
    expect(now).not.toBeNull();
    expect(next).not.toBeNull();
    expect(third).toBeNull();
    const [row] = await f.sql<{ start: Date; slot: Date }>(
      'SELECT start_after AS start, singleton_on AS slot FROM $schema.jobs WHERE id = $1',
      [next],
    );
    expect(row!.start.getTime()).toBe(row!.slot.getTime());
    expect(row!.start.getTime() % 3_600_000).toBe(0);
    expect(row!.start.getTime()).toBeGreaterThan(Date.now());
  });
});
