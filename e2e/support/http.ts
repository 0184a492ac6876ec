import * as http from 'http';

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
}

export interface HttpRequestOptions {
  method?: string;
  /** Sent as the Host header (may carry a port). */
  host?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/**
 * One HTTP/1.1 request on a fresh connection (no keepalive: a reload must not leave us on an
 * old worker). The path is sent exactly as given, query string included.
 */
export function httpRequest(port: number, path: string, options: HttpRequestOptions = {}, address = '127.0.0.1'): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.host) headers.host = options.host;
    const req = http.request(
      { host: address, port, path, method: options.method ?? 'GET', headers, agent: false, timeout: options.timeoutMs ?? 5000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to :${port}${path} timed out`)));
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Which echo backend answered (undefined when the answer did not come from one). */
export async function backendOf(port: number, path: string, options: HttpRequestOptions = {}, address = '127.0.0.1'): Promise<string | number> {
  const res = await httpRequest(port, path, options, address);
  if (res.status === 200 && res.json && typeof res.json.backend === 'string') return res.json.backend;
  return res.status;
}

/** Polls until `check` returns true (or throws the last failure after timeoutMs). */
export async function eventually<T>(fn: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 15000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await fn();
      lastError = undefined;
      if (check(last)) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      if (lastError) throw lastError;
      throw new Error(`condition not met after ${timeoutMs} ms; last value: ${JSON.stringify(last)?.slice(0, 2000)}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
