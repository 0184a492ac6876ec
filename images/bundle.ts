/**
 * Bundles a command (the controller CLI, the agent) into one JavaScript file for the images:
 * no tsx, no TypeScript compile at start, and no node_modules (the repository's hold the forge's
 * dependencies too, ~300 MB). npx tsx images/bundle.ts ENTRY.ts OUT.js
 */
import { buildSync } from 'esbuild';

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
  banner: { js: '#!/usr/local/bin/node' },
  sourcemap: false,
  minify: false,
  legalComments: 'inline',
  logLevel: 'warning',
});
