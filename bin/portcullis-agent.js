#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so a fresh checkout needs only `npm ci`.
require('tsx/cjs');
require('../controller/src/agent/cli.ts');
