/**
 * ClientSettingsPolicy (body.maxSize) and ProxySettingsPolicy (buffering) through the real
 * controller CLI and real nginx, on rules proxied inline and on rules reached by dispatch
 * (a header match), since the two are different nginx locations.
 */
import { promises as fs, readFileSync } from 'fs';
import * as http from 'http';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { httpRoute, rule, serviceFor, type Manifest } from '../support/manifests';
import { condition, findStatus, routeParent, waitForStatus } from '../support/status';
import { clientSettingsPolicy, errorLogLine, proxySettingsPolicy, startBackend, target, timedRequest, type TestBackend } from './support';

const prefix = (value: string, headers?: { name: string; value: string }[]) => [{ path: { type: 'PathPrefix', value }, ...(headers ? { headers } : {}) }];
const body = (n: number) => Buffer.alloc(n, 'a');

let gw: GatewayFixture;
let bigHeader: TestBackend;
let stream: TestBackend;
let streamEnded = 0;
let bulk: TestBackend;
let bulkEnded = 0;
/**
 * More than the socket buffers between backend, nginx and client can hold: two receive buffers
 * (nginx's from the backend, the client's from nginx) and two send buffers, each of which the
 * kernel may grow up to its sysctl maximum on loopback (32 MB receive on some machines).
 */
const BULK_BYTES = bulkBytes();

function bulkBytes(): number {
  const max = (file: string, fallback: number): number => {
    try {
      return Number(readFileSync(file, 'utf8').trim().split(/\s+/).pop()) || fallback;
    } catch {
      return fallback;
    }
  };
  const buffers = 2 * max('/proc/sys/net/ipv4/tcp_rmem', 6 << 20) + 2 * max('/proc/sys/net/ipv4/tcp_wmem', 4 << 20);
  return Math.max(32 << 20, Math.ceil((buffers * 1.5) / (64 << 10)) * (64 << 10));
}

/** Reads the first bytes, stops reading for 3 s, then reads the rest. */
function slowClient(urlPath: string): Promise<{ bytes: number; resumedAt: number; backendEnd: number }> {
  bulkEnded = 0;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.port, path: urlPath, agent: false }, (res) => {
      let bytes = 0;
      let resumedAt = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (resumedAt === 0 && !res.isPaused()) {
          res.pause();
          setTimeout(() => {
            resumedAt = Date.now();
            res.resume();
          }, 3000);
        }
      });
      res.on('end', () => resolve({ bytes, resumedAt, backendEnd: bulkEnded }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30000, () => req.destroy(new Error('slow client timed out')));
    req.end();
  });
}

beforeAll(async () => {
  // Answers with a 10 KB header: more than nginx's default 4k proxy_buffer_size.
  bigHeader = await startBackend((_req, res) => {
    res.writeHead(200, { 'x-big': 'b'.repeat(10 * 1024), 'content-type': 'text/plain' });
    res.end('big header');
  });
  // Sends its first bytes, then the rest 1.5 s later.
  stream = await startBackend(
    (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first bytes\n');
      setTimeout(() => res.end('the rest\n'), 1500);
    },
    () => (streamEnded = Date.now()),
  );
  bulk = await startBackend(
    (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BULK_BYTES });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = (): void => {
        while (sent < BULK_BYTES) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    },
    () => (bulkEnded = Date.now()),
  );
  const routes: Manifest[] = [
    httpRoute('bulk-buffered', { rules: [rule('bulk', prefix('/bulk-buffered'))] }),
    httpRoute('bulk-unbuffered', { rules: [rule('bulk', prefix('/bulk-unbuffered'))] }),
    httpRoute('small', {
      rules: [rule('ok', prefix('/small')), rule('ok', prefix('/small-dispatch', [{ name: 'x-go', value: '1' }]))],
    }),
    httpRoute('big', { rules: [rule('ok', prefix('/big'))] }),
    httpRoute('plain', { rules: [rule('ok', prefix('/plain')), rule('ok', prefix('/plain-dispatch', [{ name: 'x-go', value: '1' }]))] }),
    httpRoute('hdr-large', { rules: [rule('bighdr', prefix('/hdr-large'))] }),
    httpRoute('hdr-small', { rules: [rule('bighdr', prefix('/hdr-small'))] }),
    httpRoute('stream-buffered', { rules: [rule('stream', prefix('/stream-buffered'))] }),
    httpRoute('stream-unbuffered', { rules: [rule('stream', prefix('/stream-unbuffered'))] }),
  ];
  const policies: Manifest[] = [
    clientSettingsPolicy('gw-body', target('gw', 'Gateway'), '1k'),
    clientSettingsPolicy('small-body', target('small'), '100'), // unit-less: bytes
    clientSettingsPolicy('big-body', target('big'), '2k'),
    // Gateway: 16k header buffer (and body buffers large enough for nginx's busy-buffer bounds).
    proxySettingsPolicy('gw-proxy', [target('gw', 'Gateway')], { bufferSize: '16k', buffers: { number: 8, size: '16k' } }),
    // Route: only bufferSize, back to 4k; buffers still come from the Gateway policy.
    proxySettingsPolicy('hdr-small-proxy', [target('hdr-small')], { bufferSize: '4k' }),
    proxySettingsPolicy('stream-off', [target('stream-unbuffered'), target('bulk-unbuffered')], { disable: true }),
  ];
  gw = await startGatewayFixture({
    backends: ['ok'],
    files: { 'svc.yaml': [...serviceFor('bighdr', bigHeader.port), ...serviceFor('stream', stream.port), ...serviceFor('bulk', bulk.port)], 'routes.yaml': routes, 'policies.yaml': policies },
  });
  // The test's temp dir is 0700 (mkdtemp); nginx workers run as nobody when the tests run as root
  // and must reach their temp dirs to buffer large responses to disk (the controller warns).
  await fs.chmod(gw.dir, 0o711);
  await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'ProxySettingsPolicy', 'stream-off'));
}, 60000);

