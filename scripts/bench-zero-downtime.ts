/**
 * npm run bench:zero-downtime [-- --rate=50 --reloads=100 --rolls=6 --drain-ms=1000]
 *
 * Failed requests while the world changes. A load generator sends GET requests at a steady rate
 * (each on a fresh connection, so a request is never lost to a closing keepalive connection
 * and every failure is the gateway's) through a stand-in for the data plane's Service: a TCP
 * pass-through that sends each connection to one of the ready data-plane "pods". Every answer
 * that is not a 2xx from an echo backend, and every connection error or timeout, is a failure.
 *
 * The world: a real kube-apiserver; two controller processes with leader election and
 * --dataplane=agent; portcullis-agent processes with real nginx as the data-plane pods (each on
 * its own loopback address); echo backend "pods" in a network namespace, one EndpointSlice per
 * pod. Scenarios, in order, each counted on its own:
 *
 *   roll      backends roll as a Deployment rollout does: a new pod starts and its endpoint is
 *             added ready; the oldest endpoint turns terminating (ready false, serving true),
 *             the pod keeps serving for --drain-ms (its preStop), then exits and its endpoint
 *             goes away; one pod at a time, --rolls times.
 *   churn     every second a route change (a filter on the route under load toggled, a second
 *             route's path changed) and a policy change (ProxySettingsPolicy buffering,
 *             ClientSettingsPolicy body size on the route under load).
 *   reloads   --reloads configuration changes (each one an nginx reload) with a WebSocket and
 *             a gRPC server stream open through the gateway; both must keep flowing.
 *   leader    the leading controller is SIGKILLed; the follower takes the Lease, the agents
 *             reconnect to it, and a change made after the takeover is served.
 *   agent     the agent of the only data-plane pod restarts (SIGTERM, started again on the same
 *             prefix).
 *   scale     the data plane scales 1 -> 3 -> 1: new pods join the Service once they serve; a
 *             pod leaving is taken out of the Service first (terminating), then stopped.
 *
 * --write-docs: also write the figures as docs/benchmarks-gateway.md's table (zero-downtime).
 */
import { spawn, type ChildProcess } from 'child_process';
import * as http from 'http';
import * as net from 'net';
import * as path from 'path';
import WebSocket, { WebSocketServer } from 'ws';
import { REPO_ROOT, startController, type ControllerProcess } from '../e2e/support/controller';
import { startAgent, type AgentProcess } from '../e2e/support/agent';
import { makeAgentTls } from '../e2e/support/agent-tls';
import { agentModeArgs, writeAgentToken } from '../e2e/support/agent-mode';
import * as grpc from '@grpc/grpc-js';
import { echoPath, grpcClient, startGrpcEchoBackend } from '../e2e/support/grpc-echo';
import { eventually, httpRequest } from '../e2e/support/http';
import { startCluster, type Cluster } from '../e2e/support/kube';
import { GATEWAY_API, CONTROLLER_NAME, type Manifest } from '../e2e/support/manifests';
import { startNetnsBackends, type NetnsBackends } from '../e2e/support/netns';
import { freePort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { startPassThrough } from '../e2e/support/pass-through';
import { benchCommand, docsTable } from './support/bench-docs';

const NS = 'zdt';
// Every HTTPRoute has a hostname: a hostless one would collide with the GRPCRoute's.
const APP_HOST = 'app.example';
const POLICY_API = 'gateway.portcullis.dev/v1alpha1';
const LEASE = ['--leader-election=true', '--leader-election-namespace=default', '--leader-election-lock-name=portcullis-zdt'];

function arg(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : fallback;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The load generator.

interface Failure {
  at: number;
  what: string;
}

class Load {
  sent = 0;
  ok = 0;
  failures: Failure[] = [];
  private timer?: NodeJS.Timeout;
  private inflight = new Set<Promise<void>>();

  constructor(private readonly port: number, private readonly rate: number) {}

  start(): void {
    const every = 1000 / this.rate;
    let next = Date.now();
    const tick = () => {
      // Steady rate: as many requests as the clock says are due, whatever the answers take.
      while (Date.now() >= next) {
        next += every;
        const p = this.one().finally(() => this.inflight.delete(p));
        this.inflight.add(p);
      }
      this.timer = setTimeout(tick, Math.max(1, next - Date.now()));
    };
    tick();
  }

  private async one(): Promise<void> {
    this.sent += 1;
    try {
      const res = await httpRequest(this.port, '/load/x', { timeoutMs: 5000, host: APP_HOST });
      if (res.status >= 200 && res.status < 300 && typeof res.json?.backend === 'string') this.ok += 1;
      else this.failures.push({ at: Date.now(), what: `${res.status} ${res.text.slice(0, 80).replace(/\s+/g, ' ')}` });
    } catch (err) {
      this.failures.push({ at: Date.now(), what: (err as Error).message.slice(0, 100) });
    }
  }

  /** Requests answered so far (sent and settled). */
  snapshot(): { sent: number; failed: number } {
    return { sent: this.sent - this.inflight.size, failed: this.failures.length };
  }

  async settle(): Promise<void> {
    await Promise.all([...this.inflight]);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

// ---------------------------------------------------------------------------------------------
// The data plane's Service: a TCP pass-through to the ready pods, round robin per connection.

class ServiceFront {
  readonly targets: string[] = [];
  private next = 0;
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly targetPort: number) {}

  async listen(): Promise<void> {
    this.server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      if (this.targets.length === 0) return client.destroy();
      const address = this.targets[this.next++ % this.targets.length];
      const upstream = net.connect(this.targetPort, address);
      this.sockets.add(upstream);
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}

// ---------------------------------------------------------------------------------------------
// Backend pods: one echo server process each in the network namespace, one EndpointSlice each.

interface Pod {
  name: string;
  port: number;
  child: ChildProcess;
}

async function startPod(netns: NetnsBackends, name: string): Promise<Pod> {
  const child = spawn('ip', ['netns', 'exec', netns.namespace, process.execPath, '-r', 'tsx/cjs', path.join(REPO_ROOT, 'e2e', 'support', 'echo-main.ts'), netns.address, 'echo'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))).echo);
    });
    child.once('exit', (code) => reject(new Error(`pod ${name} exited (${code})`)));
  });
  return { name, port, child };
}

