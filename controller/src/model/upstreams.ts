/**
 * Backends -> upstreams, and a rule's backendRefs -> where its requests go.
 *
 * One upstream per (namespace, name, port) and protocol with the resolved endpoints and keepalive:
 * gRPC backends (GRPCRoute, grpc_pass over h2c) get upstream blocks of their own, because nginx
 * keeps idle connections per upstream block and hands them out by address alone: sharing one
 * with proxy_pass would give an HTTP/1.1 connection to a gRPC call and an h2c one to an HTTP
 * request where an HTTPRoute and a GRPCRoute use the same Service port. Weights
 * become a split_clients on $request_id (random per request) whose buckets name upstreams;
 * weight 0 backends get no bucket. Gateway API: the share of an invalid backend answers 500.
 */
import { isIP } from 'net';
import type { BackendRef } from '../graph/types';
import type { ProxyTarget, SplitClients, TargetRetry, TargetSession, TargetTLS, Upstream } from './types';
import { sessionSignature } from './session';
import { retrySignature } from './retry';
import { inferencePoolValue } from './inference';
import { isInferencePoolRef } from '../graph/inferencepools';
import { contentHash } from './names';

/**
 * Idle connections each worker keeps per upstream, HTTP/1.1 backends (proxy_pass).
 */
export const KEEPALIVE_CONNECTIONS = 64;
/**
 * The same for gRPC backends (grpc_pass). nginx does not multiplex gRPC calls towards a backend:
 * every call in flight holds an h2c connection of its own, so with fewer idle connections kept
 * than calls in flight, the calls beyond them open (and close) a connection each. At 256 calls
 * in flight (h2load, 64 connections x 4 streams, one worker), 64 kept meant ~0.4 connect(2) per
 * call and ~25 % more CPU per call in nginx and the grpc-js backend; 256 kept, none (16 -> 64
 * earlier took nginx from ~90 to ~50 us per call at 64 in flight). A kept slot costs ~150 bytes
 * per worker, and an idle connection is closed after 60 s.
 */
export const GRPC_KEEPALIVE_CONNECTIONS = 256;
/** split_clients values that do not name an upstream. */
export const SPLIT_INVALID = '';
export const SPLIT_NO_ENDPOINTS = '!';

