/**
 * The forge compiles each route's request and response schemas on the route's first request.
 * This suite compiles every one of them at startup (Fastify's default), so a schema that does
 * not compile fails here rather than at a user's first request, and checks that answers,
 * validation errors included, are the same either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app';
import { sqliteTemplateFile } from './support/templates';

async function start(eagerSchemas: boolean): Promise<{ app: FastifyInstance; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-schemas-'));
  fs.copyFileSync(await sqliteTemplateFile(), path.join(dir, 'forge.db'));
  const app = await buildApp({ config: { dataDir: dir, databaseUrl: `file:${path.join(dir, 'forge.db')}`, passwordHashAlgo: 'pbkdf2$1000$50' }, eagerSchemas, noBackground: true });
  await app.listen({ port: 0, host: '127.0.0.1' });
  await app.services.users.create({ username: 'sam', email: 'sam@example.com', password: 'password1', must_change_password: false });
  return { app, dir };
}

describe('schema compilation', () => {
  const apps: Array<{ app: FastifyInstance; dir: string }> = [];
  afterAll(async () => {
    for (const { app, dir } of apps) {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every schema compiles at startup, and lazily compiled routes answer exactly as eagerly compiled ones', async () => {
    apps.push(await start(true), await start(false));
    const auth = { authorization: `Basic ${Buffer.from('sam:password1').toString('base64')}`, 'content-type': 'application/json' };
    const requests: Array<{ method: 'GET' | 'POST'; url: string; payload?: unknown }> = [
      { method: 'GET', url: '/api/v1/version' },
      { method: 'POST', url: '/api/v1/user/repos', payload: { name: 'tools', description: 'kit', auto_init: false } },
      { method: 'POST', url: '/api/v1/user/repos', payload: { name: 'bad name!' } },
      { method: 'POST', url: '/api/v1/user/repos', payload: { name: 123, private: 'maybe' } },
      { method: 'GET', url: '/api/v1/repos/sam/tools' },
      { method: 'GET', url: '/api/v1/repos/search?q=tool&limit=notanumber' },
      { method: 'GET', url: '/api/v1/user' },
    ];
    const answers = [];
    for (const { app } of apps) {
      const seen = [];
      for (const r of requests) {
        const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
        const res = await fetch(`${base}${r.url}`, { method: r.method, headers: auth, body: r.payload === undefined ? undefined : JSON.stringify(r.payload) });
        // Times and addresses differ between two forges; statuses, keys and the other values must not.
        seen.push({ status: res.status, body: (await res.text()).replaceAll(base, 'BASE').replace(/"(created|updated)_at":"[^"]*"/g, '"$1_at":""').replace(/"created":"[^"]*"/g, '"created":""') });
      }
      answers.push(seen);
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0].map((a) => a.status)).toEqual([200, 201, 422, 422, 200, 422, 200]);
  });
});
