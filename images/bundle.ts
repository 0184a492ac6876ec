/**
 * Bundles a command (the controller CLI, the agent) into one JavaScript file for the images:
 * no tsx, no TypeScript compile at start, and no node_modules (the repository's hold the forge's
 * dependencies too, ~300 MB). npx tsx images/bundle.ts ENTRY.ts OUT.js
 */
import { buildSync } from 'esbuild';
import * as path from 'path';
import { CONTROLLER_NODE_FLAGS } from '../controller/src/heap';

/** Node flags a command starts with, on its bundle's "#!" line (one flag: the line passes one argument). */
const NODE_FLAGS: Record<string, readonly string[]> = {
  'controller/src/cli.ts': CONTROLLER_NODE_FLAGS,
};

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  process.stderr.write('usage: tsx images/bundle.ts ENTRY.ts OUT.js\n');
  process.exit(64);
}
buildSync({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // The image runs the bundle directly as its entry point.
  banner: { js: ['#!/usr/local/bin/node', ...(NODE_FLAGS[path.relative(path.resolve(__dirname, '..'), path.resolve(entry))] ?? [])].join(' ') },
  sourcemap: false,
  minify: false,
  legalComments: 'inline',
  logLevel: 'warning',
});
