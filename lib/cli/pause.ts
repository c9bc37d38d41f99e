// `pgqueue pause <queue>` and `pgqueue resume <queue>`: the queue's paused flag, stored in the database, which every
// instance obeys at its next claim (PgQueue.pauseQueue, resumeQueue); sending keeps working either way.
import type { Command } from 'commander';
import { queueArgument } from './arguments.js';
import { connectionOptions, withQueue, type ConnectionOptions } from './connection.js';
import { printJson, type CliIo } from './io.js';

interface PauseOptions extends ConnectionOptions {
  json?: boolean;
}

export function addPauseResume(program: Command, io: CliIo): void {
  for (const paused of [true, false]) {
    const command = program
      .command(paused ? 'pause' : 'resume')
      .description(paused ? "stop every instance's claims of a queue (sending goes on)" : "let every instance claim the queue's jobs again")
      .argument('<queue>', 'the queue', queueArgument)
      .option('--json', 'print { queue, paused } as JSON');
    connectionOptions(command).action((name: string, options: PauseOptions) =>
      withQueue(options, io, async (queue) => {
        await (paused ? queue.pauseQueue(name) : queue.resumeQueue(name));
        if (options.json) printJson(io, { queue: name, paused });
        else io.out(`queue "${name}" ${paused ? 'paused' : 'resumed'}\n`);
      }),
    );
  }
}
