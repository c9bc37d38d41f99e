// `pgqueue retry --failed` walks a queue's failed jobs down findJobs' cursor and retries them in batches. Here against
// a queue kept in memory that pages and retries as the engine does (newest first, all or nothing per call); the
// command against PostgreSQL is in test/cli/cli.spec.ts.
import { retryFailed, type RetryPort } from '../../lib/cli/retry.js';
import { JobStateError } from '../../lib/core/errors.js';
import type { FindJobsOptions, JobPage } from '../../lib/core/jobs/finder.js';
import type { JobWithMetadata } from '../../lib/core/types.js';

class MemoryQueue implements RetryPort {
  readonly states = new Map<string, string>();
  readonly batches: string[][] = [];
  /** Runs before each retry call, as another process changing jobs meanwhile. */
  beforeRetry: (ids: string[]) => void = () => undefined;
  /** Runs after each retry call that changed jobs. */
  afterRetry: (ids: string[]) => void = () => undefined;

  constructor(failed: number) {
    for (let id = 1; id <= failed; id++) this.states.set(String(id), 'failed');
  }

  findJobs(_name: string, options: FindJobsOptions): Promise<JobPage> {
    const ids = [...this.states]
      .filter(([id, state]) => state === options.state && (options.after === undefined || Number(id) < Number(options.after)))
      .map(([id]) => id)
      .sort((a, b) => Number(b) - Number(a));
    const jobs = ids.slice(0, options.limit).map((id) => ({ id, state: 'failed' }) as JobWithMetadata);
    return Promise.resolve({ jobs, next: ids.length > options.limit! ? jobs.at(-1)!.id : null });
  }

  retry(name: string, ids: string[]) {
    this.beforeRetry(ids);
    const refused = ids.find((id) => this.states.get(id) !== 'failed');
    if (refused) return Promise.reject(new JobStateError(name, refused, this.states.get(refused)!, 'failed'));
    for (const id of ids) this.states.set(id, 'retry');
    this.batches.push(ids);
    this.afterRetry(ids);
    return Promise.resolve({ requested: ids.length, updated: ids.length, ids });
  }

  count(state: string): number {
    return [...this.states.values()].filter((s) => s === state).length;
  }
}

describe('retrying every failed job', () => {
  it('retries them all, newest first, one batch per statement, reporting progress after each', async () => {
    const queue = new MemoryQueue(12);
    const progress: number[] = [];
    expect(await retryFailed(queue, 'q', { limit: 100, batchSize: 5, progress: (n) => progress.push(n) })).toEqual({
      retried: 12,
      skipped: 0,
    });
    expect(queue.batches).toEqual([
      ['12', '11', '10', '9', '8'],
      ['7', '6', '5', '4', '3'],
      ['2', '1'],
    ]);
    expect(progress).toEqual([5, 10, 12]);
    expect(queue.count('failed')).toBe(0);
  });

  it('stops at the limit, leaving the older ones failed', async () => {
    const queue = new MemoryQueue(12);
    expect(await retryFailed(queue, 'q', { limit: 7, batchSize: 5 })).toEqual({ retried: 7, skipped: 0 });
    expect(queue.batches.map((b) => b.length)).toEqual([5, 2]);
    expect(queue.count('failed')).toBe(5);
    expect(queue.states.get('5')).toBe('failed');
  });

  it('ends although every retried job fails again at once: the cursor never comes back to it', async () => {
    const queue = new MemoryQueue(9);
    queue.afterRetry = (ids) => ids.forEach((id) => queue.states.set(id, 'failed'));
    expect(await retryFailed(queue, 'q', { limit: 1000, batchSize: 4 })).toEqual({ retried: 9, skipped: 0 });
    expect(queue.batches.flat()).toHaveLength(9);
  });

  it('a job changed between the read and its batch is skipped; the rest of the batch is retried', async () => {
    const queue = new MemoryQueue(6);
    let raced = false;
    queue.beforeRetry = (ids) => {
      if (raced) return;
      raced = true;
      queue.states.set(ids[1]!, 'retry'); // retried by someone else meanwhile
    };
    expect(await retryFailed(queue, 'q', { limit: 1000, batchSize: 3 })).toEqual({ retried: 5, skipped: 1 });
    expect(queue.batches).toEqual([['6'], ['4'], ['3', '2', '1']]);
    expect(queue.count('failed')).toBe(0);
  });

  it('any other failure ends the walk with that error', async () => {
    const queue = new MemoryQueue(3);
    queue.beforeRetry = () => {
      throw new Error('connection lost');
    };
    await expect(retryFailed(queue, 'q', { limit: 10, batchSize: 2 })).rejects.toThrow('connection lost');
  });
});
