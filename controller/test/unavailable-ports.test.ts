/**
 * A listener port held by another process: nginx's bind failure names the port (apply/ports.ts),
 * the graph leaves the listeners on it out with Accepted False PortUnavailable while every other
 * listener is served, and the loop tries the port again once it is free (dataplane/local.ts,
 * reconcile.ts); with per-Gateway agents, the agent keeps the held ports beside its nginx and
 * reports them, and only its Gateway's listeners are left out. Through real nginx end to end in
 * e2e/gateway/lifecycle.test.ts, and with real agents in e2e/dataplane/.
 */
import * as net from 'net';
import * as dgram from 'dgram';
import { bindFailures, HeldPorts, portFree } from '../src/apply/ports';
import { AgentLoop } from '../src/agent/agent';
import { unavailableListenerPorts } from '../src/dataplane/ports';
import { buildGraph, DEFAULT_CONTROLLER_NAME, type DataplaneResult, type StatusReport, type UnavailablePort } from '../src/graph';
import { buildModel } from '../src/model';
import { computeStatuses } from '../src/status';
import { localDataplane, Reconciler, standardPipeline, type NginxApplier } from '../src/reconcile';
import { silentLogger } from '../src/log';
import { GW_API, gateway, gatewayClass, http, parse, route } from './graph-fixtures';

describe('bindFailures reads the ports nginx could not listen on', () => {
  test('address in use and permission denied name their port, once each, IPv6 included', () => {
    const message = [
      '[emerg] bind() to 0.0.0.0:8080 failed (98: Address already in use)',
      '[emerg] bind() to 0.0.0.0:8080 failed (98: Address already in use)',
      '[emerg] bind() to [::]:443 failed (98: Address already in use)',
      '[emerg] bind() to 127.0.0.1:80 failed (13: Permission denied)',
      '[emerg] still could not bind()',
    ].join('; ');
    expect(bindFailures(message)).toEqual([
      { address: '0.0.0.0', port: 8080, error: '98: Address already in use' },
      { address: '::', port: 443, error: '98: Address already in use' },
      { address: '127.0.0.1', port: 80, error: '13: Permission denied' },
    ]);
  });

  test('failures that are not about a port (an address the host lacks, a unix socket) name none', () => {
    expect(bindFailures('[emerg] bind() to 10.9.9.9:80 failed (99: Cannot assign requested address)')).toEqual([]);
    expect(bindFailures('[emerg] bind() to unix:/run/x.sock failed (98: Address already in use)')).toEqual([]);
    expect(bindFailures('[emerg] unknown directive "foo"')).toEqual([]);
  });
});

describe('portFree binds the port as nginx would', () => {
  test('a TCP port another socket listens on is not free for TCP, its UDP twin is; once closed it is free', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as net.AddressInfo).port;
    expect(await portFree('127.0.0.1', port, 'TCP')).toBe(false);
    // 0.0.0.0 overlaps 127.0.0.1: nginx listening on every address would fail too.
    expect(await portFree('0.0.0.0', port, 'TCP')).toBe(false);
    expect(await portFree('127.0.0.1', port, 'UDP')).toBe(true);
    await new Promise<void>((r) => holder.close(() => r()));
    expect(await portFree('127.0.0.1', port, 'TCP')).toBe(true);
  });

  test('a UDP port another socket holds is not free for UDP', async () => {
    const holder = dgram.createSocket('udp4');
    await new Promise<void>((r) => holder.bind(0, '127.0.0.1', r));
    const port = holder.address().port;
    expect(await portFree('127.0.0.1', port, 'UDP')).toBe(false);
    holder.close();
  });
});

