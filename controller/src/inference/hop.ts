/**
 * The inference hop: a small HTTP server next to nginx (on a unix socket) for rules whose
 * backends are InferencePools. nginx has already matched the route, applied rate limits, read
 * the whole body (413 over the body limit) when it hands the request over with the pool's
 * description (X-Portcullis-Inference, model/inference.ts). The hop then
 *   1. asks the pool's picker: an external EPP over ext_proc (picker-client.ts), or the
 *      built-in one in-process (picker/builtin.ts);
 *   2. answers an ImmediateResponse as is; on a picker failure answers 503 (FailClose) or
 *      picks any ready endpoint of the pool (FailOpen);
 *   3. proxies the original request, body intact (or as the picker rewrote it), with the headers the picker set, to the
 *      first destination that accepts a connection (the rest of the list are fallbacks), and
 *      streams the response back chunk by chunk (server-sent events stay token by token).
 */
import * as http from 'http';
import * as http2 from 'http2';
import { randomUUID } from 'crypto';
import { promises as fs } from 'fs';
import type { Logger } from '../log';
import { INFERENCE_HEADER, parseInferencePoolValue, type InferencePoolSpec } from '../model/inference';
import { BuiltinPicker } from './picker/builtin';
import { PickerClients, type PickerClientOptions } from './picker-client';
import { PickerError, type PickerAnswer, type PickerStream, type ResponseTarget } from './picker-stream';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization']);
const POOL_HEADER = INFERENCE_HEADER.toLowerCase();
/** Response headers a picker's mutation may not touch: the hop frames the response itself. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The upstream response's body events, whichever protocol carried it. */
interface UpstreamBody {
  onData(cb: (c: Buffer) => void): void;
  /** The body ended, with the trailers it had (empty: none). */
  onEnd(cb: (trailers: [string, string][]) => void): void;
  onError(cb: () => void): void;
}

function pairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let j = 0; j < raw.length; j += 2) out.push([raw[j].toLowerCase(), raw[j + 1]]);
  return out;
}

function flat(headers: [string, string][]): string[] {
  const out: string[] = [];
  for (const [k, v] of headers) out.push(k, v);
  return out;
}

export interface HopOptions {
  /** Unix socket path (what nginx's upstream names), or a TCP port on loopback for tests. */
  socket?: string;
  port?: number;
  picker?: PickerClientOptions;
  log: Logger;
  /** Built-in picker scrape interval (default 50 ms). */
  scrapeIntervalMs?: number;
}

