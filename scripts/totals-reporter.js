// Prints the run's totals as the last line ("N passed, N failed"), the form CI reads,
// and keeps a copy in .test-totals for .ci/run to repeat after npm's own output.
const fs = require('fs');
class TotalsReporter {
  onRunComplete(_contexts, results) {
    const line = `${results.numPassedTests} passed, ${results.numFailedTests + results.numRuntimeErrorTestSuites} failed` +
      (results.numPendingTests ? `, ${results.numPendingTests} skipped` : '');
    fs.writeFileSync('.test-totals', line + '\n');
    process.stdout.write(line + '\n');
  }
}
module.exports = TotalsReporter;
