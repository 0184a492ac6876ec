/**
 * Model-server load from vLLM-style Prometheus metrics: waiting queue, running requests and
 * KV-cache usage, scraped from each endpoint's /metrics on a fixed interval (50 ms by default,
 * as the upstream endpoint picker does). Other engines' names are read too (SGLang).
 */
import * as http from 'http';

export interface EndpointLoad {
  waiting: number;
  running: number;
  /** 0..1 */
  kvCache: number;
  /** Date.now() of the scrape. */
  at: number;
}

const WAITING = ['vllm:num_requests_waiting', 'sglang:num_queue_reqs'];
const RUNNING = ['vllm:num_requests_running', 'sglang:num_running_reqs'];
const KV_CACHE = ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage'];

/** Sum of each family's samples (a server may label them per model), from the exposition text. */
export function parseLoad(text: string, at = Date.now()): EndpointLoad | undefined {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.charCodeAt(0) === 35 /* # */) continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    if (space < 0) continue;
    const name = brace >= 0 && brace < space ? line.slice(0, brace) : line.slice(0, line.indexOf(' '));
    const value = Number(line.slice(space + 1));
    if (!Number.isFinite(value)) continue;
    sums.set(name, (sums.get(name) ?? 0) + value);
  }
  const first = (names: string[]) => {
    for (const n of names) if (sums.has(n)) return sums.get(n)!;
    return undefined;
  };
  const waiting = first(WAITING);
  const running = first(RUNNING);
  const kvCache = first(KV_CACHE);
  if (waiting === undefined && running === undefined && kvCache === undefined) return undefined;
  return { waiting: waiting ?? 0, running: running ?? 0, kvCache: kvCache ?? 0, at };
}

/** Scrapes a set of endpoints every `intervalMs`; the set can change at any time. */
export class MetricsScraper {
  private readonly loads = new Map<string, EndpointLoad>();
  private readonly busy = new Set<string>();
  private endpoints: string[] = [];
  private timer?: NodeJS.Timeout;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  /** Called as each scrape's load is stored (a picker notes what it had in flight then). */
  onLoad?: (endpoint: string, load: EndpointLoad) => void;

  constructor(
    private readonly intervalMs = 50,
    /** A scrape older than this is no information (the server stopped answering). */
    private readonly staleMs = 2000,
  ) {}

  setEndpoints(endpoints: string[]): void {
    this.endpoints = [...endpoints];
    for (const k of this.loads.keys()) if (!endpoints.includes(k)) this.loads.delete(k);
    // A new endpoint's load is wanted now, not an interval later (the first set comes after start()).
    if (this.timer) for (const ep of this.endpoints) if (!this.loads.has(ep) && !this.busy.has(ep)) this.scrape(ep);
  }

  start(): void {
    if (this.timer) return;
    this.scrapeAll();
    this.timer = setInterval(() => this.scrapeAll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.agent.destroy();
  }

  /** The last fresh load of an endpoint, if any. */
  load(endpoint: string, now = Date.now()): EndpointLoad | undefined {
    const l = this.loads.get(endpoint);
    return l && now - l.at <= this.staleMs ? l : undefined;
  }

  private scrapeAll(): void {
    for (const ep of this.endpoints) if (!this.busy.has(ep)) this.scrape(ep);
  }

  private scrape(endpoint: string): void {
    const colon = endpoint.lastIndexOf(':');
    const host = endpoint.slice(0, colon).replace(/^\[|\]$/g, '');
    const port = Number(endpoint.slice(colon + 1));
    this.busy.add(endpoint);
    const done = () => this.busy.delete(endpoint);
    const req = http.get({ host, port, path: '/metrics', agent: this.agent, timeout: 1000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        done();
        if (res.statusCode !== 200) return;
        const load = parseLoad(Buffer.concat(chunks).toString('utf8'));
        if (load && this.endpoints.includes(endpoint)) {
          this.loads.set(endpoint, load);
          this.onLoad?.(endpoint, load);
        }
      });
      res.on('error', done);
    });
    req.on('timeout', () => req.destroy(new Error('scrape timeout')));
    req.on('error', done);
  }
}