afterAll(async () => {
  await gw?.close();
  await bigHeader?.close();
  await stream?.close();
  await bulk?.close();
});

describe('ClientSettingsPolicy body.maxSize', () => {
  test('a body of exactly maxSize passes, one byte more gets 413 (unit-less value = bytes), inline and dispatched rules alike', async () => {
    expect((await timedRequest(gw.port, '/small', { body: body(100) })).status).toBe(200);
    expect((await timedRequest(gw.port, '/small', { body: body(101) })).status).toBe(413);
    const go = { 'x-go': '1' };
    expect((await timedRequest(gw.port, '/small-dispatch', { body: body(100), headers: go })).status).toBe(200);
    expect((await timedRequest(gw.port, '/small-dispatch', { body: body(101), headers: go })).status).toBe(413);
  });

  test("the route's maxSize overrides the Gateway's, smaller or larger", async () => {
    expect((await timedRequest(gw.port, '/big', { body: body(2048) })).status).toBe(200);
    expect((await timedRequest(gw.port, '/big', { body: body(2049) })).status).toBe(413);
  });

  test("routes without a policy of their own get the Gateway's 1k", async () => {
    const go = { 'x-go': '1' };
    expect((await timedRequest(gw.port, '/plain', { body: body(1024) })).status).toBe(200);
    expect((await timedRequest(gw.port, '/plain', { body: body(1025) })).status).toBe(413);
    expect((await timedRequest(gw.port, '/plain-dispatch', { body: body(1024), headers: go })).status).toBe(200);
    expect((await timedRequest(gw.port, '/plain-dispatch', { body: body(1025), headers: go })).status).toBe(413);
  });
});

describe('ProxySettingsPolicy buffering', () => {
  test("a backend header larger than bufferSize gives 502; the Gateway's larger bufferSize lets it through", async () => {
    const ok = await timedRequest(gw.port, '/hdr-large');
    expect(ok.status).toBe(200);
    expect(ok.headers['x-big']).toHaveLength(10 * 1024);
    expect((await timedRequest(gw.port, '/hdr-small')).status).toBe(502);
    expect(await errorLogLine(gw.stateDir, /upstream sent too big header/)).toBeTruthy();
  });

  test('with buffering disabled the first bytes of a slow response reach the client before the backend finishes', async () => {
    streamEnded = 0;
    let firstAt = 0;
    const r = await timedRequest(gw.port, '/stream-unbuffered', { start: 0 }).then((x) => {
      firstAt = x.firstByteMs!;
      return x;
    });
    expect(r.status).toBe(200);
    expect(r.text).toBe('first bytes\nthe rest\n');
    expect(streamEnded).toBeGreaterThan(0);
    expect(firstAt).toBeLessThan(streamEnded);
  });

  // What buffering changes: with it, nginx takes the whole response off the backend while the
  // client is slow (into memory and a temp file); without it, the backend waits for the client.
  test('buffering on: a slow client does not hold up the backend; disabled: the backend waits for the client', async () => {
    const buffered = await slowClient('/bulk-buffered');
    expect(buffered.bytes).toBe(BULK_BYTES);
    expect(buffered.backendEnd).toBeGreaterThan(0);
    expect(buffered.backendEnd).toBeLessThan(buffered.resumedAt);
    const unbuffered = await slowClient('/bulk-unbuffered');
    expect(unbuffered.bytes).toBe(BULK_BYTES);
    expect(unbuffered.backendEnd).toBeGreaterThan(unbuffered.resumedAt);
  });

  test('the targets report ProxySettingsPolicyAffected / ClientSettingsPolicyAffected', async () => {
    const docs = await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'HTTPRoute', 'stream-unbuffered'));
    const gwConds = findStatus(docs, 'Gateway', 'gw')?.status.conditions;
    expect(condition(gwConds, 'ProxySettingsPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
    expect(condition(gwConds, 'ClientSettingsPolicyAffected')).toMatchObject({ status: 'True', reason: 'PolicyAffected' });
    expect(condition(routeParent(findStatus(docs, 'HTTPRoute', 'stream-unbuffered'), 'gw')?.conditions, 'ProxySettingsPolicyAffected')).toMatchObject({ status: 'True' });
    expect(condition(routeParent(findStatus(docs, 'HTTPRoute', 'plain'), 'gw')?.conditions, 'ProxySettingsPolicyAffected')).toBeUndefined();
  });
});
