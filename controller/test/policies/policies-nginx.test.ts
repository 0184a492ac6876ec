/**
 * How the policy settings behave in nginx inside the per-rule named locations the model uses
 * (`error_page 418 = @rule; return 418;`), with a real nginx and a real backend on loopback.
 * These are the facts the rendering of LocationPolicies relies on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createServer as createNetServer, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentLengthAbove } from '../../src/policies';
import { defaultNginxBinary } from '../../src/apply/nginx-binary';

const NGINX = defaultNginxBinary();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

function send(port: number, path: string, body?: Buffer, chunked = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (body && !chunked) headers['content-length'] = body.length;
    if (body && chunked) headers['transfer-encoding'] = 'chunked';
    const req = request({ host: '127.0.0.1', port, path, method: body ? 'POST' : 'GET', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

describe('policy directives inside per-rule named locations (real nginx)', () => {
  let dir: string;
  let nginx: ChildProcess | undefined;
  let backend: Server;
  let port: number;

  beforeAll(async () => {
    backend = createServer((req, res) => {
      let bytes = 0;
      req.on('data', (d: Buffer) => (bytes += d.length));
      req.on('end', () => res.end(`backend got ${bytes} bytes`));
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const backendPort = (backend.address() as AddressInfo).port;
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'portcullis-policies-nginx-'));
    mkdirSync(join(dir, 'logs'));
    const conf = `
error_log ${join(dir, 'logs/error.log')} info;
pid ${join(dir, 'nginx.pid')};
daemon off;
events {}
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  limit_req_zone $binary_remote_addr zone=default_rl_p_rule0:32k rate=1r/m;
  map $content_length $too_big_1024 { "~${contentLengthAbove(1024)}" 1; default 0; }
  server {
    listen 127.0.0.1:${port};
    location /limited { error_page 418 = @rule_limited; return 418; }
    location /body { error_page 418 = @rule_body; return 418; }
    location /body-mapped { error_page 418 = @rule_body_mapped; return 418; }
    location @rule_limited {
      limit_req zone=default_rl_p_rule0;
      limit_req_status 429;
      limit_req_log_level warn;
      limit_req_dry_run off;
      proxy_pass http://127.0.0.1:${backendPort};
    }
    location @rule_body {
      client_max_body_size 1024;
      proxy_pass http://127.0.0.1:${backendPort};
    }
    location @rule_body_mapped {
      client_max_body_size 1024;
      if ($too_big_1024) { return 413; }
      proxy_pass http://127.0.0.1:${backendPort};
    }
  }
}`;
    writeFileSync(join(dir, 'nginx.conf'), conf);
    nginx = spawn(NGINX, ['-p', dir, '-c', 'nginx.conf'], { stdio: 'ignore' });
    await waitForPort(port);
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      nginx.kill('SIGTERM');
      await exited;
    }
    await new Promise((r) => backend.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('limit_req in a named location limits, with its own status', async () => {
    const first = await send(port, '/limited');
    const second = await send(port, '/limited');
    expect(first).toEqual({ status: 200, body: 'backend got 0 bytes' });
    expect(second.status).toBe(429);
  });

  it('client_max_body_size in a named location does not stop a Content-Length body (nginx checks it before the redirect)', async () => {
    const res = await send(port, '/body', Buffer.alloc(2048, 'a'));
    expect(res).toEqual({ status: 200, body: 'backend got 2048 bytes' });
  });

  it('it does stop a chunked body', async () => {
    const res = await send(port, '/body', Buffer.alloc(2048, 'a'), true);
    expect(res.status).toBe(413);
  });

  it('the contentLengthAbove map makes the named location answer 413 above maxSize, and exactly maxSize pass', async () => {
    expect(await send(port, '/body-mapped', Buffer.alloc(1024, 'a'))).toEqual({ status: 200, body: 'backend got 1024 bytes' });
    expect((await send(port, '/body-mapped', Buffer.alloc(1025, 'a'))).status).toBe(413);
    expect((await send(port, '/body-mapped', Buffer.alloc(1025, 'a'), true)).status).toBe(413);
    expect((await send(port, '/body-mapped', Buffer.alloc(1024, 'a'), true)).status).toBe(200);
  });
});
