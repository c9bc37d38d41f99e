import { until } from '../helpers/db.js';
import { engineStatements, queueFixture } from '../helpers/queue.js';

const f = queueFixture('partition');
const q = f.create({ supervise: false });
afterAll(() => f.cleanup());

const tableOf = async (id: string) => (await f.sql<{ t: string }>('SELECT tableoid::regclass::text AS t FROM $schema.jobs WHERE id = $1', [id]))[0]!.t;

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
    const exec = (one as unknown as { exec: { query<R>(text: string): Promise<R[]> } }).exec;
    for (const queue of ['home.own', 'home.shared']) {
      const home = (await one.getQueue(queue))!.table.replace(`"${f.schema}".`, '');
      await one.insert(queue, [{}, {}]);
      const [job] = await one.fetch(queue);
      const statements = await engineStatements(one, queue);
      const q1 = `'${queue}'`;
      const ids = `'{${job!.id}}'`;
      const runs: [keyof typeof statements, string][] = [
        ['claimJobs', `${q1}, 1, 'w', NULL, NULL, false`],
        ['completeLeafJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', NULL, '{NULL}', '{NULL}'`],
        ['removeLeafJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', NULL, '{NULL}', '{NULL}'`],
        ['heartbeatJobs', `${q1}, ${ids}, '{1}', 'w', '{NULL}'`],
        ['releaseJobs', `${q1}, ${ids}, '{1}', 'w', 'c', '{NULL}'`],
        ['completeNonParentJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', NULL, '{NULL}', '{NULL}'`],
        ['failLeafJobs', `${q1}, ${ids}, '{NULL}', '{"{}"}', '{false}', '{NULL}', NULL, '{NULL}', 'c', '{NULL}'`],
        ['cancelLeafJobs', `${q1}, ${ids}`],
        ['resumeJobs', `${q1}, ${ids}, 'c'`],
        ['deleteJobs', `${q1}, ${ids}`],
        ['getJobById', `${q1}, ${job!.id}`],
      ];
      for (const [name, args] of runs) {
        await exec.query(`PREPARE home_plan AS ${statements[name]}`);
        const plan = (await exec.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE home_plan(${args})`)).map((r) => r['QUERY PLAN']).join('\n');
        await exec.query('DEALLOCATE home_plan');
        // (a dead-letter copy is inserted into `jobs`: an insert is routed as it runs, and plans no partition)
        const tables = [...new Set([...plan.replace(/Insert on jobs\b/g, '').matchAll(/ on (jobs\w*)/g)].map((m) => m[1]))];
        expect({ queue, name, tables, partitions: /Subplans Removed/.test(plan) }).toEqual({ queue, name, tables: [home], partitions: false });
      }
    }
  });
});

describe('a queue deleted and made again with the other partition setting, by another instance', () => {
  it("this instance's worker, fetch() and calls by hand follow its jobs to their new table", async () => {
    const a = f.create({ supervise: false });
    const b = f.create({ supervise: false });
    await a.createQueue('moving');
    const seen: number[] = [];
    await a.work('moving', { pollingIntervalSeconds: 0.2 }, async (job) => void seen.push((job.data as { n: number }).n));
    await a.send('moving', { n: 1 });
    await until(async () => seen.includes(1), 'the first job ran');
    const byHand = f.create({ supervise: false });
    const held = (await byHand.send('moving', { n: 0 }, { dedupeKey: 'k' }))!; // byHand now knows where 'moving' keeps its jobs
    await byHand.deleteJob('moving', held);

    await b.deleteQueue('moving');
    await b.createQueue('moving', { partition: true });
    // calls by hand on jobs they cannot find where they looked: they look again
    const holder = (await b.send('moving', { n: 0 }, { dedupeKey: 'k' }))!;
    expect(await byHand.send('moving', { n: 0 }, { dedupeKey: 'k' })).toBe(holder);
    const [fetched] = await b.fetch('moving');
    expect((await byHand.complete('moving', fetched!.id)).updated).toBe(1);
    expect((await byHand.getJobById('moving', fetched!.id))!.state).toBe('completed');
    // the worker: its claims from the old table come back empty, and it looks again
    await b.send('moving', { n: 2 });
    await until(async () => seen.includes(2), 'the worker ran a job of the queue made again', 20_000);

    // and back: the partition it now claims from is dropped (undefined_table)
    await b.deleteQueue('moving');
    await b.createQueue('moving');
    await b.send('moving', { n: 3 });
    await until(async () => seen.includes(3), 'the worker ran a job after its partition was dropped', 20_000);
    const id = (await b.send('moving', { n: 4 }))!;
    expect(await byHand.getJobById('moving', id)).not.toBeNull(); // found in its new table
    await a.stopWorkers();
  });
});
