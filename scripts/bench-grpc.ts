/**
 * The gRPC part of `npm run bench:dataplane`: unary calls/s through the gateway (a GRPCRoute
 * rendered by the real pipeline, nginx with `http2 on`, grpc_pass over h2c) vs straight to the
 * backend, with the same client in the same run, rounds alternating to spread machine noise.
 * Client: @grpc/grpc-js, one channel, GRPC_CONCURRENCY calls in flight. Backend: a grpc-js
 * echo in its own Node process (so it does not share the client's event loop). Goal: ratio
 * gateway/direct >= 0.9.
 *
 * Env: BENCH_SECONDS, BENCH_ROUNDS (shared with the HTTP part), GRPC_CONCURRENCY (default 64).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as grpc from '@grpc/grpc-js';
import execa from 'execa';
import { NginxProcess } from '../controller/src/apply/nginx';
import type { BackendRef, Graph, HTTPRouteNode } from '../controller/src/graph/types';
import { silentLogger } from '../controller/src/log';
import { buildModel } from '../controller/src/model';
import { renderConfig } from '../controller/src/render';

const SERVICE = 'bench.Echo';
const METHOD = `/${SERVICE}/Unary`;
const CONCURRENCY = Number(process.env.GRPC_CONCURRENCY ?? 64);

const serialize = (v: Buffer) => v;
const deserialize = (b: Buffer) => b;

/** A grpc-js echo in a child Node process; resolves with its port. */
async function startBackend(): Promise<{ port: number; child: execa.ExecaChildProcess }> {
  const grpcPath = require.resolve('@grpc/grpc-js');
  const code = `
    const grpc = require(${JSON.stringify(grpcPath)});
    const id = (b) => b;
    const s = new grpc.Server();
    s.addService({ Unary: { path: ${JSON.stringify(METHOD)}, requestStream: false, responseStream: false,
      requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id } },
      { Unary: (call, cb) => cb(null, call.request) });
    s.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => { if (e) throw e; console.log(p); });
  `;
  const child = execa(process.execPath, ['-e', code], { reject: false, buffer: false, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.on('exit', () => reject(new Error('gRPC bench backend exited')));
  });
  return { port, child };
}

function graphOf(port: number, backendPort: number): Graph {
  const backend: BackendRef = { namespace: 'bench', name: 'grpc', group: '', kind: 'Service', port: 80, weight: 1, valid: true, endpoints: [{ address: '127.0.0.1', port: backendPort }] };
  const route: HTTPRouteNode = {
    kind: 'GRPCRoute',
    namespace: 'bench',
    name: 'grpc',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    hostnames: [],
    parents: [],
    rules: [{ index: 0, valid: true, backends: [backend], matches: [{ path: { type: 'Exact', value: METHOD }, headers: [], queryParams: [], grpc: { serviceChars: SERVICE.length, methodChars: 5 } }] }],
  };
  return {
    gatewayClasses: [],
    rejectedGateways: [],
    routes: [route],
    gateways: [
      {
        namespace: 'bench', name: 'gw', generation: 1, className: 'portcullis', accepted: true, requestedAddresses: [], conditions: [],
        listeners: [{ gateway: { namespace: 'bench', name: 'gw' }, name: 'http', port, protocol: 'HTTP', valid: true, routes: [{ route, hostnames: [] }], attachedRoutes: 1, attachable: true, supportedKinds: [], allowedNamespaces: 'Same', conditions: [] }],
      },
    ],
  };
}

/** Unary calls completed in `seconds` with CONCURRENCY in flight on one channel. */
async function drive(client: grpc.Client, seconds: number): Promise<number> {
  const payload = Buffer.from('x'.repeat(64));
  const end = Date.now() + seconds * 1000;
  let done = 0;
  let failed: Error | undefined;
  const loop = async () => {
    while (Date.now() < end && !failed) {
      await new Promise<void>((resolve) => {
        client.makeUnaryRequest(METHOD, serialize, deserialize, payload, (err) => {
          if (err) failed = err;
          else done++;
          resolve();
        });
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  if (failed) throw new Error(`gRPC call failed: ${failed.message}`);
  return done / seconds;
}

export async function benchGrpc(options: { nginx: string; seconds: number; rounds: number; freePort: () => Promise<number>; workerTicks: (master: number) => number; tickUs: number }): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-grpc-'));
  const backend = await startBackend();
  const port = await options.freePort();
  const nginx = new NginxProcess({ prefix: path.join(dir, 'gw'), binary: options.nginx, log: silentLogger });
  const direct = new grpc.Client(`127.0.0.1:${backend.port}`, grpc.credentials.createInsecure());
  const gateway = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const rates: Record<'direct' | 'gateway', number[]> = { direct: [], gateway: [] };
  const cpu: number[] = [];
  try {
    const config = renderConfig(buildModel(graphOf(port, backend.port)), { listenAddress: '127.0.0.1', prefix: path.join(dir, 'gw'), workerProcesses: 1, accessLog: false });
    const started = await nginx.start(config);
    if (!started.ok) throw new Error(started.message);
    console.log(`gRPC unary (grpc-js client, 1 channel, ${CONCURRENCY} calls in flight, 64-byte messages; backend: grpc-js echo in its own process)`);
    for (let round = 1; round <= options.rounds; round++) {
      for (const kind of ['direct', 'gateway'] as const) {
        const client = kind === 'direct' ? direct : gateway;
        await drive(client, 1); // warm-up
        const before = kind === 'gateway' ? options.workerTicks(nginx.pid!) : 0;
        const rate = await drive(client, options.seconds);
        rates[kind].push(rate);
        let extra = '';
        if (kind === 'gateway') {
          const us = ((options.workerTicks(nginx.pid!) - before) * options.tickUs) / (rate * options.seconds);
          cpu.push(us);
          extra = `  ${us.toFixed(1).padStart(6)} us nginx CPU/call`;
        }
        console.log(`  round ${round} ${kind.padEnd(7)} ${rate.toFixed(0).padStart(8)} calls/s${extra}`);
      }
    }
  } finally {
    direct.close();
    gateway.close();
    await nginx.stop();
    backend.child.kill('SIGTERM');
    await backend.child.catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const d = median(rates.direct);
  const g = median(rates.gateway);
  console.log(`gRPC direct  median ${d.toFixed(0)} calls/s`);
  console.log(`gRPC gateway median ${g.toFixed(0)} calls/s (nginx CPU ${median(cpu).toFixed(1)} us/call)`);
  console.log(`ratio gateway/direct ${(g / d).toFixed(3)} calls/s (goal >= 0.9)`);
}
