/**
 * Preloaded into a controller a benchmark starts (node -r): every 200 ms, writes the process's
 * heap used and total, and the most heap V8 committed so far, as JSON to the file named by
 * MEMORY_GAUGE_FILE. The standalone controller serves no metrics; this reads its heap from
 * outside the product. The timer does not keep the process alive.
 */
'use strict';
const fs = require('node:fs');

const file = process.env.MEMORY_GAUGE_FILE;
if (file) {
  let maxHeapTotal = 0;
  const write = () => {
    const m = process.memoryUsage();
    maxHeapTotal = Math.max(maxHeapTotal, m.heapTotal);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, maxHeapTotal }));
    fs.renameSync(`${file}.tmp`, file);
  };
  setInterval(write, 200).unref();
}