describe('HeldPorts: the ports nginx could not listen on, kept where nginx runs until a bind finds them free', () => {
  test('holds each transport a bind finds taken (TCP and UDP apart), reports what is new, and forgets a port once it binds', async () => {
    const tcp = net.createServer();
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const port = (tcp.address() as net.AddressInfo).port;
    const failure = { address: '127.0.0.1', port, error: '98: Address already in use' };
    const ports = new HeldPorts();
    expect(await ports.add([failure])).toBe(true);
    expect(ports.list()).toEqual([{ ...failure, transports: ['TCP'] }]);
    expect(await ports.add([failure])).toBe(false);
    // Only the transports the configuration listens on are asked about.
    const udpOnly = new HeldPorts();
    expect(await udpOnly.add([failure], () => ['UDP'])).toBe(false);
    expect(await ports.recheck()).toBe(false);
    await new Promise<void>((r) => tcp.close(() => r()));
    expect(await ports.recheck()).toBe(true);
    expect(ports.list()).toEqual([]);
  });

  test("as the graph reads them: standalone's concern every Gateway, an agent's only its own, naming its pod", () => {
    const h = [{ address: '0.0.0.0', port: 8081, error: '98: Address already in use', transports: ['TCP' as const, 'UDP' as const] }];
    expect(unavailableListenerPorts(h)).toEqual([
      { port: 8081, transport: 'TCP', reason: 'nginx could not listen on 0.0.0.0:8081 (98: Address already in use)' },
      { port: 8081, transport: 'UDP', reason: 'nginx could not listen on 0.0.0.0:8081 (98: Address already in use)' },
    ]);
    expect(unavailableListenerPorts(h, { gateway: 'default/gw', pod: 'gw-1' })[0]).toEqual({ port: 8081, transport: 'TCP', gateway: 'default/gw', reason: 'the nginx of gw-1 could not listen on 0.0.0.0:8081 (98: Address already in use)' });
  });
});

const held = (port: number, transport: 'TCP' | 'UDP' = 'TCP'): UnavailablePort => ({ port, transport, reason: `nginx could not listen on 127.0.0.1:${port} (98: Address already in use)` });
const httpRoute = (name: string, section: string) => route(name, { parentRefs: [{ name: 'gw', sectionName: section }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }] }] });
const cond = (conditions: { type: string }[], type: string) => conditions.find((c) => c.type === type) as { status: string; reason: string; message: string } | undefined;
const ok: DataplaneResult = { programmed: true, addresses: ['127.0.0.1'] };

