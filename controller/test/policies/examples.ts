/**
 * Valid and invalid policy documents, shared by the zod tests and the CRD agreement test.
 * `field` is the path the zod error must name; `crd: false` marks rules only the controller
 * checks (the CRD cannot express them: known nginx variable names).
 */
export interface Example {
  name: string;
  doc: Record<string, unknown>;
  valid: boolean;
  field?: string;
  crd?: boolean;
}

const API = 'gateway.portcullis.dev/v1alpha1';
const GW = 'gateway.networking.k8s.io';

const gwRef = (name = 'gw') => ({ group: GW, kind: 'Gateway', name });
const routeRef = (name = 'r', kind = 'HTTPRoute') => ({ group: GW, kind, name });

export const rlp = (spec: Record<string, unknown>, name = 'rl') => ({
  apiVersion: API,
  kind: 'RateLimitPolicy',
  metadata: { name, namespace: 'default' },
  spec,
});
export const psp = (spec: Record<string, unknown>, name = 'ps') => ({
  apiVersion: API,
  kind: 'ProxySettingsPolicy',
  metadata: { name, namespace: 'default' },
  spec,
});
export const csp = (spec: Record<string, unknown>, name = 'cs') => ({
  apiVersion: API,
  kind: 'ClientSettingsPolicy',
  metadata: { name, namespace: 'default' },
  spec,
});

export const ipp = (spec: Record<string, unknown>, name = 'ip') => ({
  apiVersion: API,
  kind: 'IPAccessPolicy',
  metadata: { name, namespace: 'default' },
  spec,
});
const ipr = (spec: Record<string, unknown>) => ipp({ targetRefs: [routeRef()], ...spec });
const ipg = (spec: Record<string, unknown>) => ipp({ targetRefs: [gwRef()], ...spec });

