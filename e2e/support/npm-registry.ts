/**
 * A tiny npm-registry-compatible server for tests that run package tools without the internet:
 * it answers GET /{name} (and /@scope%2fname) with a packument built from a version list, the
 * part of the registry API Renovate's npm datasource reads. A test fixture, not a product part.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface NpmRegistry {
  url: string;
  /** Packuments served so far, by name (a rerun that reads them shows the lookups happened). */
  requests: string[];
  /** Sets the versions of `name` (oldest first); the last one is `latest`. */
  publish(name: string, versions: string[]): void;
  close(): Promise<void>;
}

export async function startNpmRegistry(): Promise<NpmRegistry> {
  const packages = new Map<string, string[]>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').split('?')[0].slice(1));
    requests.push(name);
    const versions = packages.get(name);
    if (req.method !== 'GET' || !versions) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const time: Record<string, string> = {};
    const entries: Record<string, unknown> = {};
    versions.forEach((v, i) => {
      time[v] = new Date(Date.UTC(2024, 0, 1 + i)).toISOString();
      entries[v] = { name, version: v, dist: { tarball: `http://registry.invalid/${name}/-/${name}-${v}.tgz` } };
    });
    const body = { name, 'dist-tags': { latest: versions[versions.length - 1] }, versions: entries, time, repository: { type: 'git', url: `https://example.invalid/${name}.git` } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    publish(name, versions) {
      packages.set(name, versions);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
