/**
 * A small REST client for the Kubernetes API: list, get, status update and watch of any kind by
 * URL. @kubernetes/client-node loads the configuration (kubeconfig file, in-cluster service
 * account) and does authentication (client certificates, bearer and exec/OIDC tokens); the
 * requests themselves go through one keep-alive https.Agent, because the watched kinds span
 * core, discovery, Gateway API and our own CRDs, and client-node's typed APIs are per kind (and
 * have no generic status subresource) where the provider needs one code path for all of them.
 * Every request is counted by verb (metrics, and the tests' request accounting).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { createInterface } from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The connection failed or broke (no HTTP answer): retried with backoff by the callers. */
export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

export interface WatchHandle {
  abort(): void;
}

export type RequestVerb = 'list' | 'watch' | 'get' | 'create' | 'update' | 'patch' | 'delete';

export interface KubeClientOptions {
  /** kubeconfig file; else KUBECONFIG / ~/.kube/config, else the in-cluster service account. */
  kubeconfig?: string;
  context?: string;
  /** Per-request timeout for everything but watches (ms). */
  timeoutMs?: number;
}

interface AuthState {
  /** Lists, gets and writes: a bounded pool of kept-alive connections. */
  agent: http.Agent;
  /**
   * Watches, each holding its connection until the server ends it (minutes). They get their own
   * pool without a bound: in the shared one, as many watches as its sockets left every status
   * write and list queued until a watch ended.
   */
  watchAgent: http.Agent;
  headers: Record<string, string>;
  until: number;
}

/** How long authentication options are reused before asking client-node again (token rotation). */
const AUTH_TTL_MS = 60_000;

export function loadKubeConfig(options: KubeClientOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  if (options.context) kc.setCurrentContext(options.context);
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured (pass --kubeconfig, set KUBECONFIG, or run in a pod)');
  return kc;
}

export class KubeClient {
  readonly server: URL;
  private readonly kc: KubeConfig;
  private readonly timeoutMs: number;
  private auth?: AuthState;
  private readonly counts = new Map<string, number>();
  private readonly requestListeners: ((verb: RequestVerb, path: string, status: number) => void)[] = [];

