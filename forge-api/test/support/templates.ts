import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { listMigrations, migrate } from '../../src/services/database';

type Provider = 'sqlite' | 'postgresql';

/**
 * Template databases: the migrations run once per test run and provider, and each forge starts
 * from a copy (a copied SQLite file; PostgreSQL's CREATE DATABASE ... TEMPLATE), instead of
 * every suite migrating an empty database. The forge still runs migrate() on start and finds
 * nothing to apply. Templates are named after the migrations' checksums, so a changed migration
 * never starts from a stale copy. freshPgDatabase() stays empty for the tests of migrate itself.
 */
function migrationsKey(provider: Provider): string {
  const h = crypto.createHash('sha256');
  for (const m of listMigrations(provider)) h.update(`${m.name} ${m.checksum}\n`);
  return h.digest('hex').slice(0, 16);
}

/** The run's directory (jest's global setup makes one) or, outside jest's setup, this process's. */
let processDir: string | undefined;
function templateDir(): string {
  if (process.env.PORTCULLIS_TEST_RUN_DIR) return process.env.PORTCULLIS_TEST_RUN_DIR;
  if (!processDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-template-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    processDir = dir;
  }
  return processDir;
}

let sqliteTemplate: Promise<string> | undefined;
/** A migrated SQLite file; made once (workers racing to make it each rename a complete file into place). */
export function sqliteTemplateFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const file = path.join(templateDir(), `forge-${migrationsKey('sqlite')}.db`);
    if (fs.existsSync(file)) return file;
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    await migrate(`file:${partial}`);
    fs.renameSync(partial, file);
    return file;
  })();
  return sqliteTemplate;
}

async function withAdmin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: process.env.PG_TEST_URL as string });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function pgUrl(name: string): string {
  const u = new URL(process.env.PG_TEST_URL as string);
  u.pathname = `/${name}`;
  return u.toString();
}

let pgTemplate: Promise<string> | undefined;
/** The name of a migrated PostgreSQL database to copy; one per server and migration set (an advisory lock orders the workers). */
function pgTemplateName(): Promise<string> {
  pgTemplate ??= withAdmin(async (c) => {
    const name = `forge_template_${migrationsKey('postgresql')}`;
    await c.query('SELECT pg_advisory_lock(7274838)');
    try {
      const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount) return name;
      const partial = `${name}_${crypto.randomBytes(4).toString('hex')}`;
      await c.query(`CREATE DATABASE ${partial}`);
      await migrate(pgUrl(partial));
      await c.query(`ALTER DATABASE ${partial} RENAME TO ${name}`);
      return name;
    } finally {
      await c.query('SELECT pg_advisory_unlock(7274838)').catch(() => undefined);
    }
  });
  return pgTemplate;
}

/** A new PostgreSQL database with every migration applied (a copy of the template). */
export async function migratedPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const template = await pgTemplateName();
  const name = `forge_${crypto.randomBytes(6).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return {
    url: pgUrl(name),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * Makes the templates before any worker starts (jest's global setup calls this), so no suite's
 * beforeAll waits for a migration run inside its hook timeout.
 */
export async function prepareTemplates(): Promise<void> {
  await sqliteTemplateFile();
  if (process.env.PG_TEST_URL) await pgTemplateName();
}
