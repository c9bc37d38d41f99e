// `pgqueue jobs <queue>`: a queue's jobs, newest first, read page by page with findJobs' cursor up to --limit. With
// --json the jobs come whole, with the cursor that continues the list (--after).
import type { Command } from 'commander';
import { JOB_STATES, type JobPage } from '../core/jobs/finder.js';
import type { PgQueue } from '../core/pg-queue.js';
import type { JobState, JobWithMetadata } from '../core/types.js';
import { integerIn, jobId, queueArgument, statesArgument } from './arguments.js';
import { connectionOptions, withQueue, type ConnectionOptions } from './connection.js';
import { printJson, type CliIo } from './io.js';
import { formatTable, formatTime, oneLine, type Column } from './table.js';

/** Most jobs one call lists. */
export const MAX_LISTED = 10_000;
/** Jobs per findJobs page: its own maximum. */
const PAGE = 1000;
/** Longest error message a row of the table shows. */
const ERROR_WIDTH = 60;

interface JobsOptions extends ConnectionOptions {
  state?: JobState[];
  limit: number;
  after?: string;
  json?: boolean;
}

export function addJobs(program: Command, io: CliIo): void {
  const command = program
    .command('jobs')
    .description("list a queue's jobs, newest first")
    .argument('<queue>', 'the queue', queueArgument)
    .option('--state <states>', `only jobs in these states, comma-separated: ${JOB_STATES.join(', ')}`, statesArgument)
    .option('--limit <n>', `most jobs listed, 1 to ${MAX_LISTED}`, integerIn(1, MAX_LISTED), 100)
    .option('--after <id>', 'only jobs older than this one (the `next` of a previous --json answer)', jobId)
    .option('--json', 'print { jobs, next } as JSON: the jobs whole, and the --after that lists the next ones (null: none)');
  connectionOptions(command).action((name: string, options: JobsOptions) =>
    withQueue(options, io, async (queue) => {
      const { jobs, next } = await listJobs(queue, name, options);
      if (options.json) return printJson(io, { jobs, next });
      io.out(jobs.length === 0 ? 'no jobs\n' : jobsTable(jobs));
      if (next !== null) io.out(`(more jobs: repeat with --after ${next})\n`);
    }),
  );
}

/** Up to --limit jobs, read a findJobs page at a time; `next` continues after the last. */
async function listJobs(queue: PgQueue, name: string, options: JobsOptions): Promise<JobPage> {
  const jobs: JobWithMetadata[] = [];
  let after = options.after;
  for (;;) {
    const page = await queue.findJobs(name, { state: options.state, limit: Math.min(PAGE, options.limit - jobs.length), after });
    jobs.push(...page.jobs);
    if (page.next === null || jobs.length >= options.limit) return { jobs, next: page.next };
    after = page.next;
  }
}

const COLUMNS: readonly Column[] = [
  { header: 'id', right: true },
  { header: 'state' },
  { header: 'retries', right: true },
  { header: 'created' },
  { header: 'finished' },
  { header: 'last error' },
];

/** The jobs as a table: retries as used/allowed, and the last error's message on one line, cut short. */
export function jobsTable(jobs: readonly JobWithMetadata[]): string {
  return formatTable(
    COLUMNS,
    jobs.map((j) => [
      j.id,
      j.state,
      `${j.retryCount}/${j.retryLimit}`,
      formatTime(j.createdOn),
      formatTime(j.completedOn),
      j.lastError ? oneLine(j.lastError.message, ERROR_WIDTH) : '',
    ]),
  );
}
