/** One jest run for the whole repository: unit tests next to each part, e2e under e2e/. */
module.exports = {
  // Node's, plus the end-of-file cleanups of e2e helpers (processes a failed test left running).
  testEnvironment: '<rootDir>/scripts/jest-environment.js',
  roots: ['<rootDir>/controller', '<rootDir>/forge-api', '<rootDir>/e2e'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // esbuild's per-file compile (tsconfig.json has isolatedModules); tsc --noEmit type-checks.
    '^.+\\.ts$': '<rootDir>/scripts/jest-ts-transform.js',
    '/node_modules/.+\\.m?js$': '<rootDir>/scripts/jest-esm-transform.js',
  },
  // Only these packages are ES modules without a CommonJS build (@kubernetes/client-node 2.x
  // and its dependencies, oidc-provider and openid-client); every other file under
  // node_modules is loaded untouched.
  transformIgnorePatterns: [
    '/node_modules/(?!(@kubernetes/client-node|@jsep-plugin|agent-base|jose|jsep|jsonpath-plus|oauth4webapi|oidc-provider|openid-client|rfc4648|socks-proxy-agent)/)',
  ],
  testTimeout: 120000,
  // A throwaway PostgreSQL for the forge suites (PG_TEST_URL), unless one is given.
  globalSetup: '<rootDir>/scripts/jest-global-setup.js',
  globalTeardown: '<rootDir>/scripts/jest-global-teardown.js',
  reporters: ['default', '<rootDir>/scripts/totals-reporter.js'],
};
