/**
 * One webhook HTTP request under the allowed-host list: node:http/https with a DNS lookup that
 * hands the socket only allowed addresses (so the check is on the address connected to, not a
 * second resolution a rebinding DNS could answer differently), IP-literal hosts checked before
 * connecting, and redirects followed by hand (at most 10, as Go's client) with the same check
 * on each hop. Go's rules for a redirect: 301/302/303 turn into a GET without a body,
 * 307/308 keep both; Authorization is not forwarded to another host.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { HostNotAllowedError, type HostAllowList } from './allowed-hosts';

export interface GuardedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  allow: HostAllowList;
}

export interface GuardedResponse {
  status: number;
  /** URL of the last hop. */
  url: string;
}

const MAX_REDIRECTS = 10;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** dns.lookup, keeping only the addresses the list allows; none allowed is the refusal. */
function guardedLookup(allow: HostAllowList, host: string) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const allowed = allow.allowsHostName(host) ? addresses : addresses.filter((a) => allow.allowsAddress(a.address));
      if (!allowed.length) return callback(new HostNotAllowedError(host, addresses[0]?.address ?? ''), '');
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0].address, allowed[0].family);
    });
  };
}

function once(req: GuardedRequest, url: URL, signal: AbortSignal): Promise<{ status: number; location?: string }> {
  const host = url.hostname;
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (net.isIP(bare) && !req.allow.allowsHostName(host)) return Promise.reject(new HostNotAllowedError(bare, bare));
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const r = mod.request(
      url,
      {
        method: req.method,
        headers: req.body !== undefined ? { ...req.headers, 'Content-Length': String(Buffer.byteLength(req.body)) } : req.headers,
        lookup: guardedLookup(req.allow, bare) as unknown as net.LookupFunction,
        signal,
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Sends the request; throws HostNotAllowedError for a refused hop, or the network error. */
export async function guardedRequest(req: GuardedRequest): Promise<GuardedResponse> {
  const signal = AbortSignal.timeout(req.timeoutMs);
  let url = new URL(req.url);
  let current = req;
  for (let hop = 0; ; hop++) {
    const res = await once(current, url, signal);
    if (![301, 302, 303, 307, 308].includes(res.status) || !res.location) return { status: res.status, url: url.toString() };
    if (hop >= MAX_REDIRECTS) throw new Error(`stopped after ${MAX_REDIRECTS} redirects`);
    const next = new URL(res.location, url);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new Error(`redirect to unsupported protocol ${next.protocol}`);
    const headers = { ...current.headers };
    if (next.host !== url.host) delete headers.Authorization;
    if (res.status === 307 || res.status === 308) current = { ...current, headers };
    else {
      delete headers['Content-Type'];
      current = { ...current, method: current.method === 'HEAD' ? 'HEAD' : 'GET', headers, body: undefined };
    }
    url = next;
  }
}
