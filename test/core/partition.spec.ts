import { until } from '../helpers/db.js';
import { engineExec, engineStatements, queueFixture } from '../helpers/queue.js';

const f = queueFixture('partition');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

const tableOf = async (id: string) =>
  (await f.sql<{ t: string }>('SELECT tableoid::regclass::text AS t FROM $schema.jobs WHERE id = $1', [id]))[0]!.t;

describe('dedicated partitions', () => {
  it('a queue created with partition: true stores its jobs in a partition of its own, which getQueue names', async () => {
    await q.createQueue('big.backlog', { partition: true });
    await q.createQueue('small');
    const info = (await q.getQueue('big.backlog'))!;
    expect(info.partition).toBe(true);
    expect(info.table).toMatch(new RegExp(`^"${f.schema}"\\.jobs_q_[0-9a-f]{16}$`));
    const big = (await q.send('big.backlog', { n: 1 }))!;
    const small = (await q.send('small', { n: 2 }))!;
    expect(await tableOf(big)).toBe(info.table.replace(`"${f.schema}".`, `${f.schema}.`));
    expect(await tableOf(small)).toBe(`${f.schema}.jobs_default`);
    expect((await q.getQueue('small'))!.table).toBe(`"${f.schema}".jobs_default`);
  });

  it('claims, settles and policies work in the partition as anywhere', async () => {
    await q.createQueue('part.short', { partition: true, policy: 'short' });
    const id = (await q.send('part.short', {}, { singletonKey: 'k' }))!;
    expect(await q.send('part.short', {}, { singletonKey: 'k' })).toBeNull();
    const [job] = await q.fetch('part.short');
    expect(job!.id).toBe(id);
    await q.complete('part.short', id, 'done');
    expect(await q.getJobById('part.short', id)).toMatchObject({ state: 'completed', output: 'done' });
  });

  it('deleteQueue drops the partition with the queue', async () => {
    await q.createQueue('part.gone', { partition: true });
    const table = (await q.getQueue('part.gone'))!.table;
    await q.send('part.gone', {});
    await q.deleteQueue('part.gone');
    expect(await f.sql('SELECT to_regclass($1) AS t', [table])).toEqual([{ t: null }]);
  });

  it("a queue's claims, settles and changes by id name only the table that holds its jobs, however many partitions there are (but for a flow's work)", async () => {
    const one = f.create({ poolSize: 1, supervise: false });
    for (let i = 0; i < 12; i++) await one.createQueue(`other.${i}`, { partition: true });
    await one.createQueue('home.own', { partition: true });
    await one.createQueue('home.shared');
    const exec = engineExec(one);
    for (const queue of ['home.own', 'home.shared']) {
      const home = (await one.getQueue(queue))!.table.replace(`"${f.schema}".`, '');
      await one.insert(queue, [{}, {}]);
      const [job] = await one.fetch(queue);
      const statements = await engineStatements(one, queue);
      const q1 = `'${queue}'`;
      const ids = `'{${job!.id}}'`;
      const runs: [keyof typeof statements, string][] = [
        ['claimJobs', `${q1}, 1, 'w', NULL, NULL, false`],
        ['completeLeafJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', NULL, '{NULL}', '{NULL}', 'c'`],
        ['removeLeafJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', NULL, '{NULL}', '{NULL}', 'c'`],
        ['heartbeatJobs', `${q1}, ${ids}, '{1}', 'w', '{NULL}'`],
        ['releaseJobs', `${q1}, ${ids}, '{1}', 'w', 'c', '{NULL}'`],
        ['touchJobs', `${q1}, ${ids}, '{NULL}'`],
        ['completeNonParentJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', NULL, '{NULL}', '{NULL}', 'c'`],
        ['failLeafJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', '{false}', '{NULL}', NULL, '{NULL}', 'c', '{NULL}', 'c'`],
        ['cancelLeafJobs', `${q1}, ${ids}`],
        ['resumeJobs', `${q1}, ${ids}, 'c'`],
        ['deleteJobs', `${q1}, ${ids}`],
        ['getJobDetails', `${q1}, ${job!.id}`],
      ];
      for (const [name, args] of runs) {
        await exec.query(`PREPARE home_plan AS ${statements[name]}`);
        const plan = (await exec.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE home_plan(${args})`))
          .map((r) => r['QUERY PLAN'])
          .join('\n');
        await exec.query('DEALLOCATE home_plan');
        // (a dead-letter copy is inserted into `jobs`: an insert is routed as it runs, and plans no partition)
        const tables = [...new Set([...plan.replace(/Insert on jobs\b/g, '').matchAll(/ on (jobs\w*)/g)].map((m) => m[1]))];
        expect({ queue, name, tables, partitions: /Subplans Removed/.test(plan) }).toEqual({
          queue,
          name,
          tables: [home],
          partitions: false,
        });
      }
    }
  });
});

describe('a queue deleted and made again with the other partition setting', () => {
  it("by another instance: this instance's calls by hand and fetch() follow its jobs to their new table", async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await a.createQueue('moved.by-hand');
    await a.deleteJob('moved.by-hand', (await a.send('moved.by-hand', {}))!); // a now knows where the queue keeps its jobs

    await b.deleteQueue('moved.by-hand');
    await b.createQueue('moved.by-hand', { partition: true });
    // a deferred holder of a dedupe key, which nothing claims
    const holder = (await b.send('moved.by-hand', {}, { dedupeKey: 'k', startAfter: 3600 }))!;
    expect(await a.send('moved.by-hand', {}, { dedupeKey: 'k' })).toBe(holder);
    const job = (await b.send('moved.by-hand', { n: 1 }))!;
    const [fetched] = await b.fetch('moved.by-hand');
    expect(fetched!.id).toBe(job);
    expect((await a.complete('moved.by-hand', job)).updated).toBe(1);
    expect((await a.getJobById('moved.by-hand', job))!.state).toBe('completed');

    // and back: the partition a looks in is dropped (undefined_table)
    await b.deleteQueue('moved.by-hand');
    await b.createQueue('moved.by-hand');
    const next = (await b.send('moved.by-hand', { n: 2 }))!;
    expect((await a.fetch('moved.by-hand')).map((j) => j.id)).toEqual([next]);
    expect((await a.fail('moved.by-hand', next)).updated).toBe(1);
  });

  it('a running worker follows its jobs, whether another instance or its own made the queue again', async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await a.createQueue('moved.worker');
    const seen: number[] = [];
    const handler = async (job: { data: unknown }) => void seen.push((job.data as { n: number }).n);
    // two loops on the queue: each must follow it, not only the first to notice
    await a.work('moved.worker', { pollingIntervalSeconds: 0.2 }, handler);
    await a.work('moved.worker', { pollingIntervalSeconds: 0.2 }, handler);
    await a.send('moved.worker', { n: 1 });
    await until(async () => seen.includes(1), 'the first job ran');

    await b.deleteQueue('moved.worker'); // another instance: to a partition of its own
    await b.createQueue('moved.worker', { partition: true });
    await b.send('moved.worker', { n: 2 });
    await until(async () => seen.includes(2), 'a job of the queue made again by another instance ran', 20_000);

    await b.deleteQueue('moved.worker'); // and back: the partition the workers claim from is dropped
    await b.createQueue('moved.worker');
    for (const n of [3, 4, 5, 6]) await b.send('moved.worker', { n });
    await until(async () => [3, 4, 5, 6].every((n) => seen.includes(n)), 'jobs ran after the partition was dropped', 20_000);

    await a.deleteQueue('moved.worker'); // this instance, under its own running workers
    await a.createQueue('moved.worker', { partition: true });
    await a.send('moved.worker', { n: 7 });
    await until(async () => seen.includes(7), 'a job of the queue made again by this instance ran', 20_000);
    await a.stopWorkers();
  });

  it('calls by hand that find less than they asked for never run twice on the same table', async () => {
    const one = f.create({ supervise: false });
    await one.createQueue('short.calls', { retryLimit: 5, retryDelay: 3600 });
    const ids = await one.insert(
      'short.calls',
      Array.from({ length: 20 }, () => ({})),
    );
    expect(await one.fetch('short.calls', { batchSize: 20 })).toHaveLength(20);
    // each call names a job that does not exist: its result falls short, and the queue's profile is read again
    const results = await Promise.all(ids.map((id) => one.fail('short.calls', [id, '999999999'], new Error('once'))));
    expect(results.map((r) => r.updated)).toEqual(ids.map(() => 1));
    const rows = await f.sql<{ retry_count: number }>(`SELECT retry_count FROM $schema.jobs WHERE queue = 'short.calls'`);
    expect(rows.map((r) => r.retry_count)).toEqual(ids.map(() => 1));
  });
});
