// A throwaway PostgreSQL (scripts/jest-postgres.js), then the forge suites' migrated template
// databases, made once here rather than inside the first suites' hook timeouts.
module.exports = async () => {
  await require('./jest-postgres').setup();
  await require('../forge-api/test/support/templates').prepareTemplates();
};
