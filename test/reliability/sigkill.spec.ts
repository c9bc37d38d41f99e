// A worker process dies with SIGKILL while it holds jobs: no shutdown hook runs, nothing is handed back.
// Its heartbeats stop, the reaper of another process puts the jobs back, and that process runs them.
import { stateCounts, testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';
import { ledgerTableSql, startWorkerChild, stopWorkerChildren } from './children.js';

const f = queueFixture('rel_sigkill');
afterAll(async () => {
  await stopWorkerChildren();
  await f.cleanup();
});

const QUEUE = 'rel.sigkill';
const JOBS = 20;

describe('a worker process killed with SIGKILL', () => {
  it('loses none of the 20 jobs it held: another process completes them all, each having run at most twice', async () => {
    const q = f.create({ supervise: false, workers: false });
    await q.createQueue(QUEUE, { heartbeatSeconds: 1, expireInSeconds: 5, retryLimit: 2 });
    await f.sql(ledgerTableSql(f.schema));
    const settings = { url: testUrl(), schema: f.schema, queue: QUEUE, work: { concurrency: JOBS, pollingIntervalSeconds: 0.2 } };

    const doomed = await startWorkerChild({ ...settings, mode: 'block', engine: { supervise: false } }).ready();
    const ids = await q.insert(
      QUEUE,
      Array.from({ length: JOBS }, (_, i) => ({ data: { i } })),
    );
    await until(async () => {
      const [held] = await f.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs WHERE state = $1 AND worker_id = $2', [
        'active',
        doomed.workerId,
      ]);
      const [ran] = await f.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.ledger WHERE pid = $1', [doomed.pid]);
      return held!.n === JOBS && ran!.n === JOBS;
    }, `all ${JOBS} jobs active in the first process`);

    expect(await doomed.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    // Nothing was handed back: the jobs are still active under the dead process's name.
    expect(await stateCounts(f.pool, f.schema, QUEUE)).toEqual({ active: JOBS });

    const heir = await startWorkerChild({
      ...settings,
      mode: 'ledger',
      engine: { supervise: true, maintenanceIntervalSeconds: 1 },
    }).ready();
    await until(
      async () => (await stateCounts(f.pool, f.schema, QUEUE)).completed === JOBS,
      `all ${JOBS} jobs completed by the second process`,
      20_000,
      100,
    );

    const runs = await f.sql<{ job_id: string; runs: { pid: number; claim: number; retry: number; holder: string }[] }>(
      `SELECT l.job_id::text, jsonb_agg(jsonb_build_object('pid', l.pid, 'claim', l.claim_count, 'retry', l.retry_count, 'holder', l.worker_id) ORDER BY l.at) AS runs
       FROM $schema.ledger l GROUP BY l.job_id ORDER BY l.job_id`,
    );
    expect(runs.map((r) => r.job_id)).toEqual([...ids].sort((a, b) => Number(BigInt(a) - BigInt(b))));
    for (const { job_id, runs: attempts } of runs) {
      // At most twice: once in the killed process, once (the retry after the reap) in its heir.
      expect({ job_id, attempts }).toEqual({
        job_id,
        attempts: [
          { pid: doomed.pid, claim: 1, retry: 0, holder: doomed.workerId },
          { pid: heir.pid, claim: 2, retry: 1, holder: heir.workerId },
        ],
      });
    }
    const jobs = await f.sql<{ state: string; retry_count: number; worker_id: string }>(
      'SELECT state::text, retry_count, worker_id FROM $schema.jobs',
    );
    expect(jobs).toEqual(ids.map(() => ({ state: 'completed', retry_count: 1, worker_id: heir.workerId })));
    // The heir's reaper put all of them back (in one pass or several).
    const reaped = heir.logs('warn').map((m) => Number(/^(\d+) job\(s\) whose lease or heartbeat ran out/.exec(m)?.[1] ?? 0));
    expect(reaped.reduce((a, b) => a + b, 0)).toBe(JOBS);
    expect(heir.logs('error')).toEqual([]);

    expect(await heir.stop()).toEqual({ code: 0, signal: null });
  });
});
