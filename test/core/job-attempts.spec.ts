// The job view's attempts and links, read as the dashboard reads them (readJobView): every failed attempt with its
// worker, times and error (a lease that ran out told apart), the attempt that completed a job, a flow's parents and
// children, a dead-letter copy and its source; and the links' statement reads indexes only.
import { readJobView } from '../../lib/core/dashboard/job-view.js';
import { runtimeOf, type PgQueue } from '../../lib/core/pg-queue.js';
import type { Job } from '../../lib/core/types.js';
import { until } from '../helpers/db.js';
import { engineExec, queueFixture } from '../helpers/queue.js';

const f = queueFixture('attempts');
afterEach(() => f.closeMade());
afterAll(() => f.cleanup());

async function viewOf(q: PgQueue, id: string) {
  const rt = runtimeOf(q);
  return (await readJobView({ statements: rt.statements, connect: () => rt.connect(), prepared: rt.namesStatements }, id))!;
}

describe("the job view's attempts", () => {
  it('a job that failed three times lists the three, each with its worker, times, error and stack', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.fail', { retryLimit: 2 });
    await q.work('att.fail', { pollingIntervalSeconds: 0.1 }, async function fails(job: Job) {
      throw new Error(`boom ${job.retryCount}`);
    });
    const id = (await q.send('att.fail', {}))!;
    await until(async () => (await q.getJobById('att.fail', id))?.state === 'failed', 'the job failed for good');
    const view = await viewOf(q, id);
    expect(view.attempts.map((a) => [a.attempt, a.outcome, a.error?.message])).toEqual([
      [1, 'failed', 'boom 0'],
      [2, 'failed', 'boom 1'],
      [3, 'failed', 'boom 2'],
    ]);
    for (const a of view.attempts) {
      expect(a.worker).toMatch(/\S/);
      expect(a.startedOn!.getTime()).toBeLessThanOrEqual(a.endedOn!.getTime());
      expect(a.error!.stack).toContain(`boom ${a.attempt - 1}`);
    }
  });

  it('a job that completed after two failures lists them and the attempt that completed it', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.late', { retryLimit: 3 });
    await q.work('att.late', { pollingIntervalSeconds: 0.1 }, async function thirdTime(job: Job) {
      if (job.retryCount < 2) throw new Error(`not yet ${job.retryCount}`);
      return { ok: true };
    });
    const id = (await q.send('att.late', {}))!;
    await until(async () => (await q.getJobById('att.late', id))?.state === 'completed', 'the job completed');
    const view = await viewOf(q, id);
    expect(view.attempts.map((a) => [a.attempt, a.outcome, a.error?.message ?? null])).toEqual([
      [1, 'failed', 'not yet 0'],
      [2, 'failed', 'not yet 1'],
      [3, 'completed', null],
    ]);
    // the handler's output replaced output.errors; the attempts keep their errors, stacks too
    expect(view.job.output).toEqual({ ok: true });
    expect(view.attempts[0]!.error!.stack).toContain('not yet 0');
    expect(view.attempts[2]).toMatchObject({ worker: view.job.workerId, startedOn: view.job.startedOn, endedOn: view.job.completedOn });
  });

  it('a job completed by hand while it waited ran no attempt of its own; a failure that ended no attempt is none', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.hand', { retryLimit: 1, retryDelay: 3600 });
    const id = (await q.send('att.hand', {}))!;
    await q.fetch('att.hand');
    await q.fail('att.hand', id, new Error('first'));
    await q.complete('att.hand', id, { done: true }, { includeQueued: true });
    expect((await viewOf(q, id)).attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed']]);
    // failed while it waited (never claimed): its last error, no attempt
    const waiting = (await q.send('att.hand', {}))!;
    await q.fail('att.hand', waiting, new Error('never ran'));
    const view = await viewOf(q, waiting);
    expect(view.job.lastError).toMatchObject({ message: 'never ran' });
    expect(view.attempts).toEqual([]);
  });

  it('a lease that ran out is told apart from a failure', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.lease', { retryLimit: 1 });
    const id = (await q.send('att.lease', {}))!;
    const [claimed] = await q.fetch('att.lease');
    expect(claimed!.id).toBe(id);
    await f.sql(`UPDATE $schema.jobs SET lease_until = now() - interval '1 second' WHERE queue = 'att.lease' AND id = $1`, [id]);
    await q.maintain({ force: true });
    const view = await viewOf(q, id);
    expect(view.job.state).toBe('retry');
    expect(view.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'lease-expired', error: expect.objectContaining({ name: 'LeaseExpiredError' }) }),
    ]);
  });
});