function shuffled<T>(list: T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function splitHostPort(endpoint: string): { host: string; port: number } | undefined {
  const colon = endpoint.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const port = Number(endpoint.slice(colon + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: endpoint.slice(0, colon).replace(/^\[|\]$/g, ''), port };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** HTTP/2 headers (pseudo-headers left out) as name/value pairs. */
function h2Pairs(h: http2.IncomingHttpHeaders): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(h)) {
    if (k.startsWith(':') || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.push([k, String(one)]);
  }
  return out;
}

/** A request whose picker takes part in the response. */
interface Exchange {
  stream: PickerStream;
  failOpen: boolean;
  feed?: { abort(): void };
}

export class InferenceHop {
  private server?: http.Server;
  private readonly pickers: PickerClients;
  readonly builtin: BuiltinPicker;
  /** Connections to model servers are kept and reused. */
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 });

  constructor(private readonly options: HopOptions) {
    this.pickers = new PickerClients(options.picker);
    this.builtin = new BuiltinPicker({ intervalMs: options.scrapeIntervalMs });
  }

  async listen(): Promise<string> {
    const server = http.createServer({ maxHeaderSize: 1 << 20, keepAliveTimeout: 75_000 }, (req, res) => void this.handle(req, res));
    this.server = server;
    if (this.options.socket) {
      await fs.rm(this.options.socket, { force: true });
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.options.socket, () => resolve()));
      // nginx's workers may run as another user than the hop.
      await fs.chmod(this.options.socket, 0o666);
      return this.options.socket;
    }
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.options.port ?? 0, '127.0.0.1', () => resolve()));
    return `127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    this.builtin.close();
    this.pickers.close();
    for (const s of this.sessions.values()) s.close();
    this.agent.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections?.();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const value = req.headers[POOL_HEADER];
    const spec = typeof value === 'string' ? parseInferencePoolValue(value) : undefined;
    if (!spec) {
      this.reply(res, 500, 'request reached the inference hop without a pool description');
      return;
    }
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return; // client went away
    }
    // The original request's headers, in order and with repeats (rawHeaders), minus hop-by-hop ones.
    const headers: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i].toLowerCase();
      if (HOP_BY_HOP.has(name) || name === POOL_HEADER || name === 'content-length') continue;
      headers.push([name, req.rawHeaders[i + 1]]);
    }
    if (!headers.some(([k]) => k === 'x-request-id')) headers.push(['x-request-id', randomUUID()]);

    const { answer, stream, release } = await this.ask(spec, req, headers, body);
    // The built-in picker counts the request against its pod until the response has ended.
    if (release) res.once('close', release);
    if (answer.kind === 'immediate') {
      stream?.close();
      this.immediate(res, answer);
      return;
    }
    // The picker takes part in the response unless it said otherwise (mode_override).
    let exchange: Exchange | undefined;
    if (stream?.wantsResponse()) exchange = { stream, failOpen: spec.failureMode === 'FailOpen' };
    // A picker that turned the response phase off gets no message more, but its stream stays
    // open until the response has ended: its end tells the picker the request is no longer
    // in flight (so it can count load between two scrapes of the pods' metrics).
    else if (stream) res.once('close', () => stream.close());
    res.on('close', () => {
      if (!res.writableFinished) exchange?.feed?.abort();
    });
    // A picker may rewrite the body (e.g. the model name): the pod gets its version.
    if (answer.body) body = answer.body;
    const remove = new Set(answer.removeHeaders);
    const setNames = new Set(answer.setHeaders.map(([k]) => k));
    const out: [string, string][] = headers.filter(([k]) => !remove.has(k) && !setNames.has(k));
    for (const [k, v] of answer.setHeaders) if (!k.startsWith(':') && k !== 'content-length' && !HOP_BY_HOP.has(k)) out.push([k, v]);
    if (body.length > 0 || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') out.push(['content-length', String(body.length)]);
    if (spec.h2c) this.forwardH2c(req, res, answer.endpoints, out, body, 0, exchange);
    else this.forward(req, res, answer.endpoints, out, body, 0, exchange);
  }

  private immediate(res: http.ServerResponse, answer: Extract<PickerAnswer, { kind: 'immediate' }>): void {
    const h: Record<string, string> = {};
    for (const [k, v] of answer.headers) if (!HOP_BY_HOP.has(k) && !k.startsWith(':') && k !== 'content-length') h[k] = v;
    h['content-length'] = String(answer.body.length);
    res.writeHead(answer.status, h);
    res.end(answer.body);
  }

  /**
   * Sends the upstream's response to the client: straight, or through the picker's response
   * phase (headers, each body chunk as it comes, the end or the trailers; picker-stream.ts).
   */
  private relay(req: http.IncomingMessage, res: http.ServerResponse, status: number, headers: [string, string][], served: string, body: UpstreamBody, exchange: Exchange | undefined): void {
    if (!exchange) {
      res.writeHead(status, flat(headers));
      res.flushHeaders();
      body.onData((c) => res.write(c));
      body.onEnd(() => res.end());
      body.onError(() => res.destroy());
      return;
    }
    const length = headers.find(([k]) => k === 'content-length')?.[1];
    const noBody = req.method === 'HEAD' || status === 204 || status === 304 || length === '0';
    const target: ResponseTarget = {
      writeHead: (s, h) => {
        res.writeHead(s, flat(h));
        res.flushHeaders();
      },
      write: (c) => res.write(c),
      // Trailers are the picker's to see; nginx, in front, passes none to the client.
      end: () => res.end(),
      fail: (s, message) => {
        this.options.log.warn('endpoint picker failed during the response', { error: message, failureMode: exchange.failOpen ? 'FailOpen' : 'FailClose' });
        this.reply(res, s, message);
      },
      immediate: (a) => this.immediate(res, a),
    };
    const feed = exchange.stream.respond(status, headers, noBody, served, exchange.failOpen, target, FRAMING);
    exchange.feed = feed;
    body.onData((c) => feed.chunk(c));
    body.onEnd((t) => feed.end(t));
    body.onError(() => {
      feed.abort();
      res.destroy();
    });
  }

  /** HTTP/2 sessions to h2c pods (appProtocol kubernetes.io/h2c), one per endpoint, reused. */
  private readonly sessions = new Map<string, http2.ClientHttp2Session>();

  private session(endpoint: string, target: { host: string; port: number }): http2.ClientHttp2Session {
    let s = this.sessions.get(endpoint);
    if (!s || s.closed || s.destroyed) {
      const host = target.host.includes(':') ? `[${target.host}]` : target.host;
      s = http2.connect(`http://${host}:${target.port}`);
      const created = s;
      const drop = () => {
        if (this.sessions.get(endpoint) === created) this.sessions.delete(endpoint);
      };
      s.on('close', drop);
      s.on('error', drop);
      s.on('goaway', drop);
      this.sessions.set(endpoint, s);
    }
    return s;
  }

  /** forward() for h2c pods: the same request as an HTTP/2 stream (prior knowledge, no TLS). */
  private forwardH2c(req: http.IncomingMessage, res: http.ServerResponse, endpoints: string[], headers: [string, string][], body: Buffer, i: number, exchange?: Exchange): void {
    const target = endpoints[i] !== undefined ? splitHostPort(endpoints[i]) : undefined;
    if (!target) {
      this.reply(res, 502, `no chosen endpoint accepted the HTTP/2 connection (${endpoints.join(',') || 'none'})`);
      return;
    }
    const h: http2.OutgoingHttpHeaders = { ':method': req.method ?? 'GET', ':path': req.url ?? '/', ':scheme': 'http' };
    for (const [k, v] of headers) {
      if (k === 'host') h[':authority'] = v;
      else if (h[k] === undefined) h[k] = v;
      else h[k] = ([] as string[]).concat(h[k] as string | string[], v);
    }
    let responded = false;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.session(endpoints[i], target).request(h);
    } catch {
      this.forwardH2c(req, res, endpoints, headers, body, i + 1, exchange);
      return;
    }
    let trailers: [string, string][] = [];
    stream.on('trailers', (t) => (trailers = h2Pairs(t)));
    stream.on('response', (rh) => {
      responded = true;
      this.relay(req, res, Number(rh[':status'] ?? 502), h2Pairs(rh), endpoints[i], {
        onData: (cb) => stream.on('data', cb),
        onEnd: (cb) => stream.on('end', () => cb(trailers)),
        onError: () => undefined,
      }, exchange);
    });
    stream.on('error', () => {
      if (responded) {
        exchange?.feed?.abort();
        res.destroy();
      } else this.forwardH2c(req, res, endpoints, headers, body, i + 1, exchange);
    });
    res.on('close', () => {
      if (!res.writableFinished) stream.close();
    });
    stream.end(body);
  }

  /** The picker's answer, or what the failure mode makes of its failure. */
  private async ask(spec: InferencePoolSpec, req: http.IncomingMessage, headers: [string, string][], body: Buffer): Promise<{ answer: PickerAnswer; stream?: PickerStream; release?: () => void }> {
    let stream: PickerStream | undefined;
    try {
      if (spec.picker === 'builtin') {
        const lower: Record<string, string> = {};
        for (const [k, v] of headers) lower[k] = v;
        const d = this.builtin.pick(spec.pool, spec.endpoints, lower);
        if (d.kind === 'reject') return { answer: { kind: 'immediate', status: d.status, headers: [['content-type', 'text/plain']], body: Buffer.from(`${d.message}\n`) } };
        return { answer: { kind: 'route', endpoints: d.endpoints, setHeaders: [['x-gateway-destination-endpoint', d.endpoints.join(',')]], removeHeaders: [] }, release: d.release };
      }
      const pseudo: [string, string][] = [
        [':method', req.method ?? 'GET'],
        [':path', req.url ?? '/'],
        [':authority', req.headers.host ?? ''],
        [':scheme', (req.headers['x-forwarded-proto'] as string | undefined) ?? 'http'],
      ];
      stream = this.pickers.open(spec.picker);
      return { answer: await stream.request([...pseudo, ...headers, ['content-length', String(body.length)]], body), stream };
    } catch (e) {
      stream?.close();
      const message = e instanceof PickerError ? e.message : `endpoint picker: ${(e as Error).message}`;
      if (spec.failureMode === 'FailOpen' && spec.endpoints.length > 0) {
        this.options.log.warn('endpoint picker failed; FailOpen sends the request to a ready endpoint of the pool', { pool: spec.pool, error: message });
        return { answer: { kind: 'route', endpoints: shuffled(spec.endpoints).slice(0, 3), setHeaders: [], removeHeaders: [] } };
      }
      this.options.log.warn('endpoint picker failed; FailClose answers 503', { pool: spec.pool, error: message });
      return { answer: { kind: 'immediate', status: 503, headers: [['content-type', 'text/plain']], body: Buffer.from(`${message}\n`) } };
    }
  }

  /** Proxy to endpoints[i]; a connection failure before any response moves on to the next one. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse, endpoints: string[], headers: [string, string][], body: Buffer, i: number, exchange?: Exchange): void {
    const target = endpoints[i] !== undefined ? splitHostPort(endpoints[i]) : undefined;
    if (!target) {
      this.reply(res, 502, i === 0 ? `the endpoint picker chose no usable endpoint (${endpoints.join(',') || 'none'})` : `no chosen endpoint accepted the connection (${endpoints.join(',')})`);
      return;
    }
    const flat: string[] = [];
    for (const [k, v] of headers) flat.push(k, v);
    const up = http.request({ host: target.host, port: target.port, method: req.method, path: req.url, headers: flat, agent: this.agent });
    let responded = false;
    up.on('socket', (s) => s.setNoDelay(true));
    up.on('response', (r) => {
      responded = true;
      const h = pairs(r.rawHeaders).filter(([k]) => k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding');
      this.relay(req, res, r.statusCode ?? 502, h, endpoints[i], {
        onData: (cb) => r.on('data', cb),
        onEnd: (cb) => r.on('end', () => cb(pairs(r.rawTrailers))),
        onError: (cb) => r.on('error', cb),
      }, exchange);
    });
    up.on('error', (e: NodeJS.ErrnoException) => {
      if (responded) {
        res.destroy();
        return;
      }
      this.options.log.debug('endpoint refused the request; trying the next one', { endpoint: endpoints[i], error: e.message });
      this.forward(req, res, endpoints, headers, body, i + 1, exchange);
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(body);
  }

  private reply(res: http.ServerResponse, status: number, message: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(message) + 1 });
    res.end(`${message}\n`);
  }
}
