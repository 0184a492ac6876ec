/**
 * ConfigServer: the controller's side of the config channel (protocol.ts). It holds, per
 * Gateway, what can render that Gateway's config (a GatewaySource), renders it for the nginx
 * layout each agent announces (cached per layout and source), pushes every new version to the
 * connected agents of that Gateway, and folds their reports into the Gateway's outcome
 * (outcomes.ts).
 *
 * Only the leader serves (setServing): Programmed needs the agents' reports where statuses are
 * written, and one source of versions keeps agents from flapping between replicas whose
 * informers lag each other. A follower answers 503 and the agent tries again, reaching another
 * replica through the Service.
 */
import * as http from 'http';
import * as https from 'https';
import type { AddressInfo } from 'net';
import type { Logger } from '../log';
import { AuthError, serviceAccountUser, type TokenAuthenticator } from './auth';
import { foldOutcome, readHeldPorts, type DataplaneOutcome } from './outcomes';
import type { HeldPort } from '../apply/ports';
import { configVersion, makeDelta, CONFIG_PATH, PING_INTERVAL_MS, STATUS_PATH, type ApplyReport, type ConfigFrame, type RenderVariant } from '../dataplane/protocol';

export interface GatewaySource {
  /** The ServiceAccount (in the Gateway's namespace) whose tokens may fetch this config. */
  serviceAccount: string;
  render(variant: RenderVariant): Record<string, string>;
}

interface Rendered {
  version: string;
  files: Record<string, string>;
  /** Delta frames (one NDJSON line each) from earlier versions, for the agents on them. */
  deltas?: Map<string, string>;
}

interface Agent {
  gateway: string;
  pod: string;
  variant: RenderVariant;
  variantKey: string;
  res: http.ServerResponse;
  sent?: string;
  /** It takes delta frames (it said so when it connected). */
  deltas: boolean;
  /** The config last sent on this stream as a frame (a delta's base). */
  base?: Rendered;
}

export interface ConfigServerOptions {
  log: Logger;
  auth: TokenAuthenticator;
  /** PEM; without them the server speaks plain HTTP (tests, or a mesh doing TLS). */
  tls?: { cert: string; key: string };
  /** How long after becoming the leader a Gateway without agents is "unknown" rather than Pending. */
  settleMs?: number;
}

const MAX_BODY = 64 * 1024;

export class ConfigServer {
  private readonly o: ConfigServerOptions;
  private readonly server: http.Server;
  private sources = new Map<string, GatewaySource>();
  private readonly renders = new WeakMap<GatewaySource, Map<string, Rendered>>();
  private readonly agents = new Set<Agent>();
  /** gateway -> pod -> latest report */
  private readonly reports = new Map<string, Map<string, ApplyReport>>();
  private readonly outcomes = new Map<string, string>();
  private readonly listeners: ((gateway: string) => void)[] = [];
  private serving = false;
  private servingSince = 0;
  private pinger?: NodeJS.Timeout;