const rule = (over: Record<string, unknown> = {}) => ({ zoneSize: '10m', key: '$binary_remote_addr', rate: '10r/s', ...over });
const rl = (r: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  rlp({ targetRefs: [routeRef()], rateLimit: { local: { rules: [rule(r)] }, ...extra } });
const buf = (b: Record<string, unknown>) => psp({ targetRefs: [gwRef()], buffering: b });
const body = (maxSize: unknown) => csp({ targetRef: routeRef(), body: { maxSize } });

export const EXAMPLES: Example[] = [
  // ---- RateLimitPolicy
  { name: 'rlp: full example', doc: rl({ burst: 5 }, { dryRun: false, logLevel: 'warn', rejectCode: 429 }), valid: true },
  { name: 'rlp: Gateway target', doc: rlp({ targetRefs: [gwRef()], rateLimit: { local: { rules: [rule()] } } }), valid: true },
  { name: 'rlp: HTTPRoute and GRPCRoute mixed', doc: rlp({ targetRefs: [routeRef('a'), routeRef('b', 'GRPCRoute')] }), valid: true },
  { name: 'rlp: Gateway mixed with HTTPRoute', doc: rlp({ targetRefs: [gwRef(), routeRef()] }), valid: false, field: 'spec.targetRefs' },
  { name: 'rlp: Gateway mixed with GRPCRoute', doc: rlp({ targetRefs: [routeRef('g', 'GRPCRoute'), gwRef()] }), valid: false, field: 'spec.targetRefs' },
  { name: 'rlp: duplicate target', doc: rlp({ targetRefs: [routeRef(), routeRef()] }), valid: false, field: 'spec.targetRefs[1]' },
  { name: 'rlp: no targets', doc: rlp({ targetRefs: [] }), valid: false, field: 'spec.targetRefs' },
  { name: 'rlp: missing targetRefs', doc: rlp({}), valid: false, field: 'spec.targetRefs' },
  { name: 'rlp: target kind Service', doc: rlp({ targetRefs: [{ group: GW, kind: 'Service', name: 's' }] }), valid: false, field: 'spec.targetRefs[0].kind' },
  { name: 'rlp: target group wrong', doc: rlp({ targetRefs: [{ group: 'example.com', kind: 'Gateway', name: 'g' }] }), valid: false, field: 'spec.targetRefs[0].group' },
  { name: 'rlp: rate per minute', doc: rl({ rate: '30r/m' }), valid: true },
  { name: 'rlp: rate zero', doc: rl({ rate: '0r/s' }), valid: false, field: 'spec.rateLimit.local.rules[0].rate' },
  { name: 'rlp: rate per hour', doc: rl({ rate: '10r/h' }), valid: false, field: 'spec.rateLimit.local.rules[0].rate' },
  { name: 'rlp: rate without unit', doc: rl({ rate: '10' }), valid: false, field: 'spec.rateLimit.local.rules[0].rate' },
  { name: 'rlp: rate missing', doc: rl({ rate: undefined }), valid: false, field: 'spec.rateLimit.local.rules[0].rate' },
  { name: 'rlp: burst 0', doc: rl({ burst: 0 }), valid: true },
  { name: 'rlp: burst negative', doc: rl({ burst: -1 }), valid: false, field: 'spec.rateLimit.local.rules[0].burst' },
  { name: 'rlp: burst fractional', doc: rl({ burst: 1.5 }), valid: false, field: 'spec.rateLimit.local.rules[0].burst' },
  { name: 'rlp: zoneSize omitted', doc: rl({ zoneSize: undefined }), valid: true },
  { name: 'rlp: zoneSize 32k', doc: rl({ zoneSize: '32k' }), valid: true },
  { name: 'rlp: zoneSize 16k too small', doc: rl({ zoneSize: '16k' }), valid: false, field: 'spec.rateLimit.local.rules[0].zoneSize' },
  { name: 'rlp: zoneSize 2048m too large', doc: rl({ zoneSize: '2048m' }), valid: false, field: 'spec.rateLimit.local.rules[0].zoneSize' },
  { name: 'rlp: zoneSize with g', doc: rl({ zoneSize: '1g' }), valid: false, field: 'spec.rateLimit.local.rules[0].zoneSize' },
  { name: 'rlp: zoneSize uppercase M', doc: rl({ zoneSize: '10M' }), valid: true },
  { name: 'rlp: key header + address', doc: rl({ key: '$binary_remote_addr$http_x_user' }), valid: true },
  { name: 'rlp: key with literal text', doc: rl({ key: 'tenant-$arg_tenant' }), valid: true },
  { name: 'rlp: key with space', doc: rl({ key: '$remote_addr x' }), valid: false, field: 'spec.rateLimit.local.rules[0].key' },
  { name: 'rlp: key with semicolon', doc: rl({ key: '$remote_addr;' }), valid: false, field: 'spec.rateLimit.local.rules[0].key' },
  { name: 'rlp: key with brace', doc: rl({ key: '${remote_addr}' }), valid: false, field: 'spec.rateLimit.local.rules[0].key' },
  { name: 'rlp: key unknown variable', doc: rl({ key: '$client_ip' }), valid: false, field: 'spec.rateLimit.local.rules[0].key', crd: false },
  { name: 'rlp: key missing', doc: rl({ key: undefined }), valid: false, field: 'spec.rateLimit.local.rules[0].key' },
  { name: 'rlp: unknown rule field', doc: rl({ nodelay: true }), valid: false, field: 'spec.rateLimit.local.rules[0]' },
  { name: 'rlp: logLevel notice', doc: rl({}, { logLevel: 'notice' }), valid: true },
  { name: 'rlp: logLevel info', doc: rl({}, { logLevel: 'info' }), valid: true },
  { name: 'rlp: logLevel debug', doc: rl({}, { logLevel: 'debug' }), valid: false, field: 'spec.rateLimit.logLevel' },
  { name: 'rlp: logLevel crit', doc: rl({}, { logLevel: 'crit' }), valid: false, field: 'spec.rateLimit.logLevel' },
  { name: 'rlp: rejectCode 400', doc: rl({}, { rejectCode: 400 }), valid: true },
  { name: 'rlp: rejectCode 599', doc: rl({}, { rejectCode: 599 }), valid: true },
  { name: 'rlp: rejectCode 399', doc: rl({}, { rejectCode: 399 }), valid: false, field: 'spec.rateLimit.rejectCode' },
  { name: 'rlp: rejectCode 600', doc: rl({}, { rejectCode: 600 }), valid: false, field: 'spec.rateLimit.rejectCode' },
  { name: 'rlp: rejectCode as string', doc: rl({}, { rejectCode: '429' }), valid: false, field: 'spec.rateLimit.rejectCode' },
  { name: 'rlp: dryRun not boolean', doc: rl({}, { dryRun: 'yes' }), valid: false, field: 'spec.rateLimit.dryRun' },
  { name: 'rlp: rejectCode at spec level', doc: rlp({ targetRefs: [routeRef()], rejectCode: 429 }), valid: false, field: 'spec' },
  // ---- ProxySettingsPolicy
  { name: 'psp: spec example', doc: buf({ bufferSize: '4k', buffers: { number: 8, size: '4k' }, busyBuffersSize: '8k' }), valid: true },
  { name: 'psp: disable only', doc: buf({ disable: true }), valid: true },
  { name: 'psp: route targets', doc: psp({ targetRefs: [routeRef('a'), routeRef('b')], buffering: { bufferSize: '16k' } }), valid: true },
  { name: 'psp: busy equal to bufferSize', doc: buf({ bufferSize: '8k', busyBuffersSize: '8k' }), valid: false, field: 'spec.buffering.busyBuffersSize' },
  { name: 'psp: busy below bufferSize', doc: buf({ bufferSize: '16k', busyBuffersSize: '8k' }), valid: false, field: 'spec.buffering.busyBuffersSize' },
  { name: 'psp: busy 28k with 8x4k (not below 28k)', doc: buf({ buffers: { number: 8, size: '4k' }, busyBuffersSize: '28k' }), valid: false, field: 'spec.buffering.busyBuffersSize' },
  { name: 'psp: busy 27k with 8x4k', doc: buf({ buffers: { number: 8, size: '4k' }, busyBuffersSize: '27k' }), valid: true },
  { name: 'psp: busy in bytes vs k units', doc: buf({ bufferSize: '4096', buffers: { number: 4, size: '8k' }, busyBuffersSize: '16383' }), valid: true },
  { name: 'psp: busy below one buffer', doc: buf({ buffers: { number: 8, size: '16k' }, busyBuffersSize: '8k' }), valid: false, field: 'spec.buffering.busyBuffersSize' },
  { name: 'psp: buffers number 1', doc: buf({ buffers: { number: 1, size: '4k' } }), valid: false, field: 'spec.buffering.buffers.number' },
  { name: 'psp: buffers number 257', doc: buf({ buffers: { number: 257, size: '4k' } }), valid: false, field: 'spec.buffering.buffers.number' },
  { name: 'psp: buffers without size', doc: buf({ buffers: { number: 8 } }), valid: false, field: 'spec.buffering.buffers.size' },
  { name: 'psp: bufferSize 0', doc: buf({ bufferSize: '0' }), valid: false, field: 'spec.buffering.bufferSize' },
  { name: 'psp: bufferSize 4kb', doc: buf({ bufferSize: '4kb' }), valid: false, field: 'spec.buffering.bufferSize' },
  { name: 'psp: bufferSize 1g', doc: buf({ bufferSize: '1g' }), valid: false, field: 'spec.buffering.bufferSize' },
  { name: 'psp: bufferSize number', doc: buf({ bufferSize: 4096 }), valid: false, field: 'spec.buffering.bufferSize' },
  { name: 'psp: unknown buffering field', doc: buf({ size: '4k' }), valid: false, field: 'spec.buffering' },
  { name: 'psp: Gateway mixed with route', doc: psp({ targetRefs: [gwRef(), routeRef()] }), valid: false, field: 'spec.targetRefs' },
  // ---- ClientSettingsPolicy
  { name: 'csp: maxSize 10m', doc: body('10m'), valid: true },
  { name: 'csp: maxSize bytes', doc: body('1048576'), valid: true },
  { name: 'csp: maxSize 1g', doc: body('1g'), valid: true },
  { name: 'csp: maxSize 0 (unlimited)', doc: body('0'), valid: true },
  { name: 'csp: maxSize as number', doc: body(1024), valid: false, field: 'spec.body.maxSize' },
  { name: 'csp: maxSize 10mb', doc: body('10mb'), valid: false, field: 'spec.body.maxSize' },
  { name: 'csp: maxSize negative', doc: body('-1'), valid: false, field: 'spec.body.maxSize' },
  { name: 'csp: Gateway target', doc: csp({ targetRef: gwRef(), body: { maxSize: '1k' } }), valid: true },
  { name: 'csp: plural targetRefs', doc: csp({ targetRefs: [gwRef()] }), valid: false, field: 'spec' },
  { name: 'csp: target kind Service', doc: csp({ targetRef: { group: GW, kind: 'Service', name: 's' } }), valid: false, field: 'spec.targetRef.kind' },
  // ---- IPAccessPolicy
  { name: 'ipp: TCPRoute, UDPRoute and TLSRoute targets', doc: ipp({ targetRefs: [routeRef('t', 'TCPRoute'), routeRef('u', 'UDPRoute'), routeRef('s', 'TLSRoute')], deny: ['10.0.0.0/8'] }), valid: true },
  { name: 'ipp: Gateway mixed with TCPRoute', doc: ipp({ targetRefs: [gwRef(), routeRef('t', 'TCPRoute')], deny: ['10.0.0.0/8'] }), valid: false, field: 'spec.targetRefs' },
  { name: 'ipp: allow and deny, IPv4 and IPv6', doc: ipr({ allow: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'], deny: ['10.1.0.0/16', '::1', 'fe80::1:2/64'] }), valid: true },
  { name: 'ipp: Gateway with every field', doc: ipg({ allow: ['0.0.0.0/0'], clientAddress: { source: 'XForwardedFor', trustedCIDRs: ['127.0.0.1/32'] } }), valid: true },
  { name: 'ipp: PROXY protocol', doc: ipg({ clientAddress: { source: 'ProxyProtocol', trustedCIDRs: ['10.0.0.0/8', '::/0'] } }), valid: true },
  { name: 'ipp: Connection source alone', doc: ipg({ clientAddress: { source: 'Connection' } }), valid: true },
  { name: 'ipp: GRPCRoute target', doc: ipp({ targetRefs: [routeRef('g', 'GRPCRoute')], deny: ['203.0.113.0/24'] }), valid: true },
  { name: 'ipp: full IPv6 with prefix 128', doc: ipr({ deny: ['2001:0db8:0000:0000:0000:0000:0000:0001/128'] }), valid: true },
  { name: 'ipp: prefix 33 on IPv4', doc: ipr({ deny: ['10.0.0.0/33'] }), valid: false, field: 'spec.deny[0]' },
  { name: 'ipp: octet 256', doc: ipr({ allow: ['10.0.0.256'] }), valid: false, field: 'spec.allow[0]' },
  { name: 'ipp: prefix 129 on IPv6', doc: ipr({ allow: ['::/129'] }), valid: false, field: 'spec.allow[0]' },
  { name: 'ipp: two double colons', doc: ipr({ allow: ['1::2::3'] }), valid: false, field: 'spec.allow[0]' },
  { name: 'ipp: hostname', doc: ipr({ allow: ['example.com'] }), valid: false, field: 'spec.allow[0]' },
  { name: 'ipp: nginx keyword all', doc: ipr({ deny: ['all'] }), valid: false, field: 'spec.deny[0]' },
  { name: 'ipp: empty allow list', doc: ipr({ allow: [] }), valid: false, field: 'spec.allow' },
  { name: 'ipp: 257 networks', doc: ipr({ deny: Array.from({ length: 257 }, (_, i) => `10.0.${i >> 8}.${i & 255}`) }), valid: false, field: 'spec.deny' },
  { name: 'ipp: clientAddress on a route', doc: ipr({ clientAddress: { source: 'Connection' } }), valid: false, field: 'spec.clientAddress' },
  { name: 'ipp: XForwardedFor without trustedCIDRs', doc: ipg({ clientAddress: { source: 'XForwardedFor' } }), valid: false, field: 'spec.clientAddress.trustedCIDRs' },
  { name: 'ipp: Connection with trustedCIDRs', doc: ipg({ clientAddress: { source: 'Connection', trustedCIDRs: ['10.0.0.0/8'] } }), valid: false, field: 'spec.clientAddress.trustedCIDRs' },
  { name: 'ipp: unknown source', doc: ipg({ clientAddress: { source: 'Header' } }), valid: false, field: 'spec.clientAddress.source' },
  { name: 'ipp: Gateway mixed with route', doc: ipp({ targetRefs: [gwRef(), routeRef()], deny: ['10.0.0.0/8'] }), valid: false, field: 'spec.targetRefs' },
  { name: 'ipp: unknown field', doc: ipr({ allowed: ['10.0.0.0/8'] }), valid: false, field: 'spec' },
];
