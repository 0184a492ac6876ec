/**
 * Gitea binds API bodies by Content-Type: JSON, or HTML form fields for
 * application/x-www-form-urlencoded (`curl -d name=x`). Repeated keys become arrays; the route
 * schemas then coerce strings to booleans and numbers.
 */
import type { FastifyInstance } from 'fastify';

export function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export default async function formBody(app: FastifyInstance) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, parseForm(body as string));
  });
}
