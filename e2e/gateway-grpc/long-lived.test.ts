/**
 * Long-lived connections survive config reloads: a WebSocket (Upgrade), a server-sent events
 * stream and a gRPC server stream, all open through the gateway while the configuration
 * changes three times, keep flowing until they end by themselves. nginx's graceful reload
 * leaves them with the old workers (the controller sends those the same graceful quit,
 * apply/nginx.ts), and no worker_shutdown_timeout cuts them (controller/README.md). And an
 * HTTP/2 connection an old worker took just before a reload, before its first bytes, is not
 * kept on the old configuration (scripts/nginx-patches/).
 */
import * as fs from 'fs';
import * as http from 'http';
import * as http2 from 'http2';
import * as net from 'net';
import type { AddressInfo } from 'net';
import WebSocket, { WebSocketServer } from 'ws';
import { childPids } from '../../controller/src/apply/procs';
import { nginxPid } from '../support/controller';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { grpcClient, type GrpcEchoBackend, grpcStream, startGrpcEchoBackend } from '../support/grpc-echo';
import { httpRequest } from '../support/http';
import { GATEWAY_API, httpRoute, serviceFor } from '../support/manifests';

const EVENTS = 40;
const EVERY_MS = 100;

let gw: GatewayFixture;
let grpcBackend: GrpcEchoBackend;
let streamServer: http.Server;
let wss: WebSocketServer;

beforeAll(async () => {
  grpcBackend = await startGrpcEchoBackend('grpc-stream');
  // One HTTP backend: /sse streams EVENTS events, /ws echoes WebSocket messages.
  streamServer = http.createServer((req, res) => {
    if (req.url !== '/sse') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ backend: 'stream' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let n = 0;
    const timer = setInterval(() => {
      res.write(`data: ${n++}\n\n`);
      if (n === EVENTS) {
        clearInterval(timer);
        res.end();
      }
    }, EVERY_MS);
    req.on('close', () => clearInterval(timer));
  });
  wss = new WebSocketServer({ server: streamServer, path: '/ws' });
  wss.on('connection', (socket) => socket.on('message', (m) => socket.send(`echo ${m.toString()}`)));
  await new Promise<void>((r) => streamServer.listen(0, '127.0.0.1', r));
  const port = (streamServer.address() as AddressInfo).port;
  gw = await startGatewayFixture({
    files: {
      'routes.yaml': [
        ...serviceFor('stream', port),
        ...serviceFor('grpc-stream', grpcBackend.port),
        httpRoute('stream', { hostnames: ['web.example'], rules: [{ backendRefs: [{ name: 'stream', port: 80 }] }] }),
        {
          apiVersion: GATEWAY_API,
          kind: 'GRPCRoute',
          metadata: { name: 'grpc-stream' },
          spec: { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example'], rules: [{ backendRefs: [{ name: 'grpc-stream', port: 80 }] }] },
        },
      ],
    },
  });
}, 60000);

afterAll(async () => {
  await gw?.close();
  wss?.close();
  await new Promise((r) => streamServer?.close(r));
  await grpcBackend?.close();
});

/** SSE through the gateway: resolves with the events received, in order. */
function sse(port: number): Promise<{ events: string[]; status: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/sse', headers: { host: 'web.example', accept: 'text/event-stream' }, agent: false }, (res) => {
      let buf = '';
      const events: string[] = [];
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          events.push(buf.slice(0, i).replace(/^data: /, ''));
          buf = buf.slice(i + 2);
        }
      });
      res.on('end', () => resolve({ events, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** A WebSocket through the gateway that sends one message every EVERY_MS, EVENTS times. */
function websocket(port: number): Promise<{ echoes: string[]; closeCode: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: 'web.example' } });
    const echoes: string[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    ws.on('open', () => {
      timer = setInterval(() => {
        ws.send(String(sent++));
        if (sent === EVENTS) clearInterval(timer);
      }, EVERY_MS);
    });
    ws.on('message', (m) => {
      echoes.push(m.toString());
      if (echoes.length === EVENTS) ws.close(1000);
    });
    ws.on('close', (code) => {
      clearInterval(timer);
      resolve({ echoes, closeCode: code });
    });
    ws.on('error', reject);
  });
}

