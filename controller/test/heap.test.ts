/**
 * limitHeapGrowth (controller/src/heap.ts) sets a V8 flag at run time, which V8 honours only
 * for flags it reads after start: this suite shows, in a fresh node process, that the heap of a
 * program that rebuilds its state over and over (as reconciles do) stays within the growing
 * percent of what is live, where V8's own choice lets it grow several times larger. A Node.js
 * upgrade whose V8 drops or freezes the flag fails here instead of silently costing memory.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const HEAP = path.resolve(__dirname, '../src/heap.ts');

/**
 * ~60 MB held for the whole run plus a 30 MB "build" replaced 20 times; prints the peak heap
 * committed (heapTotal) and the live heap at the end, in MB.
 */
const CHURN = `
const limit = process.argv[1] === 'limited';
if (limit) require(${JSON.stringify(HEAP)}).limitHeapGrowth();
const held = Array.from({ length: 300000 }, (_, i) => ({ a: 'held' + i, b: [i, i + 1], c: { d: i } }));
let build = [];
let peak = 0;
for (let round = 0; round < 20; round++) {
  const next = [];
  for (let i = 0; i < 150000; i++) next.push({ k: 'r' + round + ':' + i, v: [i, round], w: { s: 'x' + i } });
  build = next;
  peak = Math.max(peak, process.memoryUsage().heapTotal);
}
global.gc();
console.log(JSON.stringify({ peakMB: peak / 1048576, liveMB: process.memoryUsage().heapUsed / 1048576, kept: held.length + build.length }));
`;

function run(mode: 'limited' | 'default'): { peakMB: number; liveMB: number } {
  const r = spawnSync(process.execPath, ['--expose-gc', '-r', 'tsx/cjs', '-e', CHURN, mode], { encoding: 'utf8', cwd: path.resolve(__dirname, '../..') });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

test('limitHeapGrowth: a program that rebuilds its state over and over keeps its heap well below the size V8 alone grows it to', () => {
  const limited = run('limited');
  const unlimited = run('default');
  // Same program, same live data (~85 MB): measured ~230 MB limited (V8's first limit, before the
  // growing factor applies, is the peak) against ~480 MB and growing with every round without.
  expect(Math.abs(limited.liveMB - unlimited.liveMB)).toBeLessThan(10);
  expect(limited.peakMB).toBeLessThan(unlimited.peakMB * 0.7);
});
