// The `pgqueue` command line, wired with commander: one subcommand per file of this folder. Commander reports usage
// errors itself (unknown command or option, a value its parser refused); run() turns every outcome into an exit code.
import { Command, CommanderError } from 'commander';
import { packageVersion } from '../core/runtime/version.js';
import { describeFailure, EXIT, EXIT_CODES_HELP } from './failure.js';
import type { CliIo } from './io.js';
import { printable, printableLines } from './printable.js';
import { addJobs } from './jobs.js';
import { addMigrate } from './migrate.js';
import { addPauseResume } from './pause.js';
import { addQueues } from './queues.js';
import { addRetry } from './retry.js';

/** The program, writing to `io`; commander's exits become CommanderErrors (exitOverride) for run() to map. */
export function buildProgram(io: CliIo): Command {
  // settings first: the subcommands copy them as they are made
  const program = new Command('pgqueue')
    .description('Look after the queues of nestjs-pgqueue: install the tables, list queues and jobs, retry failed jobs, pause.')
    .version(packageVersion())
    .configureOutput({
      writeOut: (text) => io.out(text),
      writeErr: (text) => io.err(text),
      // commander's messages quote the command line, which a script may have built from stored values
      outputError: (text, write) => write(printableLines(text.replace(/^error: /, 'pgqueue: '))),
    })
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP);
  addMigrate(program, io);
  addQueues(program, io);
  addJobs(program, io);
  addRetry(program, io);
  addPauseResume(program, io);
  return program;
}

/** Runs the command line `argv` (without node and the script) and returns its exit code (failure.ts, EXIT). */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    // commander has written its message (or the help, or the version) already
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const { exitCode, message } = describeFailure(err);
    // one line, control characters escaped: the message may quote a value of the database's or a driver's text
    io.err(`pgqueue: ${printable(message)}\n`);
    return exitCode;
  }
}
