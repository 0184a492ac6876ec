#!/usr/bin/env node
// prisma/schema.prisma (SQLite) is the one schema we edit. The PostgreSQL schema differs only
// in the datasource provider and the client output folder, so it is derived, never hand-edited.
// `node prisma/derive-postgresql.js --check` fails when the committed copy is stale.
const fs = require('node:fs');
const path = require('node:path');

const src = fs.readFileSync(path.join(__dirname, 'schema.prisma'), 'utf8');
const derived =
  '// GENERATED from prisma/schema.prisma by prisma/derive-postgresql.js: do not edit.\n' +
  src
    .replace(/provider = "sqlite"/, 'provider = "postgresql"')
    .replace(/output(\s*)= "\.\.\/forge-api\/generated\/prisma"/, 'output$1= "../../forge-api/generated/prisma-postgresql"');
const target = path.join(__dirname, 'postgresql', 'schema.prisma');
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== derived) {
    console.error('prisma/postgresql/schema.prisma is stale: run node prisma/derive-postgresql.js');
    process.exit(1);
  }
} else {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, derived);
}
