#!/usr/bin/env node
// npm run prisma:diff -- FROM [--postgresql] > prisma/migrations/<provider>/<name>/migration.sql
//
// Writes the SQL that takes a database from schema FROM to the current prisma/schema.prisma,
// offline. FROM is a schema file, `git:REV` (prisma/schema.prisma at that commit, e.g. git:main)
// or `empty`. --postgresql diffs the PostgreSQL form (DATABASE_URL must reach a PostgreSQL
// server, e.g. the one `npm test` starts; remember BIGINT for Int columns).
//
// Why this wrapper: Prisma 7's CLI needs the native schema engine (a download) for every migrate
// command; Prisma 6.19's CLI, installed as the `prisma6` devDependency, runs its Wasm schema
// engine through a driver adapter (prisma/diff.config.ts). Prisma 6 wants a `url` in the
// datasource block, which Prisma 7 refuses, so both schemas are copied with one added.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const postgres = args.includes('--postgresql');
const from = args.find((a) => !a.startsWith('--'));
if (!from) {
  console.error('usage: npm run prisma:diff -- FROM(file | git:REV | empty) [--postgresql]');
  process.exit(2);
}

function forPrisma6(schema) {
  let s = schema.replace(/datasource db \{([^}]*)\}/, (_, body) => `datasource db {${body.replace(/\n\s*url\s*=.*\n/, '\n')}  url = env("DATABASE_URL")\n}`);
  if (postgres) s = s.replace(/provider = "sqlite"/, 'provider = "postgresql"');
  return s;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prisma-diff-'));
try {
  const to = path.join(tmp, 'to.prisma');
  fs.writeFileSync(to, forPrisma6(fs.readFileSync(path.join(root, 'prisma', 'schema.prisma'), 'utf8')));
  const fromArgs = ['--from-empty'];
  if (from !== 'empty') {
    const text = from.startsWith('git:')
      ? execFileSync('git', ['-C', root, 'show', `${from.slice(4)}:prisma/schema.prisma`], { encoding: 'utf8' })
      : fs.readFileSync(from, 'utf8');
    fs.writeFileSync(path.join(tmp, 'from.prisma'), forPrisma6(text));
    fromArgs.splice(0, 1, '--from-schema-datamodel', path.join(tmp, 'from.prisma'));
  }
  const env = {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
    PRISMA_QUERY_ENGINE_LIBRARY: path.join(root, 'package.json'),
    PRISMA_DIFF_PROVIDER: postgres ? 'postgresql' : 'sqlite',
    DATABASE_URL: postgres ? process.env.DATABASE_URL ?? '' : 'file::memory:',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  };
  const out = execFileSync(
    process.execPath,
    [path.join(root, 'node_modules', 'prisma6', 'build', 'index.js'), 'migrate', 'diff', '--config', path.join(root, 'prisma', 'diff.config.ts'), ...fromArgs, '--to-schema-datamodel', to, '--script'],
    { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  process.stdout.write(out);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
