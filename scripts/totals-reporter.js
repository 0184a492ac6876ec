// Prints, per part of the tree, how many suites and tests ran and how long they took (the sum
// of the suites' own times, and the wall-clock span from the first suite's start to the last
// one's end, which overlap when workers run in parallel), then the run's totals as the last
// line ("N passed, N failed"), the form CI reads, and keeps a copy in .test-totals.
const fs = require('fs');
const path = require('path');

function area(file, rootDir) {
  const parts = path.relative(rootDir, file).split(path.sep);
  return parts[0] === 'e2e' && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0] === 'e2e' ? 'e2e (forge clients)' : parts[0];
}

class TotalsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }
  onRunComplete(_contexts, results) {
    const areas = new Map();
    for (const r of results.testResults) {
      const a = areas.get(area(r.testFilePath, this.rootDir)) ?? { suites: 0, tests: 0, failed: 0, busy: 0, start: Infinity, end: 0 };
      a.suites++;
      a.tests += r.numPassingTests + r.numFailingTests;
      a.failed += r.numFailingTests + (r.testExecError ? 1 : 0);
      if (r.perfStats && r.perfStats.start) {
        a.busy += (r.perfStats.end - r.perfStats.start) / 1000;
        a.start = Math.min(a.start, r.perfStats.start);
        a.end = Math.max(a.end, r.perfStats.end);
      }
      areas.set(area(r.testFilePath, this.rootDir), a);
    }
    for (const [name, a] of [...areas].sort((x, y) => y[1].busy - x[1].busy)) {
      const span = a.end > a.start ? Math.round((a.end - a.start) / 1000) : 0;
      process.stdout.write(`[phase] suites in ${name}: ${a.suites} suites, ${a.tests} tests (${a.failed} failed), ${Math.round(a.busy)} s of suite time, ${span} s wall\n`);
    }
    const line = `${results.numPassedTests} passed, ${results.numFailedTests + results.numRuntimeErrorTestSuites} failed` +
      (results.numPendingTests ? `, ${results.numPendingTests} skipped` : '');
    fs.writeFileSync('.test-totals', line + '\n');
    process.stdout.write(line + '\n');
  }
}
module.exports = TotalsReporter;
