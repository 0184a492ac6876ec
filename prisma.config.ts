/**
 * Prisma CLI configuration. Prisma 7's CLI is used for `prisma generate` only: the client runs
 * on driver adapters (better-sqlite3, pg) with the Wasm query compiler, migrations are applied
 * by our own runner (`npx portcullis-forge migrate`, forge-api/src/services/database.ts), and
 * migration SQL is written offline by `npm run prisma:diff` (Prisma 6.19's CLI, whose Wasm schema
 * engine needs no download: see forge-api/README.md "Prisma offline").
 *
 * DATABASE_URL selects the provider: postgresql:// (or postgres://) uses prisma/postgresql/,
 * anything else is a SQLite file (default file:./data/forge.db).
 */
import path from 'node:path';
import { defineConfig } from 'prisma/config';

const url = process.env.DATABASE_URL ?? `file:${path.join(process.env.FORGE_DATA_DIR ?? './data', 'forge.db')}`;
const postgres = /^postgres(ql)?:\/\//i.test(url);

export default defineConfig({
  schema: postgres ? 'prisma/postgresql/schema.prisma' : 'prisma/schema.prisma',
  migrations: { path: postgres ? 'prisma/migrations/postgresql' : 'prisma/migrations/sqlite' },
  datasource: { url },
});
