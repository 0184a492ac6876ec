/**
 * The request log an operator reads: one line per request with method, path, status and
 * duration, and neither bodies nor query strings (a token may travel in `?token=`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app';

describe('request log', () => {
  test('one line per request: method, path, status, duration; no body, no query', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-log-'));
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = await buildApp({ config: { dataDir, databaseUrl: `file:${path.join(dataDir, 'forge.db')}` }, logger: { level: 'info', stream } });
    try {
      await app.services.users.create({ username: 'logger', email: 'logger@example.com', password: 'log-password-1', must_change_password: false });
      const auth = `Basic ${Buffer.from('logger:log-password-1').toString('base64')}`;
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      await (await fetch(`${base}/api/v1/version?token=secret-token-value`)).text();
      await (await fetch(`${base}/api/v1/markdown`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify({ Text: 'body-text-not-logged' }) })).text();
      // onResponse runs after the answer is sent: give the last line a moment to be written.
      await new Promise((r) => setTimeout(r, 50));
      const access = lines.filter((l) => typeof l.msg === 'string' && /^(GET|POST) \//.test(l.msg as string));
      expect(access.map((l) => (l.msg as string).replace(/ [\d.]+ms$/, ' <ms>'))).toEqual([
        // An unknown token is refused, and the refusal is logged without the token.
        'GET /api/v1/version 401 <ms>',
        'POST /api/v1/markdown 200 <ms>',
      ]);
      for (const l of access) expect(l.msg).toMatch(/ \d+\.\dms$/);
      const all = JSON.stringify(lines);
      expect(all).not.toContain('secret-token-value');
      expect(all).not.toContain('body-text-not-logged');
      // Fastify's own per-request lines are off: the access line is the only one.
      expect(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);
    } finally {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
