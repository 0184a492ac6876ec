#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), like portcullis-controller.
require('tsx/cjs');
require('../controller/src/inference/hop-cli.ts');
