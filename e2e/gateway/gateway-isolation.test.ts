/**
 * Listeners of different Gateways on one port, through the real controller and nginx (one nginx,
 * one address): compatible listeners are served together, a conflicting one is reported and
 * never served (graph/gateway-conflicts.ts).
 */
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { gateway, httpRoute, rule } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, readStatus } from '../support/status';

let gw: GatewayFixture;
let other: number;

const newer = (g: ReturnType<typeof gateway>, creationTimestamp: string) => ({ ...g, metadata: { ...g.metadata, creationTimestamp } });

beforeAll(async () => {
  other = await freePort();
  gw = await startGatewayFixture({ backends: ['first', 'second', 'third', 'fourth'] });
  const port = gw.port;
  await gw.write('gateways.yaml', [
    newer(gateway('second', [{ name: 'same', port }, { name: 'elsewhere', port: other }]), '2030-01-01T00:00:00Z'),
    newer(gateway('third', [{ name: 'x', port, hostname: 'x.example' }]), '2030-01-02T00:00:00Z'),
    newer(gateway('fourth', [{ name: 'x', port, hostname: 'x.example' }]), '2030-01-03T00:00:00Z'),
  ]);
  await gw.write('routes.yaml', [
    httpRoute('first', { rules: [rule('first')] }, 'gw'),
    httpRoute('second', { rules: [rule('second')] }, 'second'),
    httpRoute('third', { hostnames: ['x.example'], rules: [rule('third')] }, 'third'),
    httpRoute('fourth', { hostnames: ['x.example'], rules: [rule('fourth')] }, 'fourth'),
  ]);
}, 60000);

afterAll(async () => {
  await gw?.close();
});

const listenerOf = async (gateway: string, name: string) =>
  ((findStatus(await readStatus(gw.stateDir), 'Gateway', gateway)?.status.listeners as any[]) ?? []).find((l) => l.name === name);

test('a newer Gateway listener with the same port and hostname is Conflicted and not served', async () => {
  const l = await listenerOf('second', 'same');
  expect(condition(l.conditions, 'Conflicted')).toMatchObject({ status: 'True', reason: 'HostnameConflict' });
  expect(condition(l.conditions, 'Programmed')?.status).toBe('False');
  for (let i = 0; i < 10; i++) expect(await gw.backend('/', { host: 'any.example' })).toBe('first');
  expect(condition((await listenerOf('fourth', 'x')).conditions, 'Conflicted')?.reason).toBe('HostnameConflict');
});

test('the newer Gateway keeps its other listeners', async () => {
  expect(condition((await listenerOf('second', 'elsewhere')).conditions, 'Programmed')?.status).toBe('True');
  expect(await gw.backend('/', {}, other)).toBe('second');
});

test('a listener with a distinct hostname on the same port is served next to the older one', async () => {
  expect(condition((await listenerOf('third', 'x')).conditions, 'Conflicted')?.status).toBe('False');
  expect(await gw.backend('/', { host: 'x.example' })).toBe('third');
  expect(await gw.backend('/', { host: 'y.example' })).toBe('first');
});
