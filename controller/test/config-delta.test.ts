import * as http from 'http';
import type { AddressInfo } from 'net';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { applyDelta, diffLines, makeDelta } from '../src/dataplane/protocol';
import { configVersion } from '../src/dataplane/protocol';
import { AgentChannel } from '../src/agent/channel';
import { createLogger } from '../src/log';
import type { ConfigFrame } from '../src/dataplane/protocol';

/** A deterministic pseudo-random source (tests repeat). */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe('config deltas', () => {
  it('rebuild exactly the new files from the old ones, over random line edits', () => {
    const rnd = random(7);
    const line = () => ['    }', '', 'location /a {', '    return 404;', `x${Math.floor(rnd() * 5)}`][Math.floor(rnd() * 5)];
    for (let t = 0; t < 2000; t++) {
      const a = Array.from({ length: Math.floor(rnd() * 40) }, line);
      const b = a.filter(() => rnd() > 0.15).flatMap((l) => (rnd() < 0.15 ? [l, line()] : [l]));
      if (rnd() < 0.3) b.unshift(line());
      const old = { 'servers.conf': a.join('\n'), 'nginx.conf': 'same\n' };
      const next = { 'servers.conf': b.join('\n') + (rnd() < 0.5 ? '\n' : ''), 'nginx.conf': 'same\n' };
      const delta = makeDelta(old, next);
      expect('nginx.conf' in delta).toBe(false);
      expect(applyDelta(old, delta)).toEqual(next);
    }
  });

  it('carry only the changed lines of a large file, and added or removed files whole', () => {
    const lines = Array.from({ length: 20000 }, (_, i) => `    location /r${i} { proxy_pass http://b${i % 50}; }`);
    const old = { 'servers.conf': lines.join('\n') + '\n', 'gone.conf': 'x' };
    const changed = [...lines.slice(0, 7000), '    location /new { return 200; }', ...lines.slice(7000, 15000), ...lines.slice(15001)];
    const next = { 'servers.conf': changed.join('\n') + '\n', 'secrets/k.pem': 'PEM' };
    const delta = makeDelta(old, next);
    expect(delta).toEqual({ 'gone.conf': null, 'secrets/k.pem': 'PEM', 'servers.conf': { hunks: [[7000, 0, ['    location /new { return 200; }']], [15000, 1, []]] } });
    expect(applyDelta(old, delta)).toEqual(next);
  });

  it('send a file whole when too much of it changed', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`);
    expect(diffLines(a, b, 1000)).toBeUndefined();
    expect(makeDelta({ f: a.join('\n') }, { f: b.join('\n') })).toEqual({ f: b.join('\n') });
  });

  it('refuse a base they do not fit', () => {
    expect(() => applyDelta({ f: 'one\ntwo' }, { f: { hunks: [[5, 1, ['x']]] } })).toThrow(/do not fit/);
    expect(() => applyDelta({}, { f: { hunks: [[0, 0, ['x']]] } })).toThrow(/does not have/);
  });
});

describe('the agent channel with deltas', () => {
  let server: http.Server;
  let dir: string;
  afterEach(async () => {
    await new Promise((r) => server?.close(r));
    server?.closeAllConnections?.();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('applies a delta to the config before it, and starts the stream over on one that does not give its version', async () => {
    const v1 = { 'servers.conf': 'a\nb\nc\n' };
    const v2 = { 'servers.conf': 'a\nb2\nc\n' };
    const v3 = { 'servers.conf': 'a\nb3\nc\n' };
    const frame = (f: ConfigFrame) => JSON.stringify(f) + '\n';
    const requests: URL[] = [];
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      requests.push(url);
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      if (requests.length === 1) {
        // A full config, a good delta, then one whose result is not the version it names.
        res.write(frame({ type: 'config', version: configVersion(v1), files: v1 }));
        res.write(frame({ type: 'delta', version: configVersion(v2), base: configVersion(v1), files: makeDelta(v1, v2) }));
        res.write(frame({ type: 'delta', version: configVersion(v3), base: configVersion(v2), files: makeDelta(v2, { 'servers.conf': 'a\nzz\nc\n' }) }));
      } else {
        res.write(frame({ type: 'config', version: configVersion(v3), files: v3 }));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-delta-'));
    fs.writeFileSync(path.join(dir, 'token'), 't');
    const lines: string[] = [];
    const channel = new AgentChannel({
      server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      gateway: 'default/gw',
      pod: 'p',
      tokenFile: path.join(dir, 'token'),
      variant: { prefix: '/x', listenAddress: '127.0.0.1' },
      log: createLogger({ level: 'info', write: (l) => lines.push(l) }),
    });
    const got: Record<string, string>[] = [];
    let live: string | undefined;
    const done = new Promise<void>((resolve) => {
      void channel.run(
        () => live,
        (f) => {
          if (f.type !== 'config') return;
          got.push(f.files);
          live = f.version;
          if (got.length === 3) resolve();
        },
      );
    });
    await done;
    channel.stop();
    expect(got).toEqual([v1, v2, v3]);
    expect(requests[0].searchParams.get('delta')).toBe('1');
    // The stream started over, saying which version it holds.
    expect(requests[1].searchParams.get('have')).toBe(configVersion(v2));
    expect(lines.some((l) => /delta for \w+ that does not give/.test(l))).toBe(true);
  });
});
