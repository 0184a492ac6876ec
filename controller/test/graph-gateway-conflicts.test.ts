/** Listeners of different Gateways on one port (one nginx, one address): graph/gateway-conflicts.ts. */
import { buildGraph, DEFAULT_CONTROLLER_NAME } from '../src/graph';
import { gateway, gatewayClass, http, parse } from './graph-fixtures';

const dated = (gw: ReturnType<typeof gateway>, creationTimestamp: string) => ({ ...gw, metadata: { ...gw.metadata, creationTimestamp } });

function build(...docs: object[]) {
  return buildGraph(parse(gatewayClass(), ...docs).set, { controllerName: DEFAULT_CONTROLLER_NAME });
}

const listener = (g: ReturnType<typeof build>, gw: string, name: string) =>
  [...g.gateways, ...g.rejectedGateways].find((x) => x.name === gw)!.listeners.find((l) => l.name === name)!;
const cond = (l: { conditions: { type: string; status: string; reason: string }[] }, type: string) => l.conditions.find((c) => c.type === type);

test('the same port and hostname on a newer Gateway: HostnameConflict, not served; the older keeps it', () => {
  const g = build(dated(gateway('old', [http('web', 8080)]), '2026-01-01T00:00:00Z'), dated(gateway('new', [http('web', 8080), http('other', 9090)]), '2026-01-02T00:00:00Z'));
  expect(listener(g, 'old', 'web').valid).toBe(true);
  const lost = listener(g, 'new', 'web');
  expect(lost.valid).toBe(false);
  expect(cond(lost, 'Conflicted')).toMatchObject({ status: 'True', reason: 'HostnameConflict' });
  expect(cond(lost, 'Accepted')).toMatchObject({ status: 'False', reason: 'HostnameConflict' });
  expect(cond(lost, 'Programmed')?.status).toBe('False');
  expect((lost.conditions.find((c) => c.type === 'Conflicted') as { message: string }).message).toContain('default/old');
  // The newer Gateway keeps its other listener.
  expect(listener(g, 'new', 'other').valid).toBe(true);
  expect(g.gateways.find((x) => x.name === 'new')!.conditions[0]).toMatchObject({ type: 'Accepted', status: 'True', reason: 'ListenersNotValid' });
});

test('another protocol on the port: ProtocolConflict; a Gateway left without listeners is not Accepted', () => {
  const g = build(
    dated(gateway('old', [http('web', 8080)]), '2026-01-01T00:00:00Z'),
    dated(gateway('tls', [{ name: 't', port: 8080, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'c' }] } }]), '2026-01-02T00:00:00Z'),
  );
  const lost = listener(g, 'tls', 't');
  expect(cond(lost, 'Conflicted')?.reason).toBe('ProtocolConflict');
  expect(g.rejectedGateways.map((x) => x.name)).toEqual(['tls']);
});

test('distinct hostnames on one port are compatible and served together; creation order decides, not names', () => {
  const g = build(dated(gateway('b', [http('web', 8080, { hostname: 'x.example' })]), '2026-01-01T00:00:00Z'), dated(gateway('a', [http('web', 8080)]), '2026-01-02T00:00:00Z'), dated(gateway('c', [http('web', 8080, { hostname: 'x.example' })]), '2026-01-03T00:00:00Z'));
  expect(listener(g, 'b', 'web').valid).toBe(true);
  expect(listener(g, 'a', 'web').valid).toBe(true);
  expect(cond(listener(g, 'c', 'web'), 'Conflicted')?.reason).toBe('HostnameConflict');
});

test('with a data plane per Gateway (Kubernetes) nothing conflicts', () => {
  const g = buildGraph(parse(gatewayClass(), gateway('one', [http('web', 80)]), gateway('two', [http('web', 80)])).set, { controllerName: DEFAULT_CONTROLLER_NAME, dataplanePerGateway: true });
  expect(g.gateways.flatMap((x) => x.listeners).every((l) => l.valid)).toBe(true);
});
