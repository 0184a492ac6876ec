/**
 * The synthetic manifests the controller benchmarks use: one Gateway, 50 Services with
 * EndpointSlices, and routes of 3 rules mixing path, header, query and method matches.
 */
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';

export const SERVICES = 50;
export const HOSTS = 20;


/** The benches' GatewayClass and their one Gateway `gw` with one HTTP listener. */
export function gatewayDocs(port: number, namespace: string, listener = 'http'): Record<string, unknown>[] {
  return [
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: DEFAULT_CONTROLLER_NAME } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace },
      spec: { gatewayClassName: 'portcullis', listeners: [{ name: listener, port, protocol: 'HTTP' }] },
    },
  ];
}

export function baseDocs(port: number, backendPort: number): Record<string, unknown>[] {
  const docs = gatewayDocs(port, 'default');
  for (let s = 0; s < SERVICES; s++) {
    docs.push(
      { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${s}`, namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: backendPort, protocol: 'TCP' }] } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `svc-${s}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': `svc-${s}` } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: backendPort, protocol: 'TCP' }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
    );
  }
  return docs;
}

/** Route i: 3 rules mixing PathPrefix/Exact/RegularExpression paths with header, query and method matches. */
export function routeDoc(i: number, changedPath?: string, regexEvery = 10): Record<string, unknown> {
  const svc = (k: number) => [{ name: `svc-${(i + k) % SERVICES}`, port: 80 }];
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: `route-${i}`, namespace: 'default', creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString() },
    spec: {
      parentRefs: [{ name: 'gw', sectionName: 'http' }],
      hostnames: [`app-${i % HOSTS}.example.test`],
      rules: [
        {
          matches: [
            { path: { type: 'PathPrefix', value: changedPath ?? `/r${i}/api` }, headers: [{ name: 'X-Tenant', value: `t${i % 7}` }] },
            { path: { type: 'PathPrefix', value: `/r${i}/api` }, queryParams: [{ name: 'tenant', value: `t${i % 7}` }] },
          ],
          backendRefs: svc(0),
        },
        {
          matches: [{ path: { type: 'Exact', value: `/r${i}/login` }, method: 'POST' }],
          backendRefs: svc(1),
        },
        {
          matches: [
            { path: { type: 'PathPrefix', value: `/r${i}` }, queryParams: [{ name: 'v', type: 'RegularExpression', value: '[0-9]+' }] },
            i % regexEvery === 0
              ? { path: { type: 'RegularExpression', value: `/r${i}/items/[0-9]+` }, method: 'GET' }
              : { path: { type: 'PathPrefix', value: `/r${i}/items` }, method: 'GET' },
            { path: { type: 'PathPrefix', value: `/r${i}` } },
          ],
          backendRefs: svc(2),
        },
      ],
    },
  };
}

/** Policies for section 3: three kinds on the Gateway, three on every route. */
export function policyDocs(routes: number): Record<string, unknown>[] {
  const api = 'gateway.portcullis.dev/v1alpha1';
  const ref = (kind: string, name: string) => ({ group: 'gateway.networking.k8s.io', kind, name });
  const docs: Record<string, unknown>[] = [
    { apiVersion: api, kind: 'RateLimitPolicy', metadata: { name: 'gw-rl', namespace: 'default' }, spec: { targetRefs: [ref('Gateway', 'gw')], rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: '100r/s', burst: 50 }] }, rejectCode: 429 } } },
    { apiVersion: api, kind: 'ProxySettingsPolicy', metadata: { name: 'gw-ps', namespace: 'default' }, spec: { targetRefs: [ref('Gateway', 'gw')], buffering: { bufferSize: '8k', buffers: { number: 8, size: '8k' } } } },
    { apiVersion: api, kind: 'ClientSettingsPolicy', metadata: { name: 'gw-cs', namespace: 'default' }, spec: { targetRef: ref('Gateway', 'gw'), body: { maxSize: '2m' } } },
  ];
  for (let i = 0; i < routes; i++) {
    const r = ref('HTTPRoute', `route-${i}`);
    docs.push(
      { apiVersion: api, kind: 'RateLimitPolicy', metadata: { name: `rl-${i}`, namespace: 'default' }, spec: { targetRefs: [r], rateLimit: { local: { rules: [{ key: '$binary_remote_addr', rate: `${1 + (i % 20)}r/s`, burst: i % 5, zoneSize: '1m' }] } } } },
      { apiVersion: api, kind: 'ProxySettingsPolicy', metadata: { name: `ps-${i}`, namespace: 'default' }, spec: { targetRefs: [r], buffering: i % 3 === 0 ? { disable: true } : { busyBuffersSize: '16k' } } },
      { apiVersion: api, kind: 'ClientSettingsPolicy', metadata: { name: `cs-${i}`, namespace: 'default' }, spec: { targetRef: r, body: { maxSize: `${1 + (i % 10)}m` } } },
    );
  }
  return docs;
}
