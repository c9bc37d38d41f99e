/**
 * Jest in native ESM mode (run through `node --experimental-vm-modules`), TypeScript through ts-jest. Two
 * projects: `unit` (test/unit: pure logic, no database, run first by `npm test`) and `db` (everything else,
 * against a real PostgreSQL that the global setup resolves).
 */
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
};

export default {
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test/unit'], testMatch: ['**/*.spec.ts'] },
    {
      ...common,
      displayName: 'db',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/'],
      globalSetup: '<rootDir>/test/helpers/global-setup.js',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
    },
  ],
  testTimeout: 60_000,
  // Against a server we did not start (DATABASE_URL), files run one at a time: its max_connections (100 on
  // this machine's PostgreSQL) is shared with whatever else uses it, and two files at once peaked at 83.
  // The embedded server the setup starts allows 300, so there two files run side by side.
  maxWorkers: process.env.PGQUEUE_TEST_DATABASE_URL || process.env.DATABASE_URL ? 1 : 2,
};
