/**
 * The config channel with its real parts: the controller's ConfigServer (in this process)
 * serving rendered Gateway configs, real portcullis-agent processes each running a real
 * nginx, and loopback echo backends. Only the TokenReview is stood in for (it needs the API
 * server; e2e/dataplane/kubernetes.test.ts does it for real).
 */
import * as fs from 'fs';
import * as path from 'path';
import { ConfigServer } from '../../controller/src/configserver/server';
import { TokenAuthenticator, serviceAccountUser, type TokenReviewer } from '../../controller/src/configserver/auth';
import { GatewaySources } from '../../controller/src/configserver/sources';
import { parseManifests } from '../../controller/src/resources';
import { buildGraph } from '../../controller/src/graph';
import { createLogger } from '../../controller/src/log';
import { startEchoBackend, type EchoBackend } from '../support/echo-backend';
import { freePort, occupyPort } from '../support/ports';
import { httpRequest, eventually } from '../support/http';
import { gateway, gatewayClass, httpRoute, rule, serviceFor, CONTROLLER_NAME, type Manifest, type ListenerSpec } from '../support/manifests';
import { makeTempDir, removeDir } from '../support/tmp';
import { startAgent, stopAllAgents, type AgentProcess } from '../support/agent';
import type { ManifestDoc } from '../../controller/src/resources/types';

jest.setTimeout(120000);

const GW_SA = 'gw-portcullis';
const log = createLogger({ level: process.env.E2E_CONTROLLER_LOGS ? 'debug' : 'error' });

/** Tokens are names here: "sa:<namespace>:<name>" stands for that ServiceAccount's token. */
const review: TokenReviewer = async (token) => {
  const m = /^sa:([^:]+):([^:]+)$/.exec(token);
  return m ? { username: serviceAccountUser(m[1], m[2]) } : undefined;
};

let dir: string;
let server: ConfigServer;
let serverUrl: string;
let echo: EchoBackend;
let port: number;
const sources = new GatewaySources();

function docs(manifests: Manifest[]): ManifestDoc[] {
  return manifests.map((m, i) => ({ source: `test#${i}`, doc: { ...m, metadata: { namespace: m.kind === 'GatewayClass' ? undefined : 'default', ...m.metadata } } }) as unknown as ManifestDoc);
}

function publish(routes: Manifest[], listeners: ListenerSpec[] = [{ name: 'http', port }]): void {
  const parsed = parseManifests(docs([gatewayClass(), gateway('gw', listeners), ...serviceFor('echo', echo.port), ...routes]));
  if (parsed.errors.length || parsed.invalid.length) throw new Error(JSON.stringify([parsed.errors, parsed.invalid]));
  const graph = buildGraph(parsed.set, { controllerName: CONTROLLER_NAME });
  server.setSources(sources.build(graph));
}

function routeTo(name: string, pathValue: string): Manifest {
  return httpRoute(name, { rules: [rule('echo', [{ path: { type: 'PathPrefix', value: pathValue } }])] });
}

async function agent(name: string, address: string, token = `sa:default:${GW_SA}`, shutdownDelay?: string): Promise<AgentProcess> {
  const tokenFile = path.join(dir, `${name}.token`);
  fs.writeFileSync(tokenFile, token);
  return startAgent({
    server: serverUrl,
    gateway: 'default/gw',
    tokenFile,
    prefix: path.join(dir, name),
    listenAddress: address,
    healthPort: await freePort(),
    podName: name,
    shutdownDelay,
  });
}

async function serves(address: string, p: string): Promise<number> {
  return (await httpRequest(port, p, {}, address).catch(() => ({ status: 0 }))).status;
}

beforeAll(async () => {
  dir = await makeTempDir('pc-agent-');
  echo = await startEchoBackend('echo');
  port = await freePort();
  server = new ConfigServer({ log, auth: new TokenAuthenticator(review, ['portcullis-agent']), settleMs: 0 });
  const addr = await server.listen(0, '127.0.0.1');
  serverUrl = `http://127.0.0.1:${addr.port}`;
  server.setServing(true);
});

afterAll(async () => {
  await stopAllAgents();
  await server?.close();
  await echo?.close();
  await removeDir(dir);
});

