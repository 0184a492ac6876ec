module.exports = () => require('./jest-postgres').setup();
