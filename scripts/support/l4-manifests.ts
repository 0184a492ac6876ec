/** Manifests the L4 benchmarks share: a Service whose one endpoint is a local port. */

/** A Service on port 80 and its EndpointSlice pointing at 127.0.0.1:`port`. */
export function localService(name: string, namespace: string, port: number, protocol: 'TCP' | 'UDP' = 'TCP'): object[] {
  const meta = (n: string) => ({ name: n, namespace, creationTimestamp: '2026-01-01T00:00:00Z' });
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: meta(name), spec: { ports: [{ port: 80, protocol }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { ...meta(`${name}-1`), labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ port, protocol }],
    },
  ];
}
