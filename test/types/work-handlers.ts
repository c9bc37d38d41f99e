// Compiled by the test command's typecheck (tsconfig.json includes test/), never run: work() gives a handler the
// type its options call for, and refuses the other kind. Each @ts-expect-error fails the typecheck if the line compiles.
import type { PgQueue } from '../../lib/core/pg-queue.js';
import type { BatchJob, Job, WorkOptions } from '../../lib/core/types.js';
declare const q: PgQueue;
declare const w: WorkOptions;
void q.work('a', { batch: true }, (jobs) => jobs.map((j) => j.id));
void q.work('a', { batch: true, batchSize: 3 }, (jobs: BatchJob<{ x: number }>[]) => jobs.map((j) => j.data.x));
void q.work('a', { concurrency: 2 }, (job) => job.id);
void q.work('a', undefined, (job) => job.id);
void q.work('a', { concurrency: 2 }, (job: Job<{ x: number }>) => job.data.x);
void q.work('a', { ...w }, (job) => job.id);
void q.work('a', w, (job) => job.id);
const opts = { batch: true, batchSize: 5 };
void q.work('a', opts, (jobs: BatchJob[]) => jobs.length);
void q.work<{ x: number }>('a', { batch: false }, (job) => job.data.x);
// @ts-expect-error a batch loop's handler takes the jobs of a batch
void q.work('a', { batch: true }, (job: Job<{ x: number }>) => job.data.x);
// @ts-expect-error a loop of single jobs gets one job
void q.work('a', { concurrency: 1 }, (jobs: BatchJob[]) => jobs.length);
// perJobResults: the handler resolves with one result per job (pg-boss's JobResult)
void q.work('a', { batch: true, perJobResults: true }, (jobs) =>
  jobs.map((j) => ({ id: j.id, status: 'completed' as const, output: j.data })),
);
void q.work('a', { batch: true, perJobResults: true }, async (jobs) => jobs.map((j) => ({ id: j.id, status: 'deadletter' as const })));
// @ts-expect-error with perJobResults a batch handler resolves with an array of results
void q.work('a', { batch: true, perJobResults: true }, (jobs) => jobs.length);
// @ts-expect-error a result's status is completed, failed or deadletter
void q.work('a', { batch: true, perJobResults: true }, (jobs) => jobs.map((j) => ({ id: j.id, status: 'done' as const })));
