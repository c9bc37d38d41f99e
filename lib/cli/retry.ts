// `pgqueue retry <queue>`: gives failed jobs a fresh attempt budget (PgQueue.retry), either the ids given, all or
// nothing as the engine does it, or with --failed every failed job of the queue, in batches, with a progress bar.
import type { Command } from 'commander';
import { QueueError, QueueNotFoundError } from '../core/errors.js';
import type { ChangeResult } from '../core/jobs/control.js';
import type { FindJobsOptions, JobPage } from '../core/jobs/finder.js';
import { integerIn, jobIdArgument, queueArgument } from './arguments.js';
import { connectionOptions, withQueue, type ConnectionOptions } from './connection.js';
import { UsageError } from './failure.js';
import { printJson, type CliIo } from './io.js';
import { ProgressBar } from './progress.js';

/** Most failed jobs one call retries. */
export const MAX_RETRIED = 10_000_000;
/** Failed jobs retried per statement. */
export const RETRY_BATCH = 500;

/** What retryFailed needs of the engine (PgQueue has both). */
export interface RetryPort {
  findJobs(name: string, options: FindJobsOptions): Promise<JobPage>;
  retry(name: string, ids: string[]): Promise<ChangeResult>;
}

/**
 * Refusals of retry() that concern one job, which a batch meets when another change came between the page's read and
 * the batch: the job is no longer failed (retried, deleted), or another job now holds its key.
 */
const SKIPPED = new Set(['JOB_STATE', 'JOB_NOT_FOUND', 'JOB_RACE', 'KEY_TAKEN']);

function skippable(err: unknown): boolean {
  return err instanceof QueueError && SKIPPED.has(err.code);
}

/**
 * Retries up to `limit` failed jobs of queue `name`, newest first, `batchSize` per statement. The pages follow
 * findJobs' cursor down the ids, so a job that fails again after its retry is not met twice, and jobs that fail
 * meanwhile (newer ids) are left for another call: the walk ends. retry() refuses a whole batch for one job that
 * changed since the page was read; that batch is then retried job by job, and such jobs are counted as skipped.
 */
export async function retryFailed(
  port: RetryPort,
  name: string,
  options: { limit: number; batchSize: number; progress?: (retried: number) => void },
): Promise<{ retried: number; skipped: number }> {
  let retried = 0;
  let skipped = 0;
  let after: string | undefined;
  while (retried < options.limit) {
    const page = await port.findJobs(name, { state: 'failed', limit: Math.min(options.batchSize, options.limit - retried), after });
    const ids = page.jobs.map((j) => j.id);
    if (ids.length === 0) break;
    try {
      retried += (await port.retry(name, ids)).updated;
    } catch (err) {
      if (!skippable(err)) throw err;
      for (const id of ids) {
        try {
          retried += (await port.retry(name, [id])).updated;
        } catch (one) {
          if (!skippable(one)) throw one;
          skipped++;
        }
      }
    }
    options.progress?.(retried);
    if (page.next === null) break;
    after = page.next;
  }
  return { retried, skipped };
}

interface RetryOptions extends ConnectionOptions {
  failed?: boolean;
  limit?: number;
  json?: boolean;
}

const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;

export function addRetry(program: Command, io: CliIo): void {
  const command = program
    .command('retry')
    .description('retry failed jobs: those named by id (all or none), or every failed job of the queue (--failed)')
    .argument('<queue>', 'the queue', queueArgument)
    .argument('[ids...]', 'ids of failed jobs to retry', jobIdArgument)
    .option('--failed', 'retry every failed job of the queue, newest first, in batches')
    .option('--limit <n>', `with --failed: retry at most this many, 1 to ${MAX_RETRIED}`, integerIn(1, MAX_RETRIED))
    .option('--json', 'print { queue, retried, skipped } as JSON');
  connectionOptions(command).action((name: string, ids: string[] | undefined, options: RetryOptions) => {
    const given = ids ?? [];
    if (options.failed && given.length > 0) throw new UsageError('give job ids or --failed, not both');
    if (!options.failed && given.length === 0) throw new UsageError('give the ids of the jobs to retry, or --failed for every failed job');
    if (options.limit !== undefined && !options.failed) throw new UsageError('--limit needs --failed: ids given are retried all together');
    return withQueue(options, io, async (queue) => {
      let result: { retried: number; skipped: number };
      if (options.failed) {
        const counted = await queue.getQueue(name, { force: true });
        if (!counted) throw new QueueNotFoundError(name);
        const limit = options.limit ?? MAX_RETRIED;
        const total = Math.min(limit, counted.failedCount);
        const bar = new ProgressBar((text) => io.err(text), 'retried', io.errIsTty && !options.json);
        bar.update(0, total);
        try {
          result = await retryFailed(queue, name, { limit, batchSize: RETRY_BATCH, progress: (done) => bar.update(done, total) });
        } finally {
          bar.end();
        }
      } else {
        result = { retried: (await queue.retry(name, given)).updated, skipped: 0 };
      }
      if (options.json) return printJson(io, { queue: name, ...result });
      const skipped = result.skipped > 0 ? `; ${jobs(result.skipped)} skipped: no longer failed, or another job holds their key` : '';
      io.out(`retried ${jobs(result.retried)} of queue "${name}"${skipped}\n`);
    });
  });
}
