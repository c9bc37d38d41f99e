// `pgqueue migrate`: installs or upgrades the queue's tables, as an engine does at its start, or prints the SQL for a
// DBA who owns the DDL. The printed script is the installer's own work written out (lib/core/runtime/migrate.ts,
// migrationScript), bookkeeping included, so an engine started afterwards finds the version recorded.
import { Option, type Command } from 'commander';
import { quotedSchema } from '../core/config/config.js';
import { installedVersion, LATEST_VERSION, migrate, migrationScript } from '../core/runtime/migrate.js';
import { integerIn } from './arguments.js';
import { connectionOptions, databaseUrl, withClient, withPool, type ConnectionOptions } from './connection.js';
import { UsageError } from './failure.js';
import { cliLogger, printJson, type CliIo } from './io.js';

interface MigrateOptions extends ConnectionOptions {
  print?: boolean;
  from?: number;
  json?: boolean;
}

export function addMigrate(program: Command, io: CliIo): void {
  const command = program
    .command('migrate')
    .description("install or upgrade the queue's tables in one transaction, or print their SQL (--print)")
    .option('--print', 'print the SQL script instead of running it (apply it with psql -v ON_ERROR_STOP=1 -f)')
    .option(
      '--from <version>',
      `with --print: the installed version the script starts from, 0 to ${LATEST_VERSION} (default: the version the database ` +
        'holds when a URL is given, else 0)',
      integerIn(0, LATEST_VERSION),
    )
    .addOption(new Option('--json', 'print the versions as JSON').conflicts('print'));
  connectionOptions(command).action((options: MigrateOptions, cmd: Command) =>
    options.print ? printScript(options, cmd, io) : apply(options, io),
  );
}

async function apply(options: MigrateOptions, io: CliIo): Promise<void> {
  if (options.from !== undefined) throw new UsageError('--from needs --print: migrate always starts from the version installed');
  const url = databaseUrl(options, io);
  const { from, to } = await withPool(url, (pool) => migrate(pool, options.schema, quotedSchema(options.schema), cliLogger(io)));
  if (options.json) printJson(io, { schema: options.schema, from, to });
  else if (from === to) io.out(`schema "${options.schema}" is at version ${from}: nothing to do\n`);
  else io.out(`schema "${options.schema}" migrated from version ${from} to ${to}\n`);
}

async function printScript(options: MigrateOptions, cmd: Command, io: CliIo): Promise<void> {
  const ident = quotedSchema(options.schema);
  let from = options.from;
  if (from !== undefined && cmd.getOptionValueSource('url') === 'cli') {
    throw new UsageError('--from and --url: the script starts at --from and reads nothing from a database; give one of them');
  }
  // DATABASE_URL is only a default: --from given, the script needs no database
  if (from === undefined && (options.url !== undefined || io.env.DATABASE_URL)) {
    const url = databaseUrl(options, io);
    from = await withClient(url, (client) => installedVersion(client, options.schema, ident));
  }
  io.out(migrationScript(options.schema, ident, from ?? 0).sql);
}