function sanitize(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

/**
 * The system's well-known CAs (BackendTLSPolicy wellKnownCACertificates System): Debian's
 * ca-certificates bundle, which the data-plane image installs.
 */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** Where a CA bundle is written (relative to the config directory), named after its content. */
export function caBundleFile(id: string): string {
  return `secrets/ca_${id}.pem`;
}

/**
 * A backend's TLS settings as the model writes them, with the client certificate of the server's
 * Gateway (once per BackendTLS object and certificate: the graph reuses them).
 */
const targetTlsOf = new WeakMap<NonNullable<BackendRef['tls']>, Map<string, TargetTLS>>();
export function targetTls(b: BackendRef, certificate?: string): TargetTLS | undefined {
  const t = b.tls;
  if (!t || !t.valid) return undefined;
  let byCertificate = targetTlsOf.get(t);
  if (!byCertificate) targetTlsOf.set(t, (byCertificate = new Map()));
  let out = byCertificate.get(certificate ?? '');
  if (!out) {
    out = t.ca ? { name: t.hostname, trusted: caBundleFile(t.ca.id), pem: t.ca.pem } : { name: t.hostname, trusted: SYSTEM_CA_BUNDLE };
    if (t.subjectAltNames) out.san = t.subjectAltNames;
    if (certificate) out.certificate = certificate;
    byCertificate.set(certificate ?? '', out);
  }
  return out;
}

function tlsSignature(t: TargetTLS | undefined): string {
  return t ? `${t.name}|${t.trusted}|${t.certificate ?? ''}|${t.san?.join(' ') ?? ''}` : '';
}

/**
 * Whether the weighted backends of a rule are spoken to differently (TLS to some, plain text or
 * other TLS settings to others): one proxy_pass cannot, so each gets a location of its own.
 */
export function mixedTls(backends: BackendRef[]): boolean {
  let first: string | undefined;
  for (const b of backends) {
    if (!(b.weight > 0) || !b.valid) continue;
    const sig = tlsSignature(targetTls(b));
    if (first === undefined) first = sig;
    else if (sig !== first) return true;
  }
  return false;
}

/** A ProxyTarget as text: equal text, same target (named-location sharing, the model memo). */
export function targetSignature(t: ProxyTarget): string {
  switch (t.kind) {
    case 'upstream':
      return `u:${t.upstream}:${retrySignature(t.retry)}:${sessionSignature(t.session)}:${tlsSignature(t.tls)}`;
    case 'split':
      return `s:${t.variable}:${t.invalidShare}:${t.noEndpointsShare}:${retrySignature(t.retry)}:${sessionSignature(t.session)}:${tlsSignature(t.tls)}`;
    case 'inference':
      return `i:${t.pool ?? ''}:${t.poolVariable ?? ''}:${t.poolInvalidShare}`;
    case 'backends':
      return `d:${t.dispatchVariable}:${t.invalidShare}:${t.noEndpointsShare}`;
    case 'status':
      return `c:${t.code}`;
  }
}

/** targetSignature(a) === targetSignature(b), without making the texts. */
export function sameTarget(a: ProxyTarget, b: ProxyTarget): boolean {
  if (a === b) return true;
  switch (a.kind) {
    case 'upstream':
      return (
        b.kind === 'upstream' &&
        a.upstream === b.upstream &&
        retrySignature(a.retry) === retrySignature(b.retry) &&
        sessionSignature(a.session) === sessionSignature(b.session) &&
        tlsSignature(a.tls) === tlsSignature(b.tls)
      );
    case 'split':
      return (
        b.kind === 'split' &&
        a.variable === b.variable &&
        a.invalidShare === b.invalidShare &&
        a.noEndpointsShare === b.noEndpointsShare &&
        retrySignature(a.retry) === retrySignature(b.retry) &&
        sessionSignature(a.session) === sessionSignature(b.session) &&
        tlsSignature(a.tls) === tlsSignature(b.tls)
      );
    case 'inference':
      return b.kind === 'inference' && (a.pool ?? '') === (b.pool ?? '') && (a.poolVariable ?? '') === (b.poolVariable ?? '') && a.poolInvalidShare === b.poolInvalidShare;
    case 'backends':
      return b.kind === 'backends' && a.dispatchVariable === b.dispatchVariable && a.invalidShare === b.invalidShare && a.noEndpointsShare === b.noEndpointsShare;
    case 'status':
      return b.kind === 'status' && a.code === b.code;
  }
}

/** "namespace/name:port" of a backend, made once per BackendRef object (the graph reuses them). */
const backendKeys = new WeakMap<BackendRef, string>();
function backendKey(b: BackendRef): string {
  let key = backendKeys.get(b);
  if (key === undefined) {
    key = `${b.namespace}/${b.name}:${b.port ?? ''}`;
    backendKeys.set(b, key);
  }
  return key;
}

/** The backend's usable endpoints as upstream servers (once per BackendRef object: the graph reuses them). */
const servers = new WeakMap<BackendRef, Upstream['servers']>();
function serversOf(b: BackendRef): Upstream['servers'] {
  let out = servers.get(b);
  if (out === undefined) {
    const seen = new Set<string>();
    out = [];
    for (const e of b.endpoints) {
      if (isIP(e.address) === 0 || !Number.isInteger(e.port) || e.port <= 0 || e.port >= 65536) continue;
      const k = `${e.address}:${e.port}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ address: e.address, port: e.port });
    }
    servers.set(b, out);
  }
  return out;
}

/**
 * "b_<namespace>__<name>_<port>" ("g_" for gRPC; "_t<tries>" after it for a retrying rule's
 * upstream, which no port can read like; "_s<session>" for one that hashes a session token,
 * named after the session), readable in the config. Kubernetes names are
 * DNS labels ([a-z0-9-], no leading or trailing "-"): with single "-" only, turning "-" into "_"
 * loses nothing and "__" separates; any other name gets a hash of the backend's key as well, so
 * a name always stands for one backend whatever else the build holds.
 */
function upstreamName(b: BackendRef, key: string, grpc: boolean, tries: number, session?: TargetSession, tls?: TargetTLS): string {
  const readable = `${grpc ? 'g' : 'b'}_${sanitize(b.namespace)}__${sanitize(b.name)}_${b.port ?? 0}${tries > 1 ? `_t${tries}` : ''}${session ? `_s${session.key.slice(7, 15)}` : ''}${tls ? `_x${contentHash(tlsSignature(tls))}` : ''}`;
  return PLAIN_LABEL.test(b.namespace) && PLAIN_LABEL.test(b.name) ? readable : `${readable}_${contentHash(key)}`;
}
const PLAIN_LABEL = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A split_clients over `buckets` (on $request_id, or a session's token), named after them. */
function splitOf(key: string, buckets: SplitClients['buckets'], hashed = '$request_id'): SplitClients {
  return { key: hashed, variable: `$ps_${contentHash(key)}`, buckets };
}

/**
 * Upstreams and split_clients shared by all servers, each named after what it stands for (the
 * backend, the buckets): see model/uses.ts.
 */
export class Upstreams {
  private readonly byKey = new Map<string, Upstream>();
  private readonly splits = new Map<string, SplitClients>();
  /** Where the blocks used are noted too, while a part of the model is recorded (model/uses.ts). */
  sink?: { upstreams: [string, Upstream][]; splits: [string, SplitClients][]; inference: boolean };

  /** Registers `upstream` under `key` unless one is (same key, same name: the same backend). */
  useUpstream(key: string, upstream: Upstream): Upstream {
    const found = this.byKey.get(key);
    if (!found) this.byKey.set(key, upstream);
    this.sink?.upstreams.push([key, found ?? upstream]);
    return found ?? upstream;
  }

  useSplit(key: string, split: SplitClients): SplitClients {
    const found = this.splits.get(key);
    if (!found) this.splits.set(key, split);
    this.sink?.splits.push([key, found ?? split]);
    return found ?? split;
  }

  useInference(): void {
    this.inferenceUsed = true;
    if (this.sink) this.sink.inference = true;
  }

  /** A session keeps its backend: its split hashes the session's token. */
  private split(buckets: SplitClients['buckets'], session?: TargetSession): SplitClients {
    const key = session ? `${session.key} ${JSON.stringify(buckets)}` : JSON.stringify(buckets);
    return this.useSplit(key, this.splits.get(key) ?? splitOf(key, buckets, session?.key));
  }

  get upstreams(): Upstream[] {
    // An upstream block without servers is an nginx error; such backends answer 502 instead.
    return [...this.byKey.values()].filter((u) => u.servers.length > 0);
  }

  get splitClients(): SplitClients[] {
    return [...this.splits.values()];
  }

  /**
   * The upstream for a valid backend with endpoints. `tries` > 1 (rules that retry): an upstream
   * of its own that lists the endpoints as many times as it takes to have `tries` entries, since
   * nginx tries each entry at most once per request (and a Service often has one endpoint).
   */
  private upstream(b: BackendRef, grpc: boolean, tries = 1, session?: TargetSession, certificate?: string): Upstream {
    const backend = backendKey(b);
    // Kept connections are per upstream block: TLS ones (per trust, name and client certificate)
    // are handed neither to plain-text requests nor to another Gateway's.
    const tls = targetTls(b, certificate);
    const key = `${grpc ? `${backend} grpc` : backend}${tries > 1 ? ` tries ${tries}` : ''}${session ? ` session ${session.key}` : ''}${tls ? ` tls ${tlsSignature(tls)}` : ''}`;
    const found = this.byKey.get(key);
    if (found) return this.useUpstream(key, found);
    const servers = serversOf(b);
    const copies = servers.length > 0 ? Math.ceil(tries / servers.length) : 1;
    return this.useUpstream(key, {
      name: upstreamName(b, key, grpc, tries, session, tls),
      backend,
      ...(session ? { hash: session.key } : {}),
      servers: copies > 1 ? Array.from({ length: copies }, () => servers).flat() : servers,
      keepalive: grpc ? GRPC_KEEPALIVE_CONNECTIONS : KEEPALIVE_CONNECTIONS,
    });
  }

  /**
   * Decided from the backend's own endpoints, not from the upstream block registered for it:
   * a rule's target is then a function of the rule alone (a kept one stays right), and every
   * BackendRef of one Service port in a graph carries the same endpoints (graph/backends.ts
   * resolves them from one index), so the block is the same whichever registered it.
   */
  private value(b: BackendRef, grpc: boolean, tries = 1, session?: TargetSession, certificate?: string): string {
    // A BackendTLSPolicy that cannot be enforced: its backend's requests fail (Gateway API: 5xx).
    if (!b.valid || (b.tls && !b.tls.valid)) return SPLIT_INVALID;
    const u = this.upstream(b, grpc, tries, session, certificate);
    return serversOf(b).length ? u.name : SPLIT_NO_ENDPOINTS;
  }

  /** Some target so far goes to InferencePools. */
  inferenceUsed = false;

  /** InferencePool backends (a rule never mixes them with Services): one pool or a weighted split. */
  private inferenceTarget(backends: BackendRef[]): ProxyTarget {
    const weighted = backends.filter((b) => b.weight > 0);
    if (weighted.length === 0 || weighted.every((b) => !b.valid || !b.inference)) return { kind: 'status', code: 500 };
    this.useInference();
    const values = weighted.map((b) => (b.valid && b.inference ? inferencePoolValue(b.inference) : SPLIT_INVALID));
    if (new Set(values).size === 1) return { kind: 'inference', hop: true, pool: values[0], poolInvalidShare: false };
    const buckets = splitBuckets(weighted.map((b, i) => ({ weight: b.weight, value: values[i] })));
    const split = this.split(buckets);
    return { kind: 'inference', hop: true, poolVariable: split.variable, poolInvalidShare: values.includes(SPLIT_INVALID) };
  }

  /** A split over named locations, one per backend (`locations`, same order as `backends`). */
  private backendsTarget(backends: BackendRef[], locations: string[], grpc: boolean, session?: TargetSession, certificate?: string): ProxyTarget {
    const shares: { weight: number; value: string }[] = [];
    backends.forEach((b, i) => {
      if (!(b.weight > 0)) return;
      const value = this.value(b, grpc, 1, undefined, certificate);
      shares.push({ weight: b.weight, value: value === SPLIT_INVALID || value === SPLIT_NO_ENDPOINTS ? value : locations[i] });
    });
    if (shares.length === 0 || shares.every((s) => s.value === SPLIT_INVALID)) return { kind: 'status', code: 500 };
    if (shares.every((s) => s.value === SPLIT_NO_ENDPOINTS)) return { kind: 'status', code: 502 };
    const buckets = splitBuckets(shares);
    const split = this.split(buckets, session);
    const values = shares.map((s) => s.value);
    return { kind: 'backends', dispatchVariable: split.variable, invalidShare: values.includes(SPLIT_INVALID), noEndpointsShare: values.includes(SPLIT_NO_ENDPOINTS) };
  }

  /**
   * Where a rule with these backendRefs sends its requests. With `locations` (backendRef
   * filters), each backend's share goes to the named location given for it. `grpc`: the
   * requests go out with grpc_pass (their upstreams are not shared with proxy_pass). `retry`:
   * the rule retries (model/retry.ts); its upstreams have an entry per try. `session`: the rule's
   * session persistence (model/session.ts); its upstreams and split hash the session's token.
   * `certificate`: the client certificate file of the server's Gateway, presented to TLS backends.
   */
  target(backends: BackendRef[], locations?: string[], grpc = false, retry?: TargetRetry, session?: TargetSession, certificate?: string): ProxyTarget {
    if (locations) return this.backendsTarget(backends, locations, grpc, session, certificate);
    const tries = retry?.tries ?? 1;
    const extra = retry || session ? { ...(retry ? { retry } : {}), ...(session ? { session } : {}) } : undefined;
    // (A loop, not some() with a closure: this runs for every rule of every build.)
    for (const b of backends) if (isInferencePoolRef(b.group, b.kind)) return this.inferenceTarget(backends);
    if (backends.length === 1) {
      // The common case, without the arrays and sets of the general one.
      const b = backends[0];
      if (!(b.weight > 0) || !b.valid) return { kind: 'status', code: 500 };
      const value = this.value(b, grpc, tries, session, certificate);
      if (value === SPLIT_INVALID) return { kind: 'status', code: 500 };
      if (value === SPLIT_NO_ENDPOINTS) return { kind: 'status', code: 502 };
      const tls = targetTls(b, certificate);
      if (tls) return { kind: 'upstream', upstream: value, ...extra, tls };
      return extra ? { kind: 'upstream', upstream: value, ...extra } : { kind: 'upstream', upstream: value };
    }
    const weighted = backends.filter((b) => b.weight > 0);
    if (weighted.length === 0 || weighted.every((b) => !b.valid)) return { kind: 'status', code: 500 };
    const values = weighted.map((b) => this.value(b, grpc, tries, session, certificate));
    // The backends that take requests are spoken to alike (locations.ts gives mixed ones a location each).
    let tls: TargetTLS | undefined;
    for (const b of weighted) if (b.valid && (tls = targetTls(b, certificate))) break;
    if (new Set(values).size === 1) {
      if (values[0] === SPLIT_NO_ENDPOINTS) return { kind: 'status', code: 502 };
      if (values[0] === SPLIT_INVALID) return { kind: 'status', code: 500 };
      if (tls) return { kind: 'upstream', upstream: values[0], ...extra, tls };
      return extra ? { kind: 'upstream', upstream: values[0], ...extra } : { kind: 'upstream', upstream: values[0] };
    }
    const buckets = splitBuckets(weighted.map((b, i) => ({ weight: b.weight, value: values[i] })));
    const split = this.split(buckets, session);
    return {
      kind: 'split',
      variable: split.variable,
      invalidShare: values.includes(SPLIT_INVALID),
      noEndpointsShare: values.includes(SPLIT_NO_ENDPOINTS),
      ...extra,
      ...(tls ? { tls } : {}),
    };
  }
}

/**
 * Percentages with nginx's precision (two decimals), rounded down so they never sum over 100;
 * the last bucket takes the rest ("*"). A bucket that rounds to 0 % is dropped (nginx rejects 0 %).
 */
export function splitBuckets(shares: { weight: number; value: string }[]): SplitClients['buckets'] {
  const total = shares.reduce((s, x) => s + x.weight, 0);
  const out: SplitClients['buckets'] = [];
  shares.forEach((s, i) => {
    if (i === shares.length - 1) {
      out.push({ percent: '*', value: s.value });
      return;
    }
    const hundredths = Math.floor((s.weight * 10000) / total);
    if (hundredths > 0) out.push({ percent: (hundredths / 100).toFixed(2), value: s.value });
  });
  return out;
}