describe('config agents', () => {
  let a: AgentProcess;
  let b: AgentProcess;

  it('serve the Gateway config they receive, and the Gateway reports Programmed', async () => {
    publish([routeTo('r1', '/one')]);
    expect(server.outcome('default/gw')).toEqual({ programmed: false, reason: 'Pending', message: expect.stringContaining('Waiting for a data plane') });
    a = await agent('pod-a', '127.0.0.1');
    b = await agent('pod-b', '127.0.0.2');
    for (const addr of ['127.0.0.1', '127.0.0.2']) {
      await eventually(() => serves(addr, '/one'), (s) => s === 200, 30000);
    }
    await eventually(async () => server.outcome('default/gw'), (o) => o?.programmed === true);
    expect(server.connectedAgents('default/gw').sort()).toEqual(['pod-a', 'pod-b']);
  });

  it('all replicas converge on a change pushed by the controller', async () => {
    publish([routeTo('r1', '/one'), routeTo('r2', '/two')]);
    for (const addr of ['127.0.0.1', '127.0.0.2']) {
      await eventually(() => serves(addr, '/two'), (s) => s === 200, 10000);
    }
    expect(await serves('127.0.0.1', '/one')).toBe(200);
    // The change travelled as the changed lines only (a delta on the config sent before it).
    for (const agentProcess of [a, b]) {
      const received = agentProcess.logs.filter((l) => l.msg === 'config received');
      expect(received.length).toBeGreaterThanOrEqual(2);
      expect(received[received.length - 1]).toMatchObject({ base: received[received.length - 2].version });
      expect(Number(received[received.length - 1].bytes)).toBeLessThan(Number(received[0].bytes));
    }
  });

  it('an agent that restarts gets the current config at once', async () => {
    await a.stop();
    expect(await serves('127.0.0.1', '/two')).toBe(0);
    const t0 = Date.now();
    a = await agent('pod-a', '127.0.0.1');
    await eventually(() => serves('127.0.0.1', '/two'), (s) => s === 200, 20000, 10);
    // No change was needed: the current version came with the connection.
    expect(Date.now() - t0).toBeLessThan(15000);
    await eventually(async () => server.outcome('default/gw'), (o) => o?.programmed === true);
  });

  it('on SIGTERM an agent answers 503 on /readyz and keeps nginx serving for its shutdown delay, then quits', async () => {
    const d = await agent('pod-d', '127.0.0.4', undefined, '2s');
    await eventually(() => serves('127.0.0.4', '/two'), (s) => s === 200, 30000);
    // nginx serves the new config a moment before the agent's apply has seen it take effect
    // (and /readyz turns 200): ready is reported late, never early.
    await eventually(() => httpRequest(d.options.healthPort, '/readyz'), (r) => r.status === 200, 10000);
    const t0 = Date.now();
    d.child.kill('SIGTERM');
    const ready = await eventually(() => httpRequest(d.options.healthPort, '/readyz'), (r) => r.status === 503, 1500, 20);
    expect(ready.text).toBe('shutting down\n');
    // Taken out of rotation, yet a connection a proxy still sends here is answered.
    expect(await serves('127.0.0.4', '/two')).toBe(200);
    expect(Date.now() - t0).toBeLessThan(1500);
    // A second SIGTERM does not cut the drain short.
    d.child.kill('SIGTERM');
    expect(await serves('127.0.0.4', '/two')).toBe(200);
    await d.exited;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(await serves('127.0.0.4', '/two')).toBe(0);
  });

  it('a config nginx cannot apply is reported on the Gateway and the last good one keeps serving', async () => {
    const blocked = await freePort('127.0.0.2');
    const holder = await occupyPort(blocked, '127.0.0.2');
    try {
      // A new listener on a port something else holds on pod-b's address: pod-b's nginx
      // refuses the reload, pod-a's applies it.
      publish([routeTo('r1', '/one'), routeTo('r2', '/two'), routeTo('r3', '/three')], [
        { name: 'http', port },
        { name: 'extra', port: blocked },
      ]);
      const outcome = await eventually(async () => server.outcome('default/gw'), (o) => o?.programmed === false, 20000);
      expect(outcome).toMatchObject({ programmed: false, reason: 'Invalid' });
      expect((outcome as { message: string }).message).toMatch(/pod-b: .*bind\(\) to 127\.0\.0\.2:\d+ failed/);
      // pod-b names the port held beside its nginx, per transport (the controller leaves the
      // listeners on it out: e2e/dataplane/kubernetes.test.ts).
      expect(server.heldPorts('default/gw')).toEqual([{ pod: 'pod-b', ports: [{ address: '127.0.0.2', port: blocked, error: '98: Address already in use', transports: ['TCP'] }] }]);
      // pod-b still serves its last good config (no /three), pod-a the new one.
      expect(await serves('127.0.0.2', '/two')).toBe(200);
      expect(await serves('127.0.0.2', '/three')).toBe(404);
      await eventually(() => serves('127.0.0.1', '/three'), (s) => s === 200);
    } finally {
      await holder.close();
    }
    // The agent retries a refused config: once the port is free it applies and reports.
    await eventually(() => serves('127.0.0.2', '/three'), (s) => s === 200, 20000);
    await eventually(async () => server.outcome('default/gw'), (o) => o?.programmed === true, 10000);
    await eventually(async () => server.heldPorts('default/gw'), (h) => h.length === 0, 10000);
  });

  it('exposes health, readiness and Prometheus metrics (apply duration, nginx stub_status)', async () => {
    const health = (p: string) => httpRequest(a.options.healthPort, p);
    expect((await health('/healthz')).status).toBe(200);
    expect((await health('/readyz')).status).toBe(200);
    const metrics = (await health('/metrics')).text;
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1]);
    expect(value('portcullis_agent_config_apply_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value('portcullis_agent_controller_connected')).toBe(1);
    expect(value('portcullis_agent_last_apply_success')).toBe(1);
    // Requests the test sent through this agent's nginx, counted by stub_status.
    expect(value('nginx_http_requests_total')).toBeGreaterThanOrEqual(1);
    expect(value('nginx_connections_accepted_total')).toBeGreaterThanOrEqual(1);
    expect(value('nginx_connections_active')).toBeGreaterThanOrEqual(0);
  });

  it("refuses a token of another Gateway's ServiceAccount", async () => {
    const intruder = await agent('pod-x', '127.0.0.3', 'sa:default:other-gateway');
    const line = await intruder.waitForLog((l) => l.msg === 'config channel failed; reconnecting');
    expect(String(line.error)).toMatch(/HTTP 403: .*system:serviceaccount:default:other-gateway may not read the configuration of Gateway default\/gw/);
    const anonymous = await agent('pod-y', '127.0.0.3', 'not-a-token');
    expect(String((await anonymous.waitForLog((l) => l.msg === 'config channel failed; reconnecting')).error)).toMatch(/HTTP 401/);
    await intruder.stop();
    await anonymous.stop();
    expect(server.connectedAgents('default/gw').sort()).toEqual(['pod-a', 'pod-b']);
  });

  it('a Gateway that is not accepted still gets a config: its new pod turns Ready and serves nothing', async () => {
    // Its only listener's certificate Secret does not exist: no valid listener, not accepted.
    const tls = { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'does-not-exist' }] };
    publish([routeTo('r1', '/one')], [{ name: 'https', port, protocol: 'HTTPS', tls }]);
    const c = await agent('pod-c', '127.0.0.3');
    try {
      await eventually(() => httpRequest(c.options.healthPort, '/readyz').then((r) => r.status), (st) => st === 200, 30000);
      expect(await serves('127.0.0.3', '/one')).toBe(0);
      await eventually(() => serves('127.0.0.1', '/one'), (st) => st === 0, 10000);
    } finally {
      await c.stop();
    }
    publish([routeTo('r1', '/one')]);
    await eventually(() => serves('127.0.0.1', '/one'), (st) => st === 200, 10000);
  });

  it('carries configs far beyond a ConfigMap (5,000 routes)', async () => {
    const routes = Array.from({ length: 5000 }, (_, i) => routeTo(`bulk-${i}`, `/bulk/${i}`));
    const t0 = Date.now();
    publish([routeTo('r1', '/one'), ...routes]);
    await eventually(() => serves('127.0.0.1', '/bulk/4999'), (s) => s === 200, 60000, 100);
    const size = fs
      .readdirSync(path.join(dir, 'pod-a', 'conf'))
      .reduce((n, f) => n + fs.statSync(path.join(dir, 'pod-a', 'conf', f)).size, 0);
    expect(size).toBeGreaterThan(1024 * 1024);
    log.info('5,000 routes served', { ms: Date.now() - t0, bytes: size });
    await eventually(() => serves('127.0.0.2', '/bulk/4999'), (s) => s === 200, 60000, 100);
  });
});