describe("the job view's links", () => {
  it("a flow's child lists its parents and a parent its children, with their states", async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.fetch');
    await q.createQueue('att.render');
    const ids = await q.flow([
      { name: 'att.fetch', ref: 'a' },
      { name: 'att.fetch', ref: 'b' },
      { name: 'att.render', ref: 'c', dependsOn: ['a', 'b'] },
    ]);
    await q.fetch('att.fetch', { batchSize: 1 });
    const child = await viewOf(q, ids.c!);
    expect(child.links.parent.jobs.map((l) => [l.queue, l.id, l.state]).sort()).toEqual(
      [
        ['att.fetch', ids.a, 'active'],
        ['att.fetch', ids.b, 'created'],
      ].sort(),
    );
    expect(child.links.child.jobs).toEqual([]);
    const parent = await viewOf(q, ids.a!);
    expect(parent.links.child).toEqual({ jobs: [{ queue: 'att.render', id: ids.c, state: 'created' }], more: false });
  });

  it('a job failed into its dead-letter queue links to its copy, which names it as its source', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.dlq');
    await q.createQueue('att.src', { retryLimit: 0, deadLetter: 'att.dlq' });
    const id = (await q.send('att.src', { n: 1 }))!;
    await q.fetch('att.src');
    await q.fail('att.src', id, new Error('gave up'));
    const source = await viewOf(q, id);
    expect(source.links.copy.jobs).toHaveLength(1);
    expect(source.attempts.map((a) => [a.attempt, a.outcome, a.error?.message])).toEqual([[1, 'failed', 'gave up']]);
    const copyId = source.links.copy.jobs[0]!.id;
    const copy = await viewOf(q, copyId);
    expect(copy.job).toMatchObject({ name: 'att.dlq', sourceId: id, sourceName: 'att.src' });
    // the copy holds its source's failure in its output, not as an attempt of its own; its own first one runs now
    expect(copy.attempts).toEqual([]);
    await q.fetch('att.dlq');
    expect((await viewOf(q, copyId)).attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'running']]);
  });

  it('reads indexes only: job_deps by either side, the copies by their source', async () => {
    const q = f.create({ supervise: false });
    await q.createQueue('att.plan');
    for (let i = 0; i < 4; i++)
      await q.insert(
        'att.plan',
        Array.from({ length: 2000 }, () => ({ data: {} })),
      );
    await f.sql(`ANALYZE $schema.jobs_default`);
    // a child with 100,000 parents (links to jobs long deleted but 60): its view reads no more links than it shows
    const [{ child }] = (await f.sql<{ child: string }>(`SELECT max(id)::text AS child FROM $schema.jobs WHERE queue = 'att.plan'`)) as [
      { child: string },
    ];
    await f.sql(
      `INSERT INTO $schema.job_deps (parent_queue, parent_id, child_queue, child_id)
       SELECT 'att.plan', CASE WHEN g <= 60 THEN g ELSE 10000000 + g END, 'att.plan', $1::bigint FROM generate_series(1, 100000) g`,
      [child],
    );
    await f.sql(`ANALYZE $schema.job_deps`);
    const exec = engineExec(q);
    const st = runtimeOf(q).statements;
    await exec.query(`PREPARE links AS ${st.dashboardJobLinks}`);
    try {
      const rows = await exec.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE links('att.plan', ${child})`,
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).not.toMatch(/Seq Scan/);
      expect(plan).toMatch(/job_deps_child_idx[^\n]*\(actual rows=51(\.00)? loops=1\)/);
      expect(plan).toMatch(/job_deps_pkey/);
      expect(plan).toMatch(/jobs_default_source_name_source_id_idx/);
    } finally {
      await exec.query('DEALLOCATE links');
    }
  });
});
