/**
 * Helpers for the policy e2e tests: policy manifests as a user writes them, requests that
 * record when they finish (and from which loopback source address), and backends that misbehave
 * on purpose (a huge response header, a slow stream).
 */
import * as http from 'http';
import { promises as fs } from 'fs';
import * as path from 'path';
import type { Manifest } from '../support/manifests';
import { eventually } from '../support/http';

export const POLICY_API = 'gateway.portcullis.dev/v1alpha1';
const GROUP = 'gateway.networking.k8s.io';

export type TargetKind = 'Gateway' | 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute' | 'TCPRoute' | 'UDPRoute';
export const target = (name: string, kind: TargetKind = 'HTTPRoute') => ({ group: GROUP, kind, name });

function meta(name: string, creationTimestamp?: string): Manifest {
  return { name, ...(creationTimestamp ? { creationTimestamp } : {}) };
}

export interface RateRule {
  key?: string;
  rate: string;
  burst?: number;
  zoneSize?: string;
}

export function rateLimitPolicy(
  name: string,
  targets: ReturnType<typeof target>[],
  rules: RateRule[],
  extra: { dryRun?: boolean; logLevel?: string; rejectCode?: number; creationTimestamp?: string } = {},
): Manifest {
  const { creationTimestamp, ...rest } = extra;
  return {
    apiVersion: POLICY_API,
    kind: 'RateLimitPolicy',
    metadata: meta(name, creationTimestamp),
    spec: {
      targetRefs: targets,
      rateLimit: { local: { rules: rules.map((r) => ({ key: '$binary_remote_addr', ...r })) }, ...rest },
    },
  };
}

export function proxySettingsPolicy(name: string, targets: ReturnType<typeof target>[], buffering: Manifest): Manifest {
  return { apiVersion: POLICY_API, kind: 'ProxySettingsPolicy', metadata: meta(name), spec: { targetRefs: targets, buffering } };
}

export function clientSettingsPolicy(name: string, targetRef: ReturnType<typeof target>, maxSize: string): Manifest {
  return { apiVersion: POLICY_API, kind: 'ClientSettingsPolicy', metadata: meta(name), spec: { targetRef, body: { maxSize } } };
}

export interface Timed {
  status: number;
  /** ms from `start` until the response ended. */
  endMs: number;
  /** ms from `start` until the first body byte (undefined: empty body). */
  firstByteMs?: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

export interface TimedOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Source address of the client socket (127.0.0.2, 127.0.0.3 ... are loopback too). */
  localAddress?: string;
  /** Reference time for endMs (default: when this request starts). */
  start?: number;
  timeoutMs?: number;
}

/** One request on its own connection, timed. */
export function timedRequest(port: number, urlPath: string, o: TimedOptions = {}): Promise<Timed> {
  const start = o.start ?? Date.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(o.headers ?? {}) };
    if (o.body !== undefined) headers['content-length'] = Buffer.byteLength(o.body);
    const req = http.request(
      { host: '127.0.0.1', port, path: urlPath, method: o.method ?? (o.body !== undefined ? 'POST' : 'GET'), headers, agent: false, localAddress: o.localAddress, timeout: o.timeoutMs ?? 15000 },
      (res) => {
        const chunks: Buffer[] = [];
        let firstByteMs: number | undefined;
        res.on('data', (c: Buffer) => {
          if (firstByteMs === undefined) firstByteMs = Date.now() - start;
          chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, endMs: Date.now() - start, firstByteMs, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to :${port}${urlPath} timed out`)));
    req.on('error', reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

/** `n` requests fired together (each on its own connection); results in completion order. */
export async function volley(port: number, urlPath: string, n: number, o: TimedOptions = {}): Promise<Timed[]> {
  const start = Date.now();
  const results = await Promise.all(Array.from({ length: n }, () => timedRequest(port, urlPath, { ...o, start })));
  return results.sort((a, b) => a.endMs - b.endMs);
}

export const statuses = (rs: Timed[]) => rs.map((r) => r.status).sort();

/** Waits until nginx's error log in the state dir has a line matching `re`; returns it. */
export async function errorLogLine(stateDir: string, re: RegExp, timeoutMs = 10000): Promise<string> {
  const file = path.join(stateDir, 'nginx', 'logs', 'error.log');
  const text = await eventually(
    () => fs.readFile(file, 'utf8').catch(() => ''),
    (t) => t.split('\n').some((l) => re.test(l)),
    timeoutMs,
    100,
  );
  return text.split('\n').find((l) => re.test(l))!;
}

export interface TestBackend {
  port: number;
  /** When the backend finished its last response (Date.now()). */
  lastEnd(): number;
  close(): Promise<void>;
}

/** A backend whose handler is given; on loopback, port from the OS. */
export async function startBackend(handler: http.RequestListener, onEnd?: () => void): Promise<TestBackend> {
  let lastEnd = 0;
  const server = http.createServer((req, res) => {
    res.on('finish', () => {
      lastEnd = Date.now();
      onEnd?.();
    });
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    lastEnd: () => lastEnd,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function ipAccessPolicy(name: string, targets: ReturnType<typeof target>[], spec: { allow?: string[]; deny?: string[]; clientAddress?: { source: string; trustedCIDRs?: string[] } }): Manifest {
  return { apiVersion: POLICY_API, kind: 'IPAccessPolicy', metadata: meta(name), spec: { targetRefs: targets, ...spec } };
}
