// The pgqueue command's checks of what it is given, its exit codes, and its usage errors: all before any connection.
import { InvalidArgumentError } from 'commander';
import { checkUrl, integerIn, jobIdArgument, queueArgument, schemaArgument, statesArgument } from '../../lib/cli/arguments.js';
import { CommandError, describeFailure, EXIT, UsageError } from '../../lib/cli/failure.js';
import type { CliIo } from '../../lib/cli/io.js';
import { run } from '../../lib/cli/program.js';
import { InvalidOptionError, JobStateError, QueueError, QueueNotFoundError } from '../../lib/core/errors.js';
import { unsupportedServer } from '../../lib/core/runtime/server-version.js';

/** An io that keeps what was written, with the environment given. */
function memoryIo(env: Record<string, string> = {}): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    errIsTty: false,
    env,
    out: (text: string) => void (io.stdout += text),
    err: (text: string) => void (io.stderr += text),
  };
  return io;
}

describe("the command line's values", () => {
  it('takes whole numbers within the range, written in digits only', () => {
    const limit = integerIn(1, 1000);
    expect(limit('1')).toBe(1);
    expect(limit('1000')).toBe(1000);
    for (const bad of ['0', '1001', '-1', '1.5', '1e3', ' 5', '', 'ten', '99999999999999999999']) {
      expect(() => limit(bad)).toThrow(new InvalidArgumentError('It must be an integer from 1 to 1000.'));
    }
  });

  it("applies the engine's checks of queue names, schema names and job ids", () => {
    expect(queueArgument('emails.send')).toBe('emails.send');
    expect(() => queueArgument('no spaces')).toThrow(/It must be a string of 1 to 100 characters/);
    expect(schemaArgument('pgqueue_2')).toBe('pgqueue_2');
    expect(() => schemaArgument('Public')).toThrow(/It must be a lower-case identifier/);
    expect(jobIdArgument('7', jobIdArgument('12'))).toEqual(['12', '7']);
    expect(() => jobIdArgument('0')).toThrow(/It must be a job id/);
    expect(() => jobIdArgument('9223372036854775808')).toThrow(/It must be a job id/);
  });

  it('takes one state or several, comma-separated, each a job state', () => {
    expect(statesArgument('failed')).toEqual(['failed']);
    expect(statesArgument('failed, cancelled,failed')).toEqual(['failed', 'cancelled']);
    expect(() => statesArgument('failed,broken')).toThrow(/Each state must be one of created, retry, active, completed, cancelled, failed/);
  });

  it('takes PostgreSQL URLs only, and never repeats a refused one (it may hold a password)', () => {
    expect(checkUrl('postgres://u:p@h:5432/db', '--url')).toBe('postgres://u:p@h:5432/db');
    expect(checkUrl('postgresql://h/db', '--url')).toBe('postgresql://h/db');
    expect(() => checkUrl('mysql://u:secret@h/db', 'DATABASE_URL')).toThrow(
      new UsageError('DATABASE_URL must be a PostgreSQL URL (postgres://user:password@host:port/database), got a mysql: URL'),
    );
    expect(() => checkUrl('u:secret host', '--url')).toThrow(/got a value that is not a URL$/);
    expect(() => checkUrl('postgres://u:secret@h:port/db', '--url')).toThrow(/got a postgres: URL that does not parse/);
    expect(checkUrl('socket:/var/run/postgresql?db=app', '--url')).toBe('socket:/var/run/postgresql?db=app');
  });
});

