// localGroupConcurrency: a loop's own limit of running jobs per group, counted in the process and passed to its
// claim, which skips the groups at their limit: no job of a group waits locally, none is left claimed and unrun.
import { InvalidOptionError } from '../../lib/core/errors.js';
import type { Job } from '../../lib/core/types.js';
import { stateCounts, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';

const f = queueFixture('localgroups');
const q = f.create({ supervise: false, shutdownTimeoutMs: 30_000 });
afterAll(() => f.cleanup());

let name = 'l';
let queues = 0;
beforeEach(async () => {
  name = `l${++queues}`;
  await q.createQueue(name, { retryLimit: 0 });
});

interface Interval {
  group: string;
  start: number;
  end: number;
}

/** The most intervals of `group` (every group when null) that overlap at one moment. */
function mostAtOnce(intervals: Interval[], group: string | null): number {
  const mine = intervals.filter((i) => group === null || i.group === group);
  let most = 0;
  for (const i of mine) most = Math.max(most, mine.filter((o) => o.start <= i.start && i.start < o.end).length);
  return most;
}

/** A handler that records its job's interval; `hold` decides how long the job runs (a condition, or a timer). */
function recorder(hold: (job: Job<{ g: string }>) => Promise<unknown>) {
  const intervals: Interval[] = [];
  const running = new Map<string, number>();
  const handler = async (job: Job<{ g: string }>) => {
    const start = performance.now();
    running.set(job.data.g, (running.get(job.data.g) ?? 0) + 1);
    try {
      await hold(job);
    } finally {
      running.set(job.data.g, running.get(job.data.g)! - 1);
      intervals.push({ group: job.data.g, start, end: performance.now() });
    }
  };
  return { intervals, running, handler };
}

/** Every job of the queue completed, each claimed once: none was claimed and handed back, or left claimed. */
async function allCompletedOnce(total: number): Promise<void> {
  await until(async () => (await stateCounts(f.pool, f.schema, name)).completed === total, `${total} jobs completed`);
  expect(await stateCounts(f.pool, f.schema, name)).toEqual({ completed: total });
  const [row] = await f.sql<{ most: number }>(`SELECT max(claim_count)::int AS most FROM $schema.jobs WHERE queue = $1`, [name]);
  expect(row!.most).toBe(1);
}

describe('localGroupConcurrency', () => {
  it('with concurrency 4 and a limit of 1, jobs of one group never overlap while another group runs alongside', async () => {
    const { intervals, running, handler } = recorder(async (job) => {
      // each job runs until a job of the other group runs too (or that group is done): the groups overlap
      const other = job.data.g === 'a' ? 'b' : 'a';
      const othersDone = () => intervals.filter((i) => i.group === other).length === 3;
      await until(() => (running.get(other) ?? 0) > 0 || othersDone(), `a job of group ${other} runs`, 10_000, 5);
    });
    for (const g of ['a', 'b']) {
      await q.insert(
        name,
        [0, 1, 2].map((i) => ({ data: { g, i }, group: { id: g } })),
      );
    }
    const id = await q.work(name, { concurrency: 4, localGroupConcurrency: 1, pollingIntervalSeconds: 0.5 }, handler);
    await allCompletedOnce(6);
    await q.offWork(id);
    expect(intervals).toHaveLength(6);
    expect(mostAtOnce(intervals, 'a')).toBe(1);
    expect(mostAtOnce(intervals, 'b')).toBe(1);
    expect(mostAtOnce(intervals, null)).toBe(2);
  });

  it('jobs without a group are not limited', async () => {
    const { intervals, handler } = recorder(async () => {
      await until(() => started >= 4, 'four jobs running at once', 10_000, 5);
    });
    let started = 0;
    await q.insert(
      name,
      [0, 1, 2, 3].map((i) => ({ data: { g: 'none', i } })),
    );
    const id = await q.work(name, { concurrency: 4, localGroupConcurrency: 1 }, (job: Job<{ g: string }>) => {
      started++;
      return handler(job);
    });
    await allCompletedOnce(4);
    await q.offWork(id);
    expect(mostAtOnce(intervals, 'none')).toBe(4);
  });

  it('a limit per tier: `default` for the groups of other tiers', async () => {
    // each job runs a moment (150 ms of work), long enough for the claims to fill the slots the limits leave
    const { intervals, handler } = recorder(() => new Promise((r) => setTimeout(r, 150)));
    await q.insert(name, [
      ...[0, 1, 2, 3, 4, 5].map((i) => ({ data: { g: 'p', i }, group: { id: 'p', tier: 'pro' } })),
      ...[0, 1, 2].map((i) => ({ data: { g: 'f', i }, group: { id: 'f', tier: 'free' } })),
    ]);
    const id = await q.work(name, { concurrency: 4, localGroupConcurrency: { pro: 2, default: 1 } }, handler);
    await allCompletedOnce(9);
    await q.offWork(id);
    expect(mostAtOnce(intervals, 'p')).toBe(2);
    expect(mostAtOnce(intervals, 'f')).toBe(1);
  });

  it("a group at its default tier's limit still runs its jobs of a tier with a higher one (pg-boss's rule)", async () => {
    let releaseDefault!: () => void;
    const defaultHeld = new Promise<void>((r) => (releaseDefault = r));
    const { running, handler } = recorder((job) => (job.data.g === 'default' ? defaultHeld : new Promise((r) => setTimeout(r, 300))));
    const id = await q.work(
      name,
      { concurrency: 3, localGroupConcurrency: { default: 1, enterprise: 3 }, pollingIntervalSeconds: 0.1 },
      handler,
    );
    await q.send(name, { g: 'default' }, { group: { id: 'acme' } });
    await until(() => running.get('default') === 1, 'the default-tier job running');
    await q.insert(
      name,
      [0, 1].map(() => ({ data: { g: 'enterprise' }, group: { id: 'acme', tier: 'enterprise' } })),
    );
    // both run beside the default-tier job: the group runs 1, under the enterprise tier's 3
    await until(() => running.get('enterprise') === 2, 'both enterprise jobs running beside it');
    // a second default-tier job of the group waits: the group already runs more than the default tier's 1
    await q.send(name, { g: 'default' }, { group: { id: 'acme' } });
    await until(async () => (await stateCounts(f.pool, f.schema, name)).completed === 2, 'the enterprise jobs done');
    expect(running.get('default')).toBe(1);
    // nor do the group's waiting jobs of that tier fill the claim's window: another group's job behind many of them runs
    await q.insert(
      name,
      Array.from({ length: 30 }, () => ({ data: { g: 'default' }, group: { id: 'acme' } })),
    );
    await q.send(name, { g: 'beta' }, { group: { id: 'beta' } });
    await until(async () => (await stateCounts(f.pool, f.schema, name)).completed === 3, "the other group's job done");
    releaseDefault();
    await allCompletedOnce(35);
    await q.offWork(id);
  });

  it('with groupConcurrency as well, both limits apply (the lower one here: the local one)', async () => {
    const { intervals, handler } = recorder(() => new Promise((r) => setTimeout(r, 100)));
    await q.insert(
      name,
      [0, 1, 2, 3].map((i) => ({ data: { g: 'a', i }, group: { id: 'a' } })),
    );
    const id = await q.work(name, { concurrency: 4, groupConcurrency: 3, localGroupConcurrency: 1 }, handler);
    await allCompletedOnce(4);
    await q.offWork(id);
    expect(mostAtOnce(intervals, 'a')).toBe(1);
  });

  it('with batch: a call gets no more jobs of a group than its room, and each job is claimed once', async () => {
    const calls: string[][] = [];
    await q.insert(
      name,
      [0, 1, 2, 3].map((i) => ({ data: { g: i < 3 ? 'a' : 'b', i }, group: { id: i < 3 ? 'a' : 'b' } })),
    );
    const id = await q.work(
      name,
      { batch: true, concurrency: 1, batchSize: 4, localGroupConcurrency: 1, pollingIntervalSeconds: 0.1 },
      async (jobs: Job<{ g: string }>[]) => {
        calls.push(jobs.map((j) => j.data.g).sort());
        await new Promise((r) => setTimeout(r, 50));
      },
    );
    await allCompletedOnce(4);
    await q.offWork(id);
    // group a's three jobs went one a call; b's rode along with the first
    for (const call of calls) expect(call.filter((g) => g === 'a').length).toBeLessThanOrEqual(1);
    expect(calls.flat().sort()).toEqual(['a', 'a', 'a', 'b']);
  });

  it('is refused with a typed error naming the field, the range and the value', async () => {
    const refused = async (options: object, field: string, says: string) => {
      const err = await q.work(name, options, () => 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect((err as InvalidOptionError).field).toBe(field);
      expect((err as Error).message).toContain(says);
    };
    await refused({ concurrency: 4, localGroupConcurrency: 5 }, 'options.localGroupConcurrency', 'from 1 to 4, got 5');
    await refused({ localGroupConcurrency: 2 }, 'options.localGroupConcurrency', 'from 1 to 1, got 2');
    await refused({ concurrency: 4, localGroupConcurrency: 0 }, 'options.localGroupConcurrency', 'from 1 to 4, got 0');
    await refused({ concurrency: 4, localGroupConcurrency: 1.5 }, 'options.localGroupConcurrency', 'got 1.5');
    await refused({ concurrency: 4, localGroupConcurrency: { pro: 9 } }, 'options.localGroupConcurrency.pro', 'from 1 to 4, got 9');
    await refused({ concurrency: 4, localGroupConcurrency: { default: 0 } }, 'options.localGroupConcurrency.default', 'got 0');
    // with batch, jobs at once: concurrency calls of batchSize jobs each
    await refused({ batch: true, batchSize: 2, localGroupConcurrency: 3 }, 'options.localGroupConcurrency', 'from 1 to 2, got 3');
    await q.createQueue(`${name}s`, { policy: 'singleton' });
    const err = await q.work(`${name}s`, { localGroupConcurrency: 1 }, () => 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as Error).message).toContain('left out on a singleton queue');
  });
});