  constructor(options: ConfigServerOptions) {
    this.o = options;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res);
    this.server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler);
    // Streams stay open for as long as the agent runs.
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 10000;
  }

  async listen(port: number, host?: string): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    this.pinger = setInterval(() => this.ping(), PING_INTERVAL_MS);
    this.pinger.unref();
    return this.server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    for (const a of this.agents) a.res.end();
    this.agents.clear();
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Leadership: only the leader serves; losing it ends every stream (agents reconnect). */
  setServing(serving: boolean): void {
    if (serving === this.serving) return;
    this.serving = serving;
    this.servingSince = Date.now();
    if (!serving) {
      for (const a of this.agents) a.res.end();
      this.agents.clear();
      this.reports.clear();
    }
    this.o.log.info(serving ? 'config server serving agents (leader)' : 'config server stopped serving agents (not the leader)', { component: 'configserver' });
  }

  /** Called when a Gateway's outcome changes (the status stage should run again). */
  onOutcome(listener: (gateway: string) => void): void {
    this.listeners.push(listener);
  }

  /**
   * The configs to serve, by "namespace/name". A source kept from the last call (same object)
   * is not rendered again; a new one is rendered and pushed to that Gateway's agents.
   */
  setSources(sources: Map<string, GatewaySource>): void {
    const old = this.sources;
    this.sources = sources;
    for (const agent of this.agents) {
      const source = sources.get(agent.gateway);
      if (source === old.get(agent.gateway)) continue;
      if (!source) {
        // The Gateway is gone or no longer ours: its agents keep their last config.
        this.endAgent(agent, 'the Gateway is no longer served by this controller');
        continue;
      }
      this.push(agent, source);
    }
    for (const gateway of old.keys()) if (!sources.has(gateway)) this.reports.delete(gateway);
    this.recompute();
  }

  /** The Gateway's data-plane outcome for its Programmed condition; undefined: not known yet. */
  outcome(gateway: string): DataplaneOutcome | undefined {
    if (!this.serving) return undefined;
    const reports = [...(this.reports.get(gateway)?.values() ?? [])];
    const connected = [...this.agents].filter((a) => a.gateway === gateway).length;
    const settling = Date.now() - this.servingSince < (this.o.settleMs ?? 5000);
    return foldOutcome(reports, connected, settling);
  }

  /** Per connected agent of the Gateway that reported any: the ports its nginx finds held. */
  heldPorts(gateway: string): { pod: string; ports: HeldPort[] }[] {
    if (!this.serving) return [];
    const out: { pod: string; ports: HeldPort[] }[] = [];
    for (const r of this.reports.get(gateway)?.values() ?? []) if (r.heldPorts?.length) out.push({ pod: r.pod, ports: r.heldPorts });
    return out.sort((a, b) => a.pod.localeCompare(b.pod));
  }

  /** Connected agents per Gateway (metrics, tests). */
  connectedAgents(gateway: string): string[] {
    return [...this.agents].filter((a) => a.gateway === gateway).map((a) => a.pod);
  }

  private recompute(): void {
    const keys = new Set([...this.sources.keys(), ...this.outcomes.keys()]);
    for (const gateway of keys) {
      // Held ports change the Gateway's listeners: the loop builds again.
      const next = JSON.stringify([this.outcome(gateway) ?? null, this.heldPorts(gateway)]);
      if (this.outcomes.get(gateway) === next) continue;
      this.outcomes.set(gateway, next);
      for (const l of this.listeners) l(gateway);
    }
  }

  private rendered(source: GatewaySource, variant: RenderVariant, key: string): Rendered {
    let byVariant = this.renders.get(source);
    if (!byVariant) this.renders.set(source, (byVariant = new Map()));
    let r = byVariant.get(key);
    if (!r) {
      const files = source.render(variant);
      r = { version: configVersion(files), files };
      byVariant.set(key, r);
    }
    return r;
  }

  private push(agent: Agent, source: GatewaySource): void {
    let r: Rendered;
    try {
      r = this.rendered(source, agent.variant, agent.variantKey);
    } catch (err) {
      this.o.log.error('rendering a Gateway config for an agent failed', { component: 'configserver', gateway: agent.gateway, error: (err as Error).message });
      return;
    }
    if (agent.sent === r.version) return;
    agent.sent = r.version;
    const base = agent.deltas ? agent.base : undefined;
    agent.base = r;
    const line = base ? deltaLine(base, r) : JSON.stringify({ type: 'config', version: r.version, files: r.files } satisfies ConfigFrame) + '\n';
    agent.res.write(line);
    this.o.log.info('config sent to an agent', { component: 'configserver', gateway: agent.gateway, pod: agent.pod, version: r.version, ...(base ? { base: base.version } : {}), bytes: line.length });
  }

  private write(agent: Agent, frame: ConfigFrame): void {
    agent.res.write(JSON.stringify(frame) + '\n');
  }

  private ping(): void {
    for (const a of this.agents) this.write(a, { type: 'ping' });
  }

  private endAgent(agent: Agent, reason: string): void {
    this.o.log.info('closing an agent stream', { component: 'configserver', gateway: agent.gateway, pod: agent.pod, reason });
    this.agents.delete(agent);
    agent.res.end();
  }

  private fail(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ message }));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://agent');
      if (url.pathname !== CONFIG_PATH && url.pathname !== STATUS_PATH) return this.fail(res, 404, `no such path ${url.pathname}`);
      if (!this.serving) return this.fail(res, 503, 'this controller replica is not the leader; try again', { 'retry-after': '1' });
      const identity = await this.o.auth.authenticate(req.headers.authorization);
      if (url.pathname === CONFIG_PATH && req.method === 'GET') return this.openStream(url, identity.username, identity.podName, req, res);
      if (url.pathname === STATUS_PATH && req.method === 'POST') return await this.report(req, res, identity.username);
      return this.fail(res, 405, `${req.method} is not allowed on ${url.pathname}`);
    } catch (err) {
      if (err instanceof AuthError) return this.fail(res, err.status, err.message);
      this.o.log.error('config server request failed', { component: 'configserver', error: (err as Error).message });
      if (!res.headersSent) this.fail(res, 500, (err as Error).message);
      else res.end();
    }
  }

  /** The Gateway's source if `username` may have it; else answers the request and returns undefined. */
  private authorize(gateway: string, username: string, res: http.ServerResponse): GatewaySource | undefined {
    const [namespace, name, extra] = gateway.split('/');
    if (!namespace || !name || extra !== undefined) {
      this.fail(res, 400, `gateway must be NAMESPACE/NAME, got "${gateway}"`);
      return undefined;
    }
    const source = this.sources.get(gateway);
    if (!source) {
      this.fail(res, 404, `Gateway ${gateway} is not served by this controller (unknown, not accepted, or of another GatewayClass)`);
      return undefined;
    }
    if (username !== serviceAccountUser(namespace, source.serviceAccount)) {
      this.fail(res, 403, `${username} may not read the configuration of Gateway ${gateway} (only ${serviceAccountUser(namespace, source.serviceAccount)})`);
      return undefined;
    }
    return source;
  }

  private openStream(url: URL, username: string, boundPod: string | undefined, req: http.IncomingMessage, res: http.ServerResponse): void {
    const gateway = url.searchParams.get('gateway') ?? '';
    const prefix = url.searchParams.get('prefix') ?? '';
    const listenAddress = url.searchParams.get('listen') ?? '';
    if (!prefix.startsWith('/')) return this.fail(res, 400, `prefix must be an absolute path, got "${prefix}"`);
    if (!/^[0-9A-Fa-f.:]+$|^\[[0-9A-Fa-f:]+\]$/.test(listenAddress)) return this.fail(res, 400, `listen must be an IP address, got "${listenAddress}"`);
    const source = this.authorize(gateway, username, res);
    if (!source) return;
    const variant = { prefix, listenAddress };
    const variantKey = `${prefix}\n${listenAddress}`;
    try {
      this.rendered(source, variant, variantKey);
    } catch (err) {
      return this.fail(res, 400, `cannot render for this agent: ${(err as Error).message}`);
    }
    const pod = boundPod ?? url.searchParams.get('pod') ?? req.socket.remoteAddress ?? 'agent';
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true, 10000);
    const agent: Agent = { gateway, pod, variant, variantKey, res, deltas: url.searchParams.get('delta') === '1' };
    // A pod that reconnects replaces its old stream (the old socket may not have closed yet).
    for (const a of this.agents) if (a.gateway === gateway && a.pod === pod) this.agents.delete(a), a.res.end();
    this.agents.add(agent);
    const have = url.searchParams.get('have') ?? undefined;
    const r = this.rendered(source, variant, variantKey);
    if (have && have === r.version) {
      agent.sent = r.version;
      this.write(agent, { type: 'current', version: r.version });
    } else this.push(agent, source);
    this.o.log.info('agent connected', { component: 'configserver', gateway, pod, version: agent.sent });
    res.on('close', () => {
      if (!this.agents.delete(agent)) return;
      this.o.log.info('agent disconnected', { component: 'configserver', gateway, pod });
      // Its report no longer speaks for a running data plane.
      if (![...this.agents].some((a) => a.gateway === gateway && a.pod === pod)) this.reports.get(gateway)?.delete(pod);
      this.recompute();
    });
    this.recompute();
  }

  private async report(req: http.IncomingMessage, res: http.ServerResponse, username: string): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) return this.fail(res, 413, 'report too large');
      chunks.push(c as Buffer);
    }
    let body: ApplyReport;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return this.fail(res, 400, 'body must be JSON');
    }
    if (typeof body?.gateway !== 'string' || typeof body.pod !== 'string' || typeof body.version !== 'string' || typeof body.ok !== 'boolean') {
      return this.fail(res, 400, 'body must be {gateway, pod, version, ok, message?}');
    }
    if (!this.authorize(body.gateway, username, res)) return;
    const connected = [...this.agents].some((a) => a.gateway === body.gateway && a.pod === body.pod);
    if (connected) {
      let byPod = this.reports.get(body.gateway);
      if (!byPod) this.reports.set(body.gateway, (byPod = new Map()));
      const heldPorts = readHeldPorts(body.heldPorts);
      byPod.set(body.pod, {
        gateway: body.gateway,
        pod: body.pod,
        version: body.version,
        ok: body.ok,
        message: typeof body.message === 'string' ? body.message.slice(0, 4000) : undefined,
        ...(heldPorts.length > 0 ? { heldPorts } : {}),
      });
      (body.ok ? this.o.log.info : this.o.log.warn).call(this.o.log, body.ok ? 'agent applied a configuration' : 'agent could not apply a configuration', {
        component: 'configserver',
        gateway: body.gateway,
        pod: body.pod,
        version: body.version,
        message: body.message,
      });
      this.recompute();
    }
    res.writeHead(204);
    res.end();
  }
}

/** The frame taking an agent from `base` to `r` (the same for every agent on `base`: cached). */
function deltaLine(base: Rendered, r: Rendered): string {
  let line = r.deltas?.get(base.version);
  if (line === undefined) {
    line = JSON.stringify({ type: 'delta', version: r.version, base: base.version, files: makeDelta(base.files, r.files) } satisfies ConfigFrame) + '\n';
    (r.deltas ??= new Map()).set(base.version, line);
  }
  return line;
}
