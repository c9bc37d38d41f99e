/**
 * Jest in native ESM mode (run through `node --experimental-vm-modules`), TypeScript through ts-jest. Three
 * projects: `unit` (test/unit: pure logic, no database, run first by `npm test`), `db` (everything else, against a
 * real PostgreSQL that the global setup resolves) and `campaign` (the fault campaign, alone, when it crash-restarts
 * the server the other files share: PGQUEUE_TEST_CRASH_SERVER=1 with a server given; otherwise it is one of `db`).
 */
import pg from 'pg';

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
};

const given = process.env.PGQUEUE_TEST_DATABASE_URL || process.env.DATABASE_URL;
const CAMPAIGN = '<rootDir>/test/reliability/campaign.spec.ts';
/** The campaign crash-restarts the given server: no other file may run meanwhile. */
const crashesGiven = Boolean(given) && process.env.PGQUEUE_TEST_CRASH_SERVER === '1';

const PROJECTS = ['unit', 'db', 'campaign'];

/**
 * The projects this run selects: those named after --selectProjects (or --select-projects, with `=` or spaces,
 * repeated), less those after --ignoreProjects; all of them when none is named. What follows a flag up to the next
 * flag counts as names, as Jest's argument parser reads it.
 */
function selected() {
  const named = { select: [], ignore: [] };
  let into = null;
  for (const arg of process.argv.slice(2)) {
    const flag = /^--(selectProjects|select-projects|ignoreProjects|ignore-projects)(?:=(.*))?$/.exec(arg);
    if (flag) {
      into = flag[1].startsWith('select') ? named.select : named.ignore;
      if (flag[2] !== undefined) into.push(...flag[2].split(','));
    } else if (arg.startsWith('-')) into = null;
    else into?.push(arg);
  }
  const chosen = named.select.length > 0 ? named.select : PROJECTS;
  return chosen.filter((p) => !named.ignore.includes(p));
}

/**
 * Three files at once against a given server with room for them: the database tests wait on the server and on timers
 * more than they compute. On this 2-core machine three took 287 s against its PostgreSQL where two took 362 s (CI) and
 * one 576 s; the most client connections seen during a CI run with three, sampled each second from pg_stat_activity,
 * were 45. A server we did not start (DATABASE_URL) is shared with whatever else uses it: it gets three files only
 * when it allows at least 200 connections (this machine's PostgreSQL allows 100 unless .ci/run raised it), else one;
 * a server that does not answer here gets one, and the setup reports why. The server the setup starts (embedded, 300
 * connections; Testcontainers, 100) gets two: three took 291-307 s there against 311-319 s, and once in four CI runs
 * a child worker of test/reliability/poison.spec.ts did not stop within its 10 s under that load. Jest's projects
 * share its workers: where the campaign crashes the given server, a run that may select it with other projects runs
 * one file at a time.
 */
const PARALLEL = 3;

async function workers() {
  const projects = selected();
  if (!projects.some((p) => p !== 'unit')) return PARALLEL; // no database: nothing to ask
  if (crashesGiven && projects.includes('campaign') && projects.length > 1) return 1;
  // the setup's own server (embedded or Testcontainers): two, as before; three saved it only about 15 s a run
  if (!given) return 2;
  const client = new pg.Client({ connectionString: given, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const { rows } = await client.query(`SELECT current_setting('max_connections')::int AS max`);
    return rows[0].max >= 200 ? PARALLEL : 1;
  } catch {
    return 1;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export default async () => ({
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test/unit'], testMatch: ['**/*.spec.ts'] },
    {
      ...common,
      displayName: 'db',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/', ...(crashesGiven ? [CAMPAIGN] : [])],
      globalSetup: '<rootDir>/test/helpers/global-setup.js',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
    },
    {
      ...common,
      displayName: 'campaign',
      roots: ['<rootDir>/test/reliability'],
      testMatch: ['**/campaign.spec.ts'],
      // (an empty testMatch would mean Jest's default: every file)
      testPathIgnorePatterns: crashesGiven ? [] : ['.'],
      globalSetup: '<rootDir>/test/helpers/global-setup.js',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
    },
  ],
  testTimeout: 60_000,
  maxWorkers: await workers(),
});
