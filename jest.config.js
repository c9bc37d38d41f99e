/** Jest in native ESM mode (run through `node --experimental-vm-modules`), TypeScript through ts-jest. */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
  globalSetup: '<rootDir>/test/helpers/global-setup.js',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
  testTimeout: 60_000,
  maxWorkers: 2,
};
