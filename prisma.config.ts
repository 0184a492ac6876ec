/**
 * Prisma CLI configuration for machines without internet access: the JavaScript schema engine
 * (Wasm, shipped inside the prisma package) talks to the database through a driver adapter,
 * so no engine binary is ever downloaded. The npm scripts point PRISMA_SCHEMA_ENGINE_BINARY /
 * PRISMA_QUERY_ENGINE_LIBRARY at placeholders because the CLI checks for them before starting.
 *
 * DATABASE_URL selects the provider: postgresql:// (or postgres://) uses prisma/postgresql/,
 * anything else is a SQLite file (default file:./data/forge.db).
 */
import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'prisma/config';

const url = process.env.DATABASE_URL ?? `file:${path.join(process.env.FORGE_DATA_DIR ?? './data', 'forge.db')}`;
const postgres = /^postgres(ql)?:\/\//i.test(url);

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: postgres ? 'prisma/postgresql/schema.prisma' : 'prisma/schema.prisma',
  migrations: { path: postgres ? 'prisma/migrations/postgresql' : 'prisma/migrations/sqlite' },
  async adapter() {
    if (postgres) {
      const { PrismaPg } = await import('@prisma/adapter-pg');
      return new PrismaPg({ connectionString: url });
    }
    const { PrismaBetterSQLite3 } = await import('@prisma/adapter-better-sqlite3');
    const file = url.replace(/^file:/, '');
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    return new PrismaBetterSQLite3({ url: file });
  },
});