  constructor(kc: KubeConfig, options: { timeoutMs?: number } = {}) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('no current cluster in the Kubernetes configuration');
    this.server = new URL(cluster.server);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  static fromOptions(options: KubeClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(options), { timeoutMs: options.timeoutMs });
  }

  /** Requests sent so far, by verb ("update", "watch", ...). */
  requestCounts(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  onRequest(listener: (verb: RequestVerb, path: string, status: number) => void): void {
    this.requestListeners.push(listener);
  }

  private count(verb: RequestVerb, path: string, status: number): void {
    this.counts.set(verb, (this.counts.get(verb) ?? 0) + 1);
    for (const l of this.requestListeners) l(verb, path, status);
  }

  private async authState(): Promise<AuthState> {
    if (this.auth && this.auth.until > Date.now()) return this.auth;
    const opts: https.RequestOptions & { headers: Record<string, string> } = { headers: {} };
    await this.kc.applyToHTTPSOptions(opts);
    const old = this.auth;
    const tls = this.server.protocol === 'https:';
    const sameTls = old && (old.agent as https.Agent).options?.cert === opts.cert && (old.agent as https.Agent).options?.ca === opts.ca;
    const makeAgent = (maxSockets: number) =>
      tls
        ? new https.Agent({ keepAlive: true, maxSockets, ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername })
        : new http.Agent({ keepAlive: true, maxSockets });
    const agent = old && sameTls ? old.agent : makeAgent(16);
    const watchAgent = old && sameTls ? old.watchAgent : makeAgent(Infinity);
    if (old && old.agent !== agent) {
      old.agent.destroy();
      old.watchAgent.destroy();
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(String(opts.auth)).toString('base64')}`;
    this.auth = { agent, watchAgent, headers, until: Date.now() + AUTH_TTL_MS };
    return this.auth;
  }

  private async send(method: string, path: string, body: unknown, timeoutMs: number, watch = false): Promise<http.IncomingMessage & { req: http.ClientRequest }> {
    const auth = await this.authState();
    const { headers } = auth;
    const agent = watch ? auth.watchAgent : auth.agent;
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(
        url,
        {
          method,
          agent,
          headers: {
            ...headers,
            Accept: 'application/json',
            ...(payload !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => resolve(Object.assign(res, { req })),
      );
      if (timeoutMs > 0) {
        req.setTimeout(timeoutMs, () => req.destroy(new ConnectionError(`${method} ${url.pathname}: no answer within ${timeoutMs} ms`)));
      }
      req.on('error', (err) => reject(err instanceof ConnectionError ? err : new ConnectionError(`${method} ${url.pathname}: ${err.message}`)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** A JSON request; non-2xx answers throw ApiError with the server's Status message. */
  async request<T = Record<string, unknown>>(verb: RequestVerb, method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.send(method, path, body, this.timeoutMs);
    const chunks: Buffer[] = [];
    try {
      for await (const c of res) chunks.push(c as Buffer);
    } catch (err) {
      throw new ConnectionError(`${method} ${path}: ${(err as Error).message}`);
    }
    const status = res.statusCode ?? 0;
    this.count(verb, path, status);
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = undefined;
    }
    if (status < 200 || status >= 300) throw apiError(status, json, text, `${method} ${path}`);
    return json as T;
  }

  /**
   * A watch stream: one event per line. `onEnd` is called once, with no error when the server
   * closed the stream normally (timeoutSeconds), with the error otherwise.
   */
  watch(path: string, params: Record<string, string>, onEvent: (e: WatchEvent) => void, onEnd: (err?: Error) => void): WatchHandle {
    let ended = false;
    let res: http.IncomingMessage | undefined;
    let aborted = false;
    const end = (err?: Error) => {
      if (ended) return;
      ended = true;
      onEnd(err);
    };
    const q = new URLSearchParams({ ...params, watch: 'true' });
    this.send('GET', `${path}?${q}`, undefined, 0, true).then(
      (r) => {
        res = r;
        const status = r.statusCode ?? 0;
        this.count('watch', path, status);
        if (aborted) {
          r.destroy();
          return end();
        }
        if (status !== 200) {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            end(apiError(status, json, text, `watch ${path}`));
          });
          r.on('error', (err) => end(new ConnectionError(`watch ${path}: ${err.message}`)));
          return;
        }
        // A silent connection (the API server gone without a FIN) would hang forever: the
        // server sends bookmarks about every minute, so two minutes of silence means dead.
        r.req.setTimeout(120_000, () => r.destroy(new ConnectionError(`watch ${path}: no data for 120 s`)));
        const lines = createInterface({ input: r, crlfDelay: Infinity });
        // readline re-emits the stream's errors: without a listener a cut connection would
        // throw out of the process.
        lines.on('error', (err) => end(aborted ? undefined : new ConnectionError(`watch ${path}: ${err.message}`)));
        lines.on('line', (line) => {
          if (ended || !line) return;
          let e: WatchEvent;
          try {
            e = JSON.parse(line) as WatchEvent;
          } catch {
            return end(new ConnectionError(`watch ${path}: unreadable event`));
          }
          onEvent(e);
        });
        r.on('error', (err) => end(aborted ? undefined : new ConnectionError(`watch ${path}: ${err.message}`)));
        r.on('close', () => end(aborted || r.complete ? undefined : new ConnectionError(`watch ${path}: connection closed`)));
      },
      (err: Error) => end(aborted ? undefined : err),
    );
    return {
      abort: () => {
        aborted = true;
        res?.destroy();
        end();
      },
    };
  }

  close(): void {
    this.auth?.agent.destroy();
    this.auth?.watchAgent.destroy();
    this.auth = undefined;
  }
}

function apiError(status: number, json: unknown, text: string, what: string): ApiError {
  const s = (json ?? {}) as { message?: string; reason?: string };
  return new ApiError(status, s.reason ?? String(status), `${what}: ${status} ${s.message ?? text.slice(0, 200)}`);
}
