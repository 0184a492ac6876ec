#!/usr/bin/env -S node --max-semi-space-size=2
// Runs the TypeScript sources directly (bin/typescript.js), so a fresh checkout needs only `npm ci`.
// The node flags of the first line are CONTROLLER_NODE_FLAGS (controller/src/heap.ts).
require('./typescript');
require('../controller/src/cli.ts');