test('a WebSocket, an SSE stream and a gRPC stream keep flowing across three reloads', async () => {
  const master = (await nginxPid(gw.stateDir))!;
  const workersBefore = childPids(master);

  const sseDone = sse(gw.port);
  const wsDone = websocket(gw.port);
  const grpcMessages: number[] = [];
  const client = grpcClient(gw.port, 'grpc.example');
  const grpcDone = grpcStream(client, { count: EVENTS, intervalMs: EVERY_MS }, (m) => grpcMessages.push(m.seq));

  // Three config changes while the streams run (EVENTS * EVERY_MS = 4 s): each one a reload.
  const generations: number[][] = [];
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 700));
    await gw.write(`extra-${i}.yaml`, [httpRoute(`extra-${i}`, { hostnames: [`extra${i}.example`], rules: [{ backendRefs: [{ name: 'stream', port: 80 }] }] })]);
    // The new route is served: the reload took effect while the streams were open.
    expect((await httpRequest(gw.port, '/', { headers: { host: `extra${i}.example` } })).status).toBe(200);
    generations.push(childPids(master));
  }

  const [s, w, g] = await Promise.all([sseDone, wsDone, grpcDone]);
  client.close();
  expect(s.status).toBe(200);
  expect(s.events).toEqual(Array.from({ length: EVENTS }, (_, i) => String(i)));
  expect(w.echoes).toEqual(Array.from({ length: EVENTS }, (_, i) => `echo ${i}`));
  expect(w.closeCode).toBe(1000);
  expect(g.code).toBe(0);
  expect(grpcMessages).toEqual(Array.from({ length: EVENTS }, (_, i) => i));
  // Every reload started new workers (the streams were carried by old ones meanwhile).
  for (const pids of generations) expect(pids.some((p) => !workersBefore.includes(p))).toBe(true);
}, 60000);

/** Whether the kernel's row for the server side of `socket` has an inode: accept() took it. */
function accepted(socket: net.Socket, serverPort: number): boolean {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const rows = fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1);
  const row = rows.map((r) => r.trim().split(/\s+/)).find((f) => f[1]?.endsWith(`:${hex(serverPort)}`) && f[2]?.endsWith(`:${hex(socket.localPort!)}`));
  return row !== undefined && row[9] !== '0';
}

function h2get(session: http2.ClientHttp2Session, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': '/', ':authority': host });
    req.on('response', (h) => resolve(Number(h[':status'])));
    req.on('error', reject);
    req.resume();
    req.end();
  });
}

test('an HTTP/2 connection a worker took just before a reload moves to the new configuration after its request', async () => {
  // Connected and accepted by a worker of the current generation, no bytes sent yet.
  const socket = net.connect(gw.port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  for (let i = 0; i < 400 && !accepted(socket, gw.port); i++) await new Promise((r) => setTimeout(r, 5));
  expect(accepted(socket, gw.port)).toBe(true);

  await gw.write('late.yaml', [httpRoute('late', { hostnames: ['late.example'], rules: [{ backendRefs: [{ name: 'stream', port: 80 }] }] })]);
  expect((await httpRequest(gw.port, '/', { headers: { host: 'late.example' } })).status).toBe(200);

  // The old worker still serves the request the connection carries (its configuration has no
  // late.example), then says GOAWAY instead of keeping the connection on that configuration.
  const session = http2.connect(`http://127.0.0.1:${gw.port}`, { createConnection: () => socket });
  const goaway = new Promise<number>((r) => session.once('goaway', (code) => r(code)));
  const closed = new Promise<string>((r) => session.once('close', () => r('closed')));
  expect(await h2get(session, 'late.example')).toBe(404);
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([goaway.then((code) => `goaway ${code}`), new Promise<string>((r) => (timer = setTimeout(() => r('still open after 10 s'), 10000)))]);
  clearTimeout(timer);
  expect(outcome).toBe('goaway 0');
  expect(await closed).toBe('closed');

  // A client that reconnects, as HTTP/2 and gRPC clients do on GOAWAY, gets the new route.
  const fresh = http2.connect(`http://127.0.0.1:${gw.port}`);
  try {
    expect(await h2get(fresh, 'late.example')).toBe(200);
  } finally {
    fresh.close();
  }
}, 60000);