async function stopPod(pod: Pod): Promise<void> {
  if (pod.child.exitCode !== null || pod.child.signalCode !== null) return;
  const exited = new Promise((r) => pod.child.once('exit', r));
  pod.child.kill('SIGTERM');
  await exited;
}

function slice(netns: NetnsBackends, pod: Pod, state: 'ready' | 'terminating'): Manifest {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `echo-${pod.name}`, namespace: NS, labels: { 'kubernetes.io/service-name': 'echo', 'endpointslice.kubernetes.io/managed-by': 'bench-zdt' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: pod.port, protocol: 'TCP' }],
    endpoints: [
      {
        addresses: [netns.address],
        conditions: state === 'ready' ? { ready: true, serving: true, terminating: false } : { ready: false, serving: true, terminating: true },
        targetRef: { kind: 'Pod', name: pod.name, namespace: NS },
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------

const target = (name: string) => ({ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name });

function loadRoute(variant: number): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name: 'load', namespace: NS },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: [APP_HOST],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/load' } }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-variant', value: String(variant) }] } }],
          backendRefs: [{ name: 'echo', port: 80 }],
        },
      ],
    },
  };
}

function sideRoute(variant: number): Manifest {
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name: 'side', namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], hostnames: [APP_HOST], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/side-${variant}` } }], backendRefs: [{ name: 'echo', port: 80 }] }] },
  };
}

function policies(variant: number): Manifest[] {
  return [
    { apiVersion: POLICY_API, kind: 'ProxySettingsPolicy', metadata: { name: 'load-proxy', namespace: NS }, spec: { targetRefs: [target('load')], buffering: { bufferSize: variant % 2 ? '16k' : '8k' } } },
    { apiVersion: POLICY_API, kind: 'ClientSettingsPolicy', metadata: { name: 'load-client', namespace: NS }, spec: { targetRef: target('load'), body: { maxSize: `${1 + (variant % 4)}m` } } },
  ];
}

interface Row {
  scenario: string;
  requests: number;
  failed: number;
  detail: string;
  samples: string;
}

async function main(): Promise<void> {
  const rate = arg('rate', 50);
  const reloads = arg('reloads', 100);
  const rolls = arg('rolls', 6);
  const drainMs = arg('drain-ms', 1000);
  const propagationMs = arg('propagation-ms', 1000);
  const shutdownDelay = process.argv.find((x) => x.startsWith('--shutdown-delay='))?.slice('--shutdown-delay='.length) ?? '3s';
  const only = (process.argv.find((x) => x.startsWith('--only=')) ?? '').slice('--only='.length).split(',').filter(Boolean);
  const wanted = (s: string) => only.length === 0 || only.includes(s);

  const dir = await makeTempDir('portcullis-bench-zdt-');
  const tls = makeAgentTls(dir);
  const cluster: Cluster = await startCluster();
  const netns = await startNetnsBackends([]);
  const pods: Pod[] = [];
  const controllers: ControllerProcess[] = [];
  const agents = new Map<string, AgentProcess>();
  const listenerPort = await freePort();
  const front = new ServiceFront(listenerPort);
  const extra: Array<() => Promise<void>> = [];
  const rows: Row[] = [];
  try {
    // Long-lived backends on the host's end of the veth pair (EndpointSlices refuse loopback).
    const grpcBackend = await startGrpcEchoBackend('grpc', netns.hostAddress);
    extra.push(() => grpcBackend.close());
    const wsHttp = http.createServer((_req, res) => res.writeHead(200).end('{"backend":"ws"}'));
    const wss = new WebSocketServer({ server: wsHttp, path: '/ws' });
    wss.on('connection', (socket) => socket.on('message', (m) => socket.send(m.toString())));
    await new Promise<void>((r) => wsHttp.listen(0, netns.hostAddress, () => r()));
    extra.push(async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise((r) => wsHttp.close(r));
    });
    const wsPort = (wsHttp.address() as net.AddressInfo).port;
    const hostService = (name: string, port: number): Manifest[] => [
      { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: port, protocol: 'TCP' }] } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-1`, namespace: NS, labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'bench-zdt' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port, protocol: 'TCP' }],
        endpoints: [{ addresses: [netns.hostAddress], conditions: { ready: true } }],
      },
    ];

    pods.push(await startPod(netns, 'p0'), await startPod(netns, 'p1'));
    await cluster.kubectl(['create', 'namespace', NS]);
    await cluster.apply([
      { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: CONTROLLER_NAME } },
      { apiVersion: GATEWAY_API, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'http', port: listenerPort, protocol: 'HTTP' }] } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } },
      ...pods.map((p) => slice(netns, p, 'ready')),
      ...hostService('grpc', grpcBackend.port),
      ...hostService('ws', wsPort),
      loadRoute(0),
      sideRoute(0),
      ...policies(0),
      { apiVersion: GATEWAY_API, kind: 'HTTPRoute', metadata: { name: 'ws', namespace: NS }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['ws.example'], rules: [{ backendRefs: [{ name: 'ws', port: 80 }] }] } },
      { apiVersion: GATEWAY_API, kind: 'GRPCRoute', metadata: { name: 'grpc', namespace: NS }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example'], rules: [{ backendRefs: [{ name: 'grpc', port: 80 }] }] } },
    ]);

    // Two controllers behind one address for the agents (the controller's Service).
    const agentPorts = [await freePort(), await freePort()];
    const controllerFront = await startPassThrough(agentPorts);
    extra.push(() => controllerFront.close());
    const agentUrl = `https://127.0.0.1:${controllerFront.port}`;
    for (const [i, agentPort] of agentPorts.entries()) {
      controllers.push(
        await startController({
          manifestsDir: dir,
          stateDir: path.join(dir, `controller-${i}`),
          kubeconfig: cluster.kubeconfig,
          dataplane: 'agent',
          logLevel: 'info',
          args: [...LEASE, ...(await agentModeArgs({ agentPort, agentUrl, tls }))],
        }),
      );
      if (i === 0) await eventually(async () => leads(controllers[0]), (x) => x, 30000, 100);
    }
    const tokenFile = await writeAgentToken(cluster, { namespace: NS, serviceAccount: 'gw-portcullis', file: path.join(dir, 'token') });
    const startPodAgent = async (n: number): Promise<AgentProcess> => {
      const address = `127.0.0.${2 + n}`;
      const agent = startAgent({ server: agentUrl, gateway: `${NS}/gw`, tokenFile, caFile: tls.ca, prefix: path.join(dir, `dp-${n}`), listenAddress: address, healthPort: await freePort(), podName: `dp-${n}`, shutdownDelay });
      agents.set(address, agent);
      // Ready (in the Service) once it serves the route under load.
      await eventually(() => httpRequest(listenerPort, '/load/x', { timeoutMs: 2000, host: APP_HOST }, address), (r) => r.status === 200, 60000, 100).catch(async (err) => {
        const routes = await cluster.kubectl(['get', 'httproute,gateway', '-n', NS, '-o', 'json']);
        throw new Error(`${(err as Error).message}; agent: ${JSON.stringify(agent.logs.slice(-5))}; status: ${JSON.stringify(JSON.parse(routes).items.map((i: Manifest) => [i.metadata.name, i.status]))}`);
      });
      return agent;
    };
    await startPodAgent(0);
    front.targets.push('127.0.0.2');
    await front.listen();

    const load = new Load(front.port, rate);
    load.start();
    const measure = async (scenario: string, fn: () => Promise<string>): Promise<void> => {
      await sleep(1000);
      const before = load.snapshot();
      const t0 = Date.now();
      const detail = await fn();
      await sleep(1500);
      const after = load.snapshot();
      const failures = load.failures.filter((f) => f.at >= t0);
      const samples = [...new Set(failures.map((f) => f.what))].slice(0, 3).join('; ');
      const row: Row = { scenario, requests: after.sent - before.sent, failed: after.failed - before.failed, detail, samples };
      rows.push(row);
      console.log(`${scenario.padEnd(8)} requests ${String(row.requests).padStart(6)}  failed ${String(row.failed).padStart(4)}  ${detail}${samples ? `  [${samples}]` : ''}  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    };
    let variant = 0;

    if (wanted('roll')) {
      await measure('roll', async () => {
        for (let i = 0; i < rolls; i++) {
          const fresh = await startPod(netns, `p${pods.length + i}x`);
          await cluster.apply([slice(netns, fresh, 'ready')]);
          const old = pods.shift()!;
          pods.push(fresh);
          await cluster.apply([slice(netns, old, 'terminating')]);
          await sleep(drainMs);
          await stopPod(old);
          await cluster.delete([slice(netns, old, 'terminating')]);
        }
        return `${rolls} pods replaced, one at a time, drain ${drainMs} ms`;
      });
    }

    if (wanted('churn')) {
      await measure('churn', async () => {
        const until = Date.now() + 20000;
        let n = 0;
        while (Date.now() < until) {
          const t = Date.now();
          variant += 1;
          await cluster.apply([loadRoute(variant), sideRoute(variant), ...policies(variant)]);
          n += 1;
          await sleep(Math.max(0, 1000 - (Date.now() - t)));
        }
        return `${n} changes (route filter + second route + two policies), one a second`;
      });
    }

    if (wanted('reloads')) {
      await measure('reloads', async () => {
        const agent = agents.get('127.0.0.2')!;
        const appliedBefore = agent.logs.filter((l) => l.msg === 'configuration applied').length;
        // A WebSocket: one message every 100 ms, each echoed.
        const ws = new WebSocket(`ws://127.0.0.1:${front.port}/ws`, { headers: { host: 'ws.example' } });
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
        });
        let wsSent = 0;
        let wsEchoed = 0;
        let wsClosed = '';
        ws.on('message', () => (wsEchoed += 1));
        ws.on('close', (code) => (wsClosed = `closed ${code}`));
        ws.on('error', (err) => (wsClosed = err.message));
        const wsTimer = setInterval(() => {
          if (ws.readyState === WebSocket.OPEN) {
            ws.send(String(wsSent++));
          }
        }, 100);
        // A gRPC server stream that outlives the reloads.
        const client = grpcClient(front.port, 'grpc.example');
        let grpcMessages = 0;
        let grpcEnded = '';
        const stream = client.makeServerStreamRequest(echoPath('Stream'), (v: unknown) => Buffer.from(JSON.stringify(v)), (b: Buffer) => b, { count: 100000, intervalMs: 100 }, new grpc.Metadata(), {});
        stream.on('data', () => (grpcMessages += 1));
        stream.on('status', (st: grpc.StatusObject) => (grpcEnded ||= `ended ${st.code} ${st.details}`));
        stream.on('error', () => undefined);
        await eventually(async () => grpcMessages, (m) => m > 0, 10000, 50);
        for (let i = 0; i < reloads; i++) {
          variant += 1;
          const before = agent.logs.filter((l) => l.msg === 'configuration applied').length;
          await cluster.apply([sideRoute(variant)]);
          await eventually(async () => agent.logs.filter((l) => l.msg === 'configuration applied').length, (n) => n > before, 30000, 10);
        }
        const applied = agent.logs.filter((l) => l.msg === 'configuration applied').length - appliedBefore;
        const wsMessagesBefore = wsEchoed;
        const grpcBefore = grpcMessages;
        await sleep(1000);
        clearInterval(wsTimer);
        const wsAlive = ws.readyState === WebSocket.OPEN && wsEchoed > wsMessagesBefore;
        const grpcAlive = !grpcEnded && grpcMessages > grpcBefore;
        ws.close();
        // Cancelled, or nginx's old workers would keep it (and a graceful quit wait for it).
        grpcEnded = 'cancelled';
        stream.cancel();
        client.close();
        return `${applied} nginx reloads; WebSocket ${wsAlive ? 'open' : `LOST (${wsClosed})`} (${wsEchoed}/${wsSent} echoed); gRPC stream ${grpcAlive ? 'open' : `LOST (${grpcEnded})`} (${grpcMessages} messages)`;
      });
    }

    if (wanted('leader')) {
      await measure('leader', async () => {
        const [a, b] = controllers;
        const killedAt = Date.now();
        await a.stop('SIGKILL');
        await eventually(async () => leads(b), (x) => x, 40000, 100);
        const takeover = Date.now() - killedAt;
        await b.waitForLog((l) => l.msg === 'agent connected', 30000);
        variant += 1;
        await cluster.apply([sideRoute(variant)]);
        await eventually(() => httpRequest(front.port, `/side-${variant}/x`, { timeoutMs: 2000, host: APP_HOST }), (r) => r.status === 200, 30000, 50);
        return `takeover ${(takeover / 1000).toFixed(1)} s, agent reconnected and a change served ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`;
      });
    }

    // A data-plane pod leaving as Kubernetes makes it leave: SIGTERM, and the Service keeps
    // sending it new connections until the endpoint change has propagated (--propagation-ms).
    const leave = async (address: string): Promise<number> => {
      const agent = agents.get(address)!;
      const t0 = Date.now();
      const stopped = agent.stop('SIGTERM');
      await sleep(propagationMs);
      front.targets.splice(front.targets.indexOf(address), 1);
      await stopped;
      agents.delete(address);
      return Date.now() - t0;
    };

    if (wanted('scale')) {
      await measure('scale-up', async () => {
        for (const n of [1, 2]) {
          await startPodAgent(n);
          front.targets.push(`127.0.0.${2 + n}`);
        }
        return `1 -> 3 data-plane pods, each in the Service once it serves`;
      });
      await measure('agent', async () => {
        const address = '127.0.0.2';
        const options = agents.get(address)!.options;
        const stopMs = await leave(address);
        const t0 = Date.now();
        const restarted = startAgent(options);
        agents.set(address, restarted);
        await eventually(() => httpRequest(listenerPort, '/load/x', { timeoutMs: 2000, host: APP_HOST }, address), (r) => r.status === 200, 60000, 100);
        front.targets.push(address);
        return `the agent of one of 3 pods restarted (SIGTERM, out of the Service after ${propagationMs} ms, exited after ${stopMs} ms; serving again ${Date.now() - t0} ms after its start)`;
      });
      await measure('scale-down', async () => {
        const ms: number[] = [];
        for (const n of [2, 1]) ms.push(await leave(`127.0.0.${2 + n}`));
        return `3 -> 1 data-plane pods (SIGTERM, out of the Service ${propagationMs} ms later; exited after ${ms.join(' / ')} ms)`;
      });
    }

    load.stop();
    await load.settle();
    const total = rows.reduce((s, r) => s + r.requests, 0);
    console.log(`load: ${rate} requests/s on fresh connections; ${load.sent} sent, ${load.failures.length} failed in all (scenarios: ${total} requests)`);
    docsTable({
      doc: 'gateway',
      id: 'zero-downtime',
      command: benchCommand('bench:zero-downtime'),
      columns: ['scenario', 'requests', 'failed', 'what happened'],
      rows: rows.map((r) => [r.scenario, r.requests, r.failed, r.samples ? `${r.detail}; failures: ${r.samples}` : r.detail]),
      note: `Load: ${rate} GET requests/s, each on a fresh connection through a TCP stand-in for the data plane's Service; a failure is any answer other than a 2xx from a backend, a connection error or a 5 s timeout.`,
    });
  } finally {
    for (const a of agents.values()) await a.stop('SIGTERM').catch(() => undefined);
    for (const c of controllers) await c.stop('SIGTERM').catch(() => undefined);
    await front.close();
    for (const f of extra) await f().catch(() => undefined);
    for (const p of pods) await stopPod(p).catch(() => undefined);
    await netns.close();
    await cluster.stop();
    await removeDir(dir);
  }
}

const leads = (c: ControllerProcess) => c.logs.filter((l) => l.msg === 'became the leader').length - c.logs.filter((l) => l.msg === 'no longer the leader').length > 0;


main().catch((err) => {
  console.error(err);
  process.exit(1);
});
