/** One jest run for the whole repository: unit tests next to each part, e2e under e2e/. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/controller', '<rootDir>/forge-api', '<rootDir>/e2e'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/scripts/totals-reporter.js'],
};
