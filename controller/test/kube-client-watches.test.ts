/**
 * The API client keeps watches from starving other requests: a controller watches about 20
 * kinds (more with the inference extension), each watch holding its connection for minutes,
 * while its status writes and lists need connections at once. A local HTTP server stands in for
 * the API server: watch requests get their headers and then nothing until the test ends.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type WatchHandle } from '../src/providers/kubernetes/client';

describe('KubeClient connections', () => {
  let server: http.Server;
  let client: KubeClient;
  const open = new Set<http.ServerResponse>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url?.includes('watch=true')) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        open.add(res);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Thing', metadata: { name: 'x', resourceVersion: '7' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    client = new KubeClient(kc, { timeoutMs: 10_000 });
  });

  afterAll(async () => {
    for (const res of open) res.end();
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('a request is answered while more watches are open than the request pool has connections', async () => {
    const watches: WatchHandle[] = [];
    for (let i = 0; i < 40; i++) watches.push(client.watch(`/apis/example.com/v1/kind${i}`, {}, () => undefined, () => undefined));
    // Every watch has reached the server (so each holds a connection) before the request goes.
    for (let i = 0; i < 200 && open.size < 40; i++) await new Promise((r) => setTimeout(r, 25));
    expect(open.size).toBe(40);
    const got = await client.request('get', 'GET', '/apis/example.com/v1/things/x');
    expect(got).toMatchObject({ metadata: { name: 'x' } });
    for (const w of watches) w.abort();
  });
});
