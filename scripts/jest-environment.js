// Every suite's environment: Node's, plus the cleanups e2e/support/file-end.ts registered, run
// when the file's tests and hooks are over (after its afterAll hooks, failed or not): the
// processes e2e helpers started and the test did not stop. A jest worker runs many files one
// after the other, so a process a file left behind would otherwise live on beside the next ones.
const { TestEnvironment } = require('jest-environment-node');

class PortcullisEnvironment extends TestEnvironment {
  async teardown() {
    const cleanups = this.global.__portcullisFileEnd;
    // Last registered first, as a test's own cleanups would run (a fixture before the
    // controller it started).
    for (const cleanup of [...(cleanups ?? [])].reverse()) {
      cleanups.delete(cleanup);
      await cleanup().catch((err) => console.error('cleanup at the end of the test file failed:', err));
    }
    await super.teardown();
  }
}

module.exports = PortcullisEnvironment;
