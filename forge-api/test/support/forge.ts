/**
 * Test harness: a real listening forge on a loopback port, on SQLite (a temp data dir) or on
 * PostgreSQL (a fresh database created through PG_TEST_URL), plus a small HTTP client.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app';
import type { ForgeConfigInput } from '../../src/config';
import { createPrisma, migrate, sqlitePath, tunePrisma, type Prisma } from '../../src/services/database';
import { migratedPgDatabase, sqliteTemplateFile } from './templates';
import type { User } from '../../src/services/records';

export type Provider = 'sqlite' | 'postgresql';

/** SQLite always; PostgreSQL when PG_TEST_URL is set (jest's global setup starts one). */
export function providers(): Provider[] {
  return process.env.PG_TEST_URL ? ['sqlite', 'postgresql'] : ['sqlite'];
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  body: any;
  /**
   * For an answer of 500 or more: what the server logged as an error while the request ran (a
   * 500's body says nothing, as Gitea's does; the cause is in the log, with its stack).
   */
  serverErrors?: string[];
}

export interface Auth {
  basic?: [string, string];
  token?: string;
  bearer?: string;
  headers?: Record<string, string>;
}

export interface Forge {
  url: string;
  api: string;
  app: FastifyInstance;
  dataDir: string;
  provider: Provider;
  request(method: string, p: string, opts?: Auth & { body?: unknown; raw?: string; contentType?: string }): Promise<Res>;
  /** Creates a user straight through the service (like the CLI); password "password1". */
  user(name: string, extra?: { admin?: boolean; restricted?: boolean; visibility?: string }): Promise<User>;
  /** A token with these scopes for `name` (created through the API with basic auth). */
  token(name: string, scopes: string[], password?: string): Promise<string>;
  /**
   * How many SQL statements `fn` made the server run (started with { countStatements: true };
   * statements of background work running meanwhile count too).
   */
  statements(fn: () => Promise<unknown>): Promise<number>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function freshPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.PG_TEST_URL as string;
  const name = `forge_${crypto.randomBytes(6).toString('hex')}`;
  const c = new Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const d = new Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}

export const PASSWORD = 'password1';

/**
 * The suites log in with a password thousands of times, and each login derives the key again
 * (25 ms of CPU at the default pbkdf2$50000$50); they run with fewer iterations of the same
 * scheme. passwords.test.ts covers the default and every other setting.
 */
const TEST_PASSWORD_HASH = 'pbkdf2$1000$50';

export async function startForge(provider: Provider = 'sqlite', config: ForgeConfigInput = {}, opts: { countStatements?: boolean } = {}): Promise<Forge> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-test-'));
  let drop: (() => Promise<void>) | null = null;
  let databaseUrl = config.databaseUrl ?? `file:${path.join(dataDir, 'forge.db')}`;
  if (config.databaseUrl === undefined) {
    if (provider === 'postgresql') {
      const db = await migratedPgDatabase();
      databaseUrl = db.url;
      drop = db.drop;
    } else {
      fs.copyFileSync(await sqliteTemplateFile(), sqlitePath(databaseUrl));
    }
  }
  let executed = 0;
  let prisma: Prisma | undefined;
  if (opts.countStatements) {
    await migrate(databaseUrl);
    prisma = createPrisma(databaseUrl, { onStatement: () => void executed++ });
    await tunePrisma(prisma, databaseUrl);
  }
  // The server's error log, kept in memory so that a 500 can show its cause (Res.serverErrors).
  const logged: string[] = [];
  const logger = {
    level: 'error',
    stream: {
      write(line: string) {
        logged.push(errorLine(line));
      },
    },
  };
  let app: FastifyInstance | null = null;
  let url = '';
  for (let attempt = 0; attempt < 5 && !app; attempt++) {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const candidate = await buildApp({ config: { dataDir, databaseUrl, rootUrl: `${url}/`, port, passwordHashAlgo: TEST_PASSWORD_HASH, ...config }, prisma, logger });
    try {
      await candidate.listen({ port, host: '127.0.0.1' });
      app = candidate;
    } catch (err) {
      await candidate.close();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  if (!app) throw new Error('no free port');
  const theApp = app;

  const forge: Forge = {
    url,
    api: `${url}/api/v1`,
    app: theApp,
    dataDir,
    provider,
    async request(method, p, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.basic) headers.authorization = `Basic ${Buffer.from(`${opts.basic[0]}:${opts.basic[1]}`).toString('base64')}`;
      if (opts.token) headers.authorization = `token ${opts.token}`;
      if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
      let body: string | undefined;
      if (opts.raw !== undefined) {
        body = opts.raw;
        headers['content-type'] = opts.contentType ?? 'application/json';
      } else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      }
      const loggedBefore = logged.length;
      const res = await fetch(p.startsWith('http') ? p : `${url}/api/v1${p}`, { method, headers, body, redirect: 'manual' });
      const text = await res.text();
      const serverErrors = res.status >= 500 ? logged.slice(loggedBefore) : undefined;
      let parsed: any = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, text, body: parsed, ...(serverErrors ? { serverErrors } : {}) };
    },
    async user(name, extra = {}) {
      return theApp.services.users.create({
        username: name,
        email: `${name.toLowerCase()}@example.com`,
        password: PASSWORD,
        admin: extra.admin ?? false,
        restricted: extra.restricted ?? false,
        visibility: extra.visibility,
        must_change_password: false,
      });
    },
    async token(name, scopes, password = PASSWORD) {
      const res = await forge.request('POST', `/users/${name}/tokens`, { basic: [name, password], body: { name: `t-${crypto.randomBytes(4).toString('hex')}`, scopes } });
      if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${res.text}`);
      return res.body.sha1 as string;
    },
    async statements(fn) {
      if (!prisma) throw new Error('start the forge with { countStatements: true }');
      const before = executed;
      await fn();
      return executed - before;
    },
    async close() {
      await theApp.close();
      await prisma?.$disconnect();
      if (drop) await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return forge;
}

/** One line of the server's JSON log as a reader wants it: the message, then the error's stack. */
function errorLine(line: string): string {
  try {
    const o = JSON.parse(line) as { msg?: string; err?: { stack?: string; message?: string } };
    return [o.msg, o.err?.stack ?? o.err?.message].filter(Boolean).join(': ');
  } catch {
    return line.trim();
  }
}

/** Runs the same suite once per provider, each with its own forge. */
export function describeForge(name: string, fn: (f: () => Forge) => void, config: ForgeConfigInput = {}): void {
  for (const provider of providers()) {
    describe(`${name} [${provider}]`, () => {
      let forge: Forge;
      beforeAll(async () => {
        forge = await startForge(provider, config);
      });
      afterAll(async () => {
        await forge?.close();
      });
      fn(() => forge);
    });
  }
}
