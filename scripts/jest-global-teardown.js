module.exports = () => require('./jest-postgres').teardown();
