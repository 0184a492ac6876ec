/**
 * A listening Fastify server for route tests, with an inject-like helper over real HTTP
 * (fastify.inject cannot run under jest here: light-my-request's `cookie` dependency is ESM).
 */
import type { FastifyInstance } from 'fastify';

export interface TestResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json(): any;
}

export interface RequestOptions {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  payload?: unknown;
}

export async function listen(app: FastifyInstance): Promise<(opts: RequestOptions | string) => Promise<TestResponse>> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return async (opts) => {
    const o: RequestOptions = typeof opts === 'string' ? { url: opts } : opts;
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    let body: string | undefined;
    if (o.payload !== undefined) {
      if (typeof o.payload === 'string') body = o.payload;
      else {
        body = JSON.stringify(o.payload);
        headers['content-type'] ??= 'application/json';
      }
    }
    const res = await fetch(base + o.url, { method: o.method ?? 'GET', headers, body });
    const text = await res.text();
    return {
      statusCode: res.status,
      headers: Object.fromEntries(res.headers.entries()),
      body: text,
      json: () => JSON.parse(text),
    };
  };
}