describe('exit codes', () => {
  it('maps each kind of failure to its code and one line', () => {
    expect(describeFailure(new UsageError('no database URL'))).toEqual({ exitCode: EXIT.usage, message: 'no database URL' });
    expect(describeFailure(new InvalidOptionError('queue', 'a name', 'x y')).exitCode).toBe(EXIT.usage);
    expect(describeFailure(new CommandError('schema "x" holds no pgqueue tables')).exitCode).toBe(EXIT.failed);
    expect(describeFailure(new QueueNotFoundError('emails'))).toEqual({ exitCode: EXIT.failed, message: 'queue "emails" does not exist' });
    expect(describeFailure(new JobStateError('emails', '4', 'completed', 'failed')).exitCode).toBe(EXIT.failed);
    expect(describeFailure(new QueueError('no PostgreSQL answers', 'DATABASE_UNREACHABLE')).exitCode).toBe(EXIT.database);
    expect(describeFailure(new QueueError('the migration waited', 'MIGRATION_LOCK_TIMEOUT')).exitCode).toBe(EXIT.database);
    expect(describeFailure(unsupportedServer(140011)!)).toEqual({
      exitCode: EXIT.database,
      message: 'PostgreSQL 14.11 is not supported: nestjs-pgqueue needs PostgreSQL 15 or later (its unique keys use NULLS NOT DISTINCT)',
    });
    const refused = describeFailure(Object.assign(new Error(''), { code: 'ECONNREFUSED' }));
    expect(refused).toEqual({
      exitCode: EXIT.database,
      message: 'no PostgreSQL answers (ECONNREFUSED): is it running, and is that its address?',
    });
    const statement = describeFailure(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    expect(statement).toEqual({
      exitCode: EXIT.database,
      message: 'the database failed the command: canceling statement due to statement timeout',
    });
    expect(describeFailure(new TypeError('x is undefined')).exitCode).toBe(EXIT.failed);
  });
});

describe('usage errors (exit code 2), before any connection', () => {
  it.each([
    [['frobnicate'], "pgqueue: unknown command 'frobnicate'"],
    [['jobs'], "pgqueue: missing required argument 'queue'"],
    [['jobs', 'q', '--limit', '0'], "pgqueue: option '--limit <n>' argument '0' is invalid. It must be an integer from 1 to 10000."],
    [['jobs', 'q', '--state', 'done'], "pgqueue: option '--state <states>' argument 'done' is invalid. Each state must be one of"],
    [['queues', '--frob'], "pgqueue: unknown option '--frob'"],
    [['retry', 'q'], 'pgqueue: give the ids of the jobs to retry, or --failed for every failed job'],
    [['retry', 'q', '1', '--failed'], 'pgqueue: give job ids or --failed, not both'],
    [['retry', 'q', '1', '--limit', '5'], 'pgqueue: --limit needs --failed'],
    [
      ['retry', 'q', '--failed', '--limit', '0'],
      "pgqueue: option '--limit <n>' argument '0' is invalid. It must be an integer from 1 to 10000000.",
    ],
    [['migrate', '--from', '1'], 'pgqueue: --from needs --print'],
    [
      ['migrate', '--print', '--from', '999'],
      "pgqueue: option '--from <version>' argument '999' is invalid. It must be an integer from 0 to",
    ],
    [['migrate', '--print', '--from', '0', '--url', 'postgres://h/db'], 'pgqueue: --from and --url'],
    [['migrate', '--print', '--json'], "pgqueue: option '--json' cannot be used with option '--print'"],
    [['pause', 'q', '--schema', 'Bad'], "pgqueue: option '--schema <name>' argument 'Bad' is invalid."],
    [['queues'], 'pgqueue: no database URL: pass --url <url> or set DATABASE_URL'],
    [['pause', 'q', '--url', 'http://h/db'], 'pgqueue: --url must be a PostgreSQL URL'],
  ])('pgqueue %j', async (argv, message) => {
    const io = memoryIo();
    expect(await run(argv, io)).toBe(EXIT.usage);
    expect(io.stderr.startsWith(message)).toBe(true);
    expect(io.stdout).toBe('');
  });

  it('DATABASE_URL is checked as --url is', async () => {
    const io = memoryIo({ DATABASE_URL: 'redis://h:6379' });
    expect(await run(['queues'], io)).toBe(EXIT.usage);
    expect(io.stderr).toBe(
      'pgqueue: DATABASE_URL must be a PostgreSQL URL (postgres://user:password@host:port/database), got a redis: URL\n',
    );
  });

  it('with no command, shows the help on stderr; --help shows it on stdout with the exit codes, and exits 0', async () => {
    const bare = memoryIo();
    expect(await run([], bare)).toBe(EXIT.usage);
    expect(bare.stderr).toContain('Usage: pgqueue');
    const help = memoryIo();
    expect(await run(['--help'], help)).toBe(EXIT.ok);
    expect(help.stdout).toContain('Exit codes:');
    for (const command of ['migrate', 'queues', 'jobs', 'retry', 'pause', 'resume']) expect(help.stdout).toContain(`  ${command} `);
    const version = memoryIo();
    expect(await run(['--version'], version)).toBe(EXIT.ok);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