describe('the graph leaves listeners on an unavailable port out (Gateway API: Accepted False, reason PortUnavailable)', () => {
  const docs = [
    gatewayClass(),
    gateway('gw', [http('web', 8080), http('extra', 8081), http('extra-named', 8081, { hostname: 'x.example' }), { name: 'dns', port: 8081, protocol: 'UDP' }]),
    httpRoute('a', 'web'),
    httpRoute('b', 'extra'),
  ];
  const parsed = parse(...docs);
  const graph = buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME, unavailablePorts: [held(8081)] });
  const listener = (name: string) => graph.gateways[0].listeners.find((l) => l.name === name)!;

  test('every listener on the port is not accepted and not programmed, with a message naming the port', () => {
    for (const name of ['extra', 'extra-named']) {
      const l = listener(name);
      expect(l.valid).toBe(false);
      expect(cond(l.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'PortUnavailable' });
      expect(cond(l.conditions, 'Accepted')!.message).toMatch(/^Port 8081 \(TCP\) is unavailable: nginx could not listen on 127\.0\.0\.1:8081 \(98: Address already in use\)/);
      expect(cond(l.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
    }
  });

  test('the Gateway\'s other listeners, a UDP listener on the same number included, are accepted and served', () => {
    expect(listener('web').valid).toBe(true);
    expect(listener('dns').valid).toBe(true);
    expect(graph.gateways[0].conditions[0]).toMatchObject({ type: 'Accepted', status: 'True', reason: 'ListenersNotValid' });
    const model = buildModel(graph);
    expect([...new Set(model.servers.map((s) => s.port))]).toEqual([8080]);
    const reports = computeStatuses(graph, parsed, ok);
    const gw = reports.find((r) => r.kind === 'Gateway')!.status as { conditions: { type: string }[]; listeners: { name: string; attachedRoutes: number; conditions: { type: string }[] }[] };
    expect(cond(gw.conditions, 'Programmed')?.status).toBe('True');
    expect(cond(gw.listeners.find((l) => l.name === 'web')!.conditions, 'Programmed')?.status).toBe('True');
    // The route stays attached: it is served on the listener as soon as the port is free.
    expect(gw.listeners.find((l) => l.name === 'extra')!.attachedRoutes).toBe(1);
  });

  test("a port held by one Gateway's own data plane (an agent's) leaves out that Gateway's listeners only", () => {
    const two = parse(gatewayClass(), gateway('gw', [http('web', 8080), http('extra', 8081)]), gateway('other', [http('extra', 8081)]));
    const g = buildGraph(two.set, { controllerName: DEFAULT_CONTROLLER_NAME, dataplanePerGateway: true, unavailablePorts: [{ ...held(8081), gateway: 'default/gw' }] });
    const extra = (gw: string) => [...g.gateways, ...g.rejectedGateways].find((x) => x.name === gw)!.listeners.find((l) => l.name === 'extra')!;
    expect(cond(extra('gw').conditions, 'Accepted')?.reason).toBe('PortUnavailable');
    expect(extra('other').valid).toBe(true);
  });

  test('a Gateway whose every listener is on unavailable ports is not accepted', () => {
    const g = buildGraph(parse(gatewayClass(), gateway('gw', [http('only', 8081)])).set, { controllerName: DEFAULT_CONTROLLER_NAME, unavailablePorts: [held(8081)] });
    expect(g.rejectedGateways.map((x) => x.name)).toEqual(['gw']);
  });

  test('a ListenerSet listener on the port is not accepted either', () => {
    const gw = gateway('gw', [http('web', 8080)]);
    const parsedLs = parse(
      gatewayClass(),
      { ...gw, spec: { ...gw.spec, allowedListeners: { namespaces: { from: 'Same' } } } },
      { apiVersion: GW_API, kind: 'ListenerSet', metadata: { name: 'ls', namespace: 'default', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { parentRef: { name: 'gw' }, listeners: [http('more', 8081), http('other', 8082)] } },
    );
    const g = buildGraph(parsedLs.set, { controllerName: DEFAULT_CONTROLLER_NAME, unavailablePorts: [held(8081)] });
    const ls = g.listenerSets![0];
    expect(cond(ls.listeners.find((l) => l.name === 'more')!.conditions, 'Accepted')?.reason).toBe('PortUnavailable');
    expect(ls.listeners.find((l) => l.name === 'other')!.valid).toBe(true);
    expect(ls.conditions[0]).toMatchObject({ type: 'Accepted', status: 'True', reason: 'ListenersNotValid' });
  });
});

describe('the reconcile loop with a port another process holds', () => {
  const docs = [
    gatewayClass(),
    { ...gateway('gw', [http('web', 8080), http('extra', 8081)]), metadata: { name: 'gw', namespace: 'default', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' } },
  ].map((doc) => ({ source: 't', doc }));

  test('serves the other listeners at once, reports the held one PortUnavailable, and serves it once the port is free', async () => {
    let taken = true;
    const applied: string[] = [];
    // nginx as it behaves: a configuration that listens on a taken port is refused whole.
    const nginx: NginxApplier = {
      start: (c) => nginx.apply(c),
      async apply(config) {
        const servers = config.files['servers.conf'] ?? '';
        if (taken && servers.includes(':8081')) {
          return { ok: false, message: '[emerg] bind() to 127.0.0.1:8081 failed (98: Address already in use); [emerg] still could not bind()', portFailures: [{ address: '127.0.0.1', port: 8081, error: '98: Address already in use' }] };
        }
        applied.push(servers);
        return { ok: true };
      },
      async stop() {},
    };
    const written: StatusReport[][] = [];
    const reconciler = new Reconciler({
      pipeline: standardPipeline as never,
      source: { scan: async () => docs as never, writeStatuses: async (s) => void written.push(s) },
      dataplane: localDataplane(standardPipeline as never, nginx, { log: silentLogger, listenAddress: '127.0.0.1', prefix: '/tmp/portcullis-ports-test', portFree: async () => !taken }),
      log: silentLogger,
      controllerName: DEFAULT_CONTROLLER_NAME,
      portRecheckMs: 10,
    });
    const summaries: { programmed: boolean; unavailablePorts?: string[] }[] = [];
    reconciler.onReconciled((s) => summaries.push(s));
    const listeners = (s: StatusReport[]) => (s.find((r) => r.kind === 'Gateway')!.status as { listeners: { name: string; conditions: { type: string }[] }[] }).listeners;
    const gatewayProgrammed = (s: StatusReport[]) => cond((s.find((r) => r.kind === 'Gateway')!.status as { conditions: { type: string }[] }).conditions, 'Programmed');
    try {
      await reconciler.trigger();
      // One reconcile: the refused configuration, then the one without port 8081, served.
      expect(written).toHaveLength(1);
      expect(applied).toHaveLength(1);
      expect(applied[0]).toContain(':8080');
      expect(applied[0]).not.toContain(':8081');
      expect(summaries[0]).toMatchObject({ programmed: true, unavailablePorts: ['8081/TCP'] });
      expect(gatewayProgrammed(written[0])?.status).toBe('True');
      expect(cond(listeners(written[0]).find((l) => l.name === 'web')!.conditions, 'Programmed')?.status).toBe('True');
      expect(cond(listeners(written[0]).find((l) => l.name === 'extra')!.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'PortUnavailable' });

      // The next change, while the port is still held, does not try it again.
      await reconciler.trigger();
      expect(applied).toHaveLength(1);

      // Freed: the timer finds it and the listener is served without any change of manifests.
      taken = false;
      const deadline = Date.now() + 5000;
      while (applied.length < 2) {
        if (Date.now() > deadline) throw new Error('the freed port was not tried again');
        await new Promise((r) => setTimeout(r, 5));
      }
      await reconciler.trigger();
      expect(applied[1]).toContain(':8081');
      const last = written[written.length - 1];
      expect(cond(listeners(last).find((l) => l.name === 'extra')!.conditions, 'Accepted')?.status).toBe('True');
      expect(cond(listeners(last).find((l) => l.name === 'extra')!.conditions, 'Programmed')?.status).toBe('True');
    } finally {
      await reconciler.stop();
    }
  });
});

describe('portcullis-agent with a port another process holds beside its nginx', () => {
  test('reports the held port with the refused config and every later report, and reports again once a recheck finds it free', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as net.AddressInfo).port;
    const reports: { version: string; ok: boolean; heldPorts?: { port: number; transports: string[] }[] }[] = [];
    // nginx as it behaves: a config that listens on the held port is refused whole.
    const nginx = {
      async apply(config: { files: Record<string, string> }) {
        if (config.files['servers.conf'].includes(`:${port}`) && !(await portFree('127.0.0.1', port, 'TCP'))) {
          return { ok: false as const, message: `[emerg] bind() to 127.0.0.1:${port} failed (98: Address already in use)`, portFailures: [{ address: '127.0.0.1', port, error: '98: Address already in use' }] };
        }
        return { ok: true as const };
      },
    };
    const loop = new AgentLoop(nginx, { report: async (r) => void reports.push(r) }, silentLogger, undefined, 0, new HeldPorts(), 10);
    try {
      loop.frame({ type: 'config', version: 'v1', files: { 'servers.conf': `listen 127.0.0.1:${port};` } });
      await loop.idle();
      expect(reports).toEqual([{ version: 'v1', ok: false, message: expect.stringContaining('bind()'), heldPorts: [{ address: '127.0.0.1', port, error: '98: Address already in use', transports: ['TCP'] }] }]);
      // The controller's next config leaves the listener out: applied, and the port still held.
      loop.frame({ type: 'config', version: 'v2', files: { 'servers.conf': 'listen 127.0.0.1:1;' } });
      await loop.idle();
      expect(reports[1]).toMatchObject({ version: 'v2', ok: true, heldPorts: [{ port }] });
      await new Promise<void>((r) => holder.close(() => r()));
      const deadline = Date.now() + 5000;
      while (reports.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(reports[2]).toEqual({ version: 'v2', ok: true });
    } finally {
      loop.stop();
    }
  });
});
