import * as http from 'http';

/** What an echo backend answers: its own name and the request exactly as it reached it. */
export interface EchoReply {
  backend: string;
  method: string;
  /** Path without the query string. */
  path: string;
  /** The request target as received (path + query). */
  url: string;
  /** Query parameters; a repeated name gives an array. */
  query: Record<string, string | string[]>;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
}

export interface EchoBackend {
  name: string;
  host: string;
  port: number;
  url: string;
  /** Requests received so far. */
  requests: EchoReply[];
  close(): Promise<void>;
}

/**
 * An HTTP server on loopback that answers every request with 200 and an EchoReply as JSON,
 * so a test can tell which backend a gateway chose and what the gateway forwarded.
 */
export async function startEchoBackend(name: string, options: { host?: string; port?: number } = {}): Promise<EchoBackend> {
  const host = options.host ?? '127.0.0.1';
  const requests: EchoReply[] = [];
  const server = http.createServer((req, res) => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const query: Record<string, string | string[]> = {};
    if (q >= 0) {
      for (const [k, v] of new URLSearchParams(target.slice(q + 1))) {
        const prev = query[k];
        query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
      }
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    const reply: EchoReply = { backend: name, method: req.method ?? '', path: q >= 0 ? target.slice(0, q) : target, url: target, query, headers };
    requests.push(reply);
    // Drain the body so keepalive connections stay usable.
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify(reply);
      const send = () => {
        if (res.destroyed) return;
        // As the conformance echo server: X-Echo-Set-Header "Name:value,Name2:value2" sets response headers.
        for (const pair of (headers['x-echo-set-header'] ?? '').split(',')) {
          const colon = pair.indexOf(':');
          if (colon > 0) res.setHeader(pair.slice(0, colon).trim(), pair.slice(colon + 1).trim());
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-echo-backend': name });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      // As the Gateway API conformance echo server: X-Request-Delay ("500ms", "2s") delays the answer.
      const delay = /^(\d+)(ms|s)$/.exec(headers['x-request-delay'] ?? '');
      if (delay) setTimeout(send, Number(delay[1]) * (delay[2] === 's' ? 1000 : 1));
      else send();
    });
  });
  server.keepAliveTimeout = 65000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    name,
    host,
    port,
    url: `http://${host}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
