/**
 * Config for `npm run prisma:diff` only: Prisma 6.19's CLI (installed as `prisma6`) still ships a
 * Wasm schema engine that runs through a driver adapter, so it writes migration SQL with no
 * engine download (Prisma 7's CLI needs the native schema engine for any migrate command).
 * PRISMA_DIFF_PROVIDER=postgresql diffs prisma/postgresql/schema.prisma (needs DATABASE_URL
 * to reach some PostgreSQL server: the engine connects even for a schema-to-schema diff).
 */
import { defineConfig } from 'prisma6/config';

const postgres = process.env.PRISMA_DIFF_PROVIDER === 'postgresql';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    if (postgres) {
      const { PrismaPg } = await import('@prisma/adapter-pg');
      return new PrismaPg({ connectionString: process.env.DATABASE_URL });
    }
    const { PrismaBetterSqlite3 } = await import('@prisma/adapter-better-sqlite3');
    return new PrismaBetterSqlite3({ url: ':memory:' });
  },
});
