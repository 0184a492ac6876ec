/**
 * Prisma client construction and migrations for both providers.
 *
 * Migrations are applied on start by this module, never by `prisma migrate deploy`: Prisma 7's
 * CLI needs the native schema engine for it (a download these machines cannot make), ~2 s of
 * start-up per call, and it is a devDependency. Here we read the same folders
 * (prisma/migrations/<provider>/<name>/migration.sql) and record them in Prisma's own
 * `_prisma_migrations` table with Prisma's checksum (sha256 of the file), so `npm run
 * prisma:migrate` (which runs this) and Prisma's tools agree about what is applied. Each migration runs in one
 * transaction; PostgreSQL takes an advisory lock so two starting servers do not race.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import Database from 'better-sqlite3';
import { Client as PgClient } from 'pg';
import { PrismaClient as SqliteClient } from '../../generated/prisma/client';
import { PrismaClient as PgPrismaClient } from '../../generated/prisma-postgresql/client';
import { providerOf } from '../config';

/** The client type the code is written against (both generated clients share the API). */
export type Prisma = SqliteClient;
export { Prisma as PrismaNS } from '../../generated/prisma/client';

export const MIGRATIONS_ROOT = path.resolve(__dirname, '../../../prisma/migrations');

export function sqlitePath(url: string): string {
  return url.replace(/^file:(\/\/)?/, '').replace(/\?.*$/, '');
}

export interface PrismaOptions {
  /**
   * Called with the text of every SQL statement the client sends (queries, writes, raw SQL;
   * not BEGIN/COMMIT): tests count the statements a request runs through it.
   */
  onStatement?: (sql: string) => void;
}

const observers = new WeakMap<object, (sql: string) => void>();

/** The onStatement callback the client was created with: SQL sent beside Prisma reports to it too (services/fast-reads.ts). */
export function statementObserver(prisma: Prisma): ((sql: string) => void) | undefined {
  return observers.get(prisma);
}

export function createPrisma(databaseUrl: string, options: PrismaOptions = {}): Prisma {
  const watch = <T extends object>(factory: T): T => (options.onStatement ? observeStatements(factory, options.onStatement) : factory);
  let prisma: Prisma;
  if (providerOf(databaseUrl) === 'postgresql') {
    const adapter = watch(new PrismaPg({ connectionString: databaseUrl, max: 10 }));
    prisma = new PgPrismaClient({ adapter }) as unknown as Prisma;
  } else {
    const file = sqlitePath(databaseUrl);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    prisma = new SqliteClient({ adapter: watch(new PrismaBetterSqlite3({ url: file })) });
  }
  if (options.onStatement) observers.set(prisma, options.onStatement);
  return prisma;
}

/**
 * A driver adapter factory whose connections (and their transactions) report each statement
 * before running it. A Proxy rather than a subclass: the adapters keep their state in private
 * fields, so every other member is forwarded bound to the real object.
 */
function observeStatements<T extends object>(target: T, onStatement: (sql: string) => void): T {
  return new Proxy(target, {
    get(t, key) {
      const value = Reflect.get(t, key, t);
      if (typeof value !== 'function') return value;
      if (key === 'queryRaw' || key === 'executeRaw') {
        return (query: { sql: string }, ...rest: unknown[]) => {
          onStatement(query.sql);
          return value.call(t, query, ...rest);
        };
      }
      if (key === 'connect' || key === 'startTransaction') {
        return async (...args: unknown[]) => observeStatements(await value.apply(t, args), onStatement);
      }
      return value.bind(t);
    },
  });
}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(provider: 'sqlite' | 'postgresql'): Migration[] {
  const dir = path.join(MIGRATIONS_ROOT, provider);
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: crypto.createHash('sha256').update(sql).digest('hex') };
    });
}

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
  "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
  "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
  "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`;
const PG_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

/**
 * Per-connection settings: SQLite in WAL mode (set persistently by migrate) syncs at
 * checkpoints only (synchronous=NORMAL: durable across application crashes, the usual WAL
 * pairing) and waits for a busy writer instead of failing.
 */
export async function tunePrisma(prisma: Prisma, databaseUrl: string): Promise<void> {
  if (providerOf(databaseUrl) !== 'sqlite') return;
  await prisma.$queryRawUnsafe('PRAGMA synchronous = NORMAL');
  await prisma.$queryRawUnsafe('PRAGMA busy_timeout = 5000');
}

/** Applies pending migrations; returns the names applied now. */
export async function migrate(databaseUrl: string): Promise<string[]> {
  const provider = providerOf(databaseUrl);
  const migrations = listMigrations(provider);
  const applied: string[] = [];
  if (provider === 'sqlite') {
    const file = sqlitePath(databaseUrl);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.exec(SQLITE_TABLE);
      const done = new Set(
        (db.prepare('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL').all() as { migration_name: string }[]).map(
          (r) => r.migration_name,
        ),
      );
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        db.transaction(() => {
          db.exec(m.sql);
          db.prepare(
            `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
             VALUES (?, ?, strftime('%Y-%m-%d %H:%M:%f','now'), ?, strftime('%Y-%m-%d %H:%M:%f','now'), 1)`,
          ).run(crypto.randomUUID(), m.checksum, m.name);
        })();
        applied.push(m.name);
      }
    } finally {
      db.close();
    }
    return applied;
  }
  const client = new PgClient({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(7274837)');
    await client.query(PG_TABLE);
    const res = await client.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const done = new Set(res.rows.map((r) => r.migration_name));
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, now(), 1)`,
          [crypto.randomUUID(), m.checksum, m.name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      applied.push(m.name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(7274837)').catch(() => undefined);
    await client.end();
  }
  return applied;
}
