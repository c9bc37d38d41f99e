// `pgqueue queues`: every queue with its policy, its job counts and whether it is paused. The counts are taken now
// (one count of the jobs of every queue, which caches them as getQueue's `force` does and touches neither the
// monitor's deltas nor its snapshots), or with --cached read from the last monitor pass, at the cost of one read of
// the queues table however many jobs are stored.
import type { Command } from 'commander';
import { runtimeOf } from '../core/pg-queue.js';
import type { QueueResult } from '../core/types.js';
import { connectionOptions, withQueue, type ConnectionOptions } from './connection.js';
import { printJson, type CliIo } from './io.js';
import { formatSeconds, formatTable, formatTime, type Column } from './table.js';

interface QueuesOptions extends ConnectionOptions {
  cached?: boolean;
  json?: boolean;
}

export function addQueues(program: Command, io: CliIo): void {
  const command = program
    .command('queues')
    .description('list the queues with their job counts, counted now')
    .option('--cached', 'show the counts the last monitor pass cached instead of counting now (cheap on a large table)')
    .option('--json', 'print the queues as JSON (the QueueResult objects of getQueues())');
  connectionOptions(command).action((options: QueuesOptions) =>
    withQueue(options, io, async (queue) => {
      if (!options.cached) {
        const names = (await queue.getQueues()).map((q) => q.name);
        if (names.length > 0) await runtimeOf(queue).recount(names);
      }
      const queues = await queue.getQueues();
      if (options.json) printJson(io, queues);
      else io.out(queues.length === 0 ? 'no queues\n' : queuesTable(queues, options.cached === true));
    }),
  );
}

const COLUMNS: readonly Column[] = [
  { header: 'queue' },
  { header: 'policy' },
  { header: 'queued', right: true },
  { header: 'ready', right: true },
  { header: 'deferred', right: true },
  { header: 'blocked', right: true },
  { header: 'active', right: true },
  { header: 'failed', right: true },
  { header: 'total', right: true },
  { header: 'oldest ready', right: true },
  { header: 'paused' },
];

/** The queues as a table; with `cached`, with the time each was counted. */
export function queuesTable(queues: readonly QueueResult[], cached: boolean): string {
  const columns = cached ? [...COLUMNS, { header: 'counted' }] : COLUMNS;
  const rows = queues.map((q) => [
    q.name,
    q.policy,
    String(q.queuedCount),
    String(q.readyCount),
    String(q.deferredCount),
    String(q.blockedCount),
    String(q.activeCount),
    String(q.failedCount),
    String(q.totalCount),
    formatSeconds(q.readyOldestSeconds),
    q.paused ? 'yes' : 'no',
    ...(cached ? [q.countedOn ? formatTime(q.countedOn) : 'never'] : []),
  ]);
  return formatTable(columns, rows);
}
