/**
 * limitHeapGrowth (controller/src/heap.ts) sets a V8 flag at run time, which V8 honours only
 * for flags it reads after start: this suite shows, in a fresh node process, that the heap of a
 * program that rebuilds its state over and over (as reconciles do) stays within the growing
 * percent of what is live, where V8's own choice lets it grow several times larger. A Node.js
 * upgrade whose V8 drops or freezes the flag fails here instead of silently costing memory.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CONTROLLER_NODE_FLAGS } from '../src/heap';

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

/** Allocates short-lived objects fast, as a build does, and prints the largest young generation (MB). */
const YOUNG = `
const v8 = require('node:v8');
let max = 0;
let keep = [];
for (let round = 0; round < 60; round++) {
  keep = Array.from({ length: 20000 }, (_, i) => ({ k: 'r' + round + ':' + i, v: [i, round] }));
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  max = Math.max(max, young.space_size);
}
console.log(JSON.stringify({ youngMB: max / 1048576, kept: keep.length }));
`;

test('CONTROLLER_NODE_FLAGS cap the young generation, and the bin starts with them', () => {
  const young = (flags: readonly string[]) => {
    const r = spawnSync(process.execPath, [...flags, '-e', YOUNG], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return (JSON.parse(r.stdout.trim().split('\n').pop()!) as { youngMB: number }).youngMB;
  };
  // Two semi-spaces of 2 MB; V8 alone grows them to 16 MB each for such a program.
  expect(young(CONTROLLER_NODE_FLAGS)).toBeLessThanOrEqual(4);
  expect(young([])).toBeGreaterThan(8);
  const firstLine = readFileSync(path.resolve(__dirname, '../../bin/portcullis-controller.js'), 'utf8').split('\n')[0];
  expect(firstLine).toBe(`#!/usr/bin/env -S node ${CONTROLLER_NODE_FLAGS.join(' ')}`);
});
