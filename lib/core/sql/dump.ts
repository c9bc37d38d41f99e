/**
 * The SQL of every statement in this folder as one text, for a sample schema: `npm run sql:dump` writes it to
 * lib/core/sql/statements.sql (scripts/sql-dump.mjs), and test/unit/sql-dump.spec.ts fails when that file differs
 * from what the statements render now. The statements are built from fragments, so a change to one fragment
 * shows in the file's diff in every statement it reaches: the review reads the SQL, not the template.
 */
import { buildStatements } from './index.js';
import * as migrate from './migrate.js';
import * as notify from './notify.js';
import * as transaction from './transaction.js';

/** The sample schema, quoted as the configuration quotes it. */
const SCHEMA = '"pgqueue"';

/** Its LISTEN/NOTIFY channel, as the configuration names it (`pgqueue_` and the schema's name). */
const CHANNEL = 'pgqueue_pgqueue';

/**
 * A queue's own table, as QueueRouter.statementsForProfile passes it: the partition of a queue named 'emails'
 * (queue_partition_name in schema/migrations/0001_init.ts: 'jobs_q_' and the first 16 hex digits of its md5).
 */
const QUEUE_TABLE = `${SCHEMA}.jobs_q_af67ca2fe7ffcec8`;

/** What the per-queue statements name instead of QUEUE_TABLE when they are built for no queue. */
const JOBS = `${SCHEMA}.jobs`;

/**
 * The exports of migrate.ts, notify.ts and transaction.ts that do not take the schema alone, with the arguments
 * they are shown with. Any other export that is neither SQL text nor `(schema) => SQL` makes the dump throw, so
 * that a new builder is not left out unseen.
 */
const SPECIAL: Readonly<Record<string, () => string>> = {
  'migrate.ts migrationScript': () =>
    migrate.migrationScript(
      'pgqueue',
      SCHEMA,
      0,
      [{ version: 1, name: 'init', sql: "-- the migration's own statements (schema/migrations), left out here" }],
      '-- a header (lib/core/runtime/migrate.ts: the package version, the versions from and to)',
    ),
  'notify.ts listen': () => notify.listen(CHANNEL),
};

const HEADER = `-- Every SQL statement of lib/core/sql/, rendered for the schema ${SCHEMA}. Written by \`npm run sql:dump\`
-- (lib/core/sql/dump.ts); do not edit: test/unit/sql-dump.spec.ts fails when it differs from the statements.
-- Each statement's text as sent, without its leading and trailing blank lines, under a header with its name.
--
-- "(per queue)": the statement reads or changes the jobs of one queue and names that queue's own table, here
-- ${QUEUE_TABLE} (the partition of a queue 'emails'). Built for no queue, it names
-- ${JOBS} in those places and is otherwise the same (lib/core/sql/index.ts, buildStatements).`;

/** One statement under its header. */
const section = (header: string, sql: string) => `-- ${header}\n${sql.trim()}`;

/** The statements of buildStatements, sorted by name; those that take the queue's table in their per-queue form. */
function runtimeStatements(): string[] {
  const plain: Record<string, string> = buildStatements(SCHEMA);
  const perQueue: Record<string, string> = buildStatements(SCHEMA, QUEUE_TABLE);
  return Object.keys(plain)
    .sort()
    .flatMap((name) => {
      const shared = plain[name]!;
      const own = perQueue[name]!;
      if (own === shared) return [section(name, shared)];
      if (own.replaceAll(QUEUE_TABLE, JOBS) === shared) return [section(`${name} (per queue)`, own)];
      // the two forms differ beyond the table's name: show both
      return [section(`${name} (per queue)`, own), section(`${name} (for no queue)`, shared)];
    });
}

/** The exports of a module of SQL that buildStatements does not build, sorted by name (numbers left out). */
function moduleStatements(file: string, mod: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(mod)
    .sort()
    .flatMap((name) => {
      const value = mod[name];
      const special = SPECIAL[`${file} ${name}`];
      if (special) return [section(`${file}: ${name}`, special())];
      if (typeof value === 'number') return []; // a setting (ENGINE_TRANSACTION_IDLE_SECONDS): shown inside the SQL
      if (typeof value === 'string') return [section(`${file}: ${name}`, value)];
      if (typeof value === 'function' && value.length === 1) return [section(`${file}: ${name}`, (value as (s: string) => string)(SCHEMA))];
      throw new Error(`lib/core/sql/dump.ts cannot render ${file}'s ${name}: give it arguments in SPECIAL`);
    });
}

/** The text of lib/core/sql/statements.sql. */
export function renderStatements(): string {
  const parts = [
    HEADER,
    '-- ==== buildStatements (lib/core/sql/index.ts): every statement the engine runs for jobs and queues ====',
    ...runtimeStatements(),
    '-- ==== the installer (migrate.ts), LISTEN (notify.ts) and transactions (transaction.ts) ====',
    ...moduleStatements('migrate.ts', migrate),
    ...moduleStatements('notify.ts', notify),
    ...moduleStatements('transaction.ts', transaction),
  ];
  return `${parts.join('\n\n')}\n`;
}
