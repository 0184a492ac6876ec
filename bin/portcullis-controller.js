#!/usr/bin/env node
// Runs the TypeScript sources directly (bin/typescript.js), so a fresh checkout needs only `npm ci`.
require('./typescript');
require('../controller/src/cli.ts');
