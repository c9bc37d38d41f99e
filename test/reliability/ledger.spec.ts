// Four worker processes race for one queue. Each handler run appends its attempt to a ledger; the
// ledger and the jobs table together show whether any job ran twice or any attempt had two holders.
import { stateCounts, testUrl, until } from '../helpers/db.js';
import { queueFixture } from '../helpers/queue.js';
import { ledgerTableSql, startWorkerChild, stopWorkerChildren } from './children.js';

const f = queueFixture('rel_ledger');
afterAll(async () => {
  await stopWorkerChildren();
  await f.cleanup();
});

const QUEUE = 'rel.ledger';
const JOBS = 20_000;
const CHUNK = 2_000;
const PROCESSES = 4;

describe('four worker processes on one queue', () => {
  it('drain 20,000 jobs: every job completes exactly once, and no attempt ever has two holders', async () => {
    const q = f.create({ supervise: false, workers: false });
    await q.createQueue(QUEUE); // the default 900 s lease: no attempt may expire during this test
    await f.sql(ledgerTableSql(f.schema));

    const children = Array.from({ length: PROCESSES }, () =>
      startWorkerChild({
        url: testUrl(),
        schema: f.schema,
        queue: QUEUE,
        mode: 'ledger',
        work: { concurrency: 12, batchSize: 12, pollingIntervalSeconds: 1 },
        // Few connections each, so four processes fit beside the other test files in max_connections = 100.
        engine: { supervise: false, poolSize: 4 },
      }),
    );
    await Promise.all(children.map((c) => c.ready()));

    // Inserted while the workers already claim: the first chunks are raced for as they arrive.
    for (let n = 0; n < JOBS; n += CHUNK) {
      await q.insert(
        QUEUE,
        Array.from({ length: CHUNK }, (_, i) => ({ data: { n: n + i } })),
      );
    }
    await until(async () => (await stateCounts(f.pool, f.schema, QUEUE)).completed === JOBS, `${JOBS} jobs completed`, 50_000, 250);
    const exits = await Promise.all(children.map((c) => c.stop()));
    expect(exits).toEqual(children.map(() => ({ code: 0, signal: null })));

    expect(await stateCounts(f.pool, f.schema, QUEUE)).toEqual({ completed: JOBS });

    // Exactly one handler run per job, and all four processes took part in the race.
    const [totals] = await f.sql<{ runs: number; jobs: number; pids: number }>(
      'SELECT count(*)::int AS runs, count(DISTINCT job_id)::int AS jobs, count(DISTINCT pid)::int AS pids FROM $schema.ledger',
    );
    expect(totals).toEqual({ runs: JOBS, jobs: JOBS, pids: PROCESSES });

    // No (job, attempt) was ever run by two holders.
    const shared = await f.sql(
      'SELECT job_id, claim_count, count(*)::int AS runs FROM $schema.ledger GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 5',
    );
    expect(shared).toEqual([]);

    // While each handler ran, the row named its own process as the holder, on the first claim; the
    // job was completed on that same attempt by that same worker.
    const [mismatch] = await f.sql<{ n: number; sample: unknown }>(
      `SELECT count(*)::int AS n, (array_agg(jsonb_build_object('job', j.id, 'job_holder', j.worker_id, 'run_holder', l.worker_id,
              'ran_in', l.pid, 'claims', j.claim_count, 'retries', j.retry_count)))[1] AS sample
       FROM $schema.jobs j
       JOIN $schema.ledger l ON l.job_id = j.id
       JOIN unnest($1::int[], $2::text[]) AS c(pid, worker_id) ON c.pid = l.pid
       WHERE j.queue = $3
         AND (l.worker_id IS DISTINCT FROM c.worker_id OR j.worker_id IS DISTINCT FROM c.worker_id
              OR l.claim_count <> 1 OR j.claim_count <> 1 OR l.retry_count <> 0 OR j.retry_count <> 0)`,
      [children.map((c) => c.pid), children.map((c) => c.workerId), QUEUE],
    );
    expect(mismatch).toEqual({ n: 0, sample: null });

    // No stale result was refused and no loop failed: nobody else held what a worker was running.
    expect(children.flatMap((c) => [...c.logs('warn', 'error')])).toEqual([]);
  });
});
