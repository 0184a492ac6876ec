/**
 * One Service port behind an HTTPRoute and a GRPCRoute at once: a backend that serves HTTP/1.1
 * and gRPC (h2c prior knowledge) on one port, choosing the protocol per connection as such
 * servers do (Go's h2c handler, nginx's `http2 on`). nginx keeps idle backend connections per
 * upstream block; were both kinds of route to share one, an HTTP/1.1 connection could be handed
 * to a gRPC call (or an h2c one to an HTTP request). Real controller, nginx, grpc-js client and
 * servers; the dual-protocol front is a per-connection splice to an HTTP echo or a gRPC echo.
 */
import * as net from 'net';
import { type EchoBackend, startEchoBackend } from '../support/echo-backend';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { echoPath, grpcCall, grpcClient, type GrpcEchoBackend, startGrpcEchoBackend } from '../support/grpc-echo';
import { GATEWAY_API, serviceFor } from '../support/manifests';

const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

let gw: GatewayFixture;
let httpEcho: EchoBackend;
let grpcEcho: GrpcEchoBackend;
let front: net.Server;
/** Protocol of each connection the front accepted, in order. */
const connections: ('h1' | 'h2c')[] = [];

/** Listens on a free port; each connection goes to the gRPC echo if it opens with the HTTP/2 preface, else to the HTTP echo. */
async function startDualFront(httpPort: number, grpcPort: number): Promise<net.Server> {
  const server = net.createServer((socket) => {
    let head = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const h2 = head.subarray(0, H2_PREFACE.length).equals(H2_PREFACE.subarray(0, Math.min(head.length, H2_PREFACE.length)));
      if (h2 && head.length < H2_PREFACE.length) return; // could still be the preface
      socket.off('data', onData);
      socket.pause();
      connections.push(h2 ? 'h2c' : 'h1');
      const upstream = net.connect(h2 ? grpcPort : httpPort, '127.0.0.1', () => {
        upstream.write(head);
        socket.pipe(upstream).pipe(socket);
        socket.resume();
      });
      const close = () => (socket.destroy(), upstream.destroy());
      upstream.on('error', close);
      upstream.on('close', close);
      socket.on('close', close);
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  httpEcho = await startEchoBackend('dual-http');
  grpcEcho = await startGrpcEchoBackend('dual-grpc');
  front = await startDualFront(httpEcho.port, grpcEcho.port);
  const port = (front.address() as net.AddressInfo).port;
  gw = await startGatewayFixture({
    files: {
      'dual.yaml': [
        ...serviceFor('dual', port),
        { apiVersion: GATEWAY_API, kind: 'HTTPRoute', metadata: { name: 'web' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['web.dual'], rules: [{ backendRefs: [{ name: 'dual', port: 80 }] }] } },
        { apiVersion: GATEWAY_API, kind: 'GRPCRoute', metadata: { name: 'rpc' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['rpc.dual'], rules: [{ backendRefs: [{ name: 'dual', port: 80 }] }] } },
      ],
    },
  });
}, 60000);

afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => front?.close(resolve));
  await httpEcho?.close();
  await grpcEcho?.close();
});

test('HTTP requests and gRPC calls to one Service port alternate without one getting the other protocol\'s connection', async () => {
  const answers: string[] = [];
  for (let i = 0; i < 10; i++) {
    // A fresh client connection each time: nginx's workers each keep their own idle backend
    // connections, and each kind of request must meet the other's in every worker.
    const res = await gw.request('/page', { host: 'web.dual' }).catch((e: Error) => ({ status: 0, json: undefined, text: e.message }));
    answers.push(`http ${res.status} ${res.json?.backend ?? res.text.slice(0, 60)}`);
    const c = grpcClient(gw.port, 'rpc.dual');
    const call = await grpcCall(c, echoPath());
    c.close();
    answers.push(`grpc ${call.code} ${call.reply?.backend ?? call.details}`);
  }
  expect(answers).toEqual(Array.from({ length: 10 }, () => ['http 200 dual-http', 'grpc 0 dual-grpc']).flat());
  // Both kinds of backend connection were kept and reused: a few per worker, not one per request.
  expect(connections.filter((c) => c === 'h1').length).toBeLessThanOrEqual(4);
  expect(connections.filter((c) => c === 'h2c').length).toBeLessThanOrEqual(4);
});
