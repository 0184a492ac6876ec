/**
 * ListenerSets through the real controller and nginx (standalone, manifests from files): the
 * listeners a ListenerSet adds are served, routes reach them through parentRefs of kind
 * ListenerSet only, a refused or conflicting one is reported and never served
 * (graph/listenersets.ts).
 */
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { gateway, httpRoute, rule } from '../support/manifests';
import { freePort } from '../support/ports';
import { condition, findStatus, readStatus } from '../support/status';

const API = 'gateway.networking.k8s.io/v1';
let gw: GatewayFixture;
let shared: number;
let added: number;

const listenerSet = (name: string, parent: string, listeners: object[], creationTimestamp = '2030-01-01T00:00:00Z') => ({
  apiVersion: API,
  kind: 'ListenerSet',
  metadata: { name, creationTimestamp },
  spec: { parentRef: { name: parent }, listeners: listeners.map((l) => ({ protocol: 'HTTP', ...l })) },
});
const toSet = (name: string, sectionName?: string) => ({ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name, ...(sectionName ? { sectionName } : {}) });

beforeAll(async () => {
  shared = await freePort();
  added = await freePort();
  gw = await startGatewayFixture({ backends: ['own', 'set', 'section', 'refused'] });
  const parent = gateway('parent', [{ name: 'web', port: shared, hostname: 'gw.example' }]);
  const closed = gateway('closed', [{ name: 'web', port: shared, hostname: 'closed.example' }]);
  await gw.write('listenersets.yaml', [
    { ...parent, spec: { ...(parent.spec as object), allowedListeners: { namespaces: { from: 'Same' } } } },
    closed,
    listenerSet('team', 'parent', [
      { name: 'one', port: shared, hostname: 'one.example' },
      { name: 'extra', port: added },
      // the Gateway's own hostname on its port: the Gateway keeps it
      { name: 'taken', port: shared, hostname: 'gw.example' },
    ]),
    listenerSet('late', 'parent', [{ name: 'one', port: shared, hostname: 'one.example' }], '2030-01-02T00:00:00Z'),
    listenerSet('uninvited', 'closed', [{ name: 'x', port: shared, hostname: 'x.example' }]),
    httpRoute('own', { rules: [rule('own')] }, 'parent'),
    httpRoute('set', { parentRefs: [toSet('team')], rules: [rule('set')] }),
    httpRoute('section', { parentRefs: [toSet('team', 'one')], rules: [rule('section', [{ path: { type: 'PathPrefix', value: '/section' } }])] }),
    httpRoute('refused', { parentRefs: [toSet('uninvited')], rules: [rule('refused')] }),
  ]);
}, 60000);

afterAll(async () => {
  await gw?.close();
});

const status = async (kind: string, name: string) => findStatus(await readStatus(gw.stateDir), kind, name)?.status as any; // eslint-disable-line @typescript-eslint/no-explicit-any
const listenerOf = (s: { listeners: { name: string }[] }, name: string) => s.listeners.find((l) => l.name === name) as any; // eslint-disable-line @typescript-eslint/no-explicit-any

test("a ListenerSet's listeners are served with the routes that name the ListenerSet, the Gateway's with its own", async () => {
  expect(await gw.backend('/', { host: 'gw.example' }, shared)).toBe('own');
  expect(await gw.backend('/', { host: 'one.example' }, shared)).toBe('set');
  expect(await gw.backend('/section', { host: 'one.example' }, shared)).toBe('section');
  // a port only the ListenerSet listens on
  expect(await gw.backend('/section', { host: 'any.example' }, added)).toBe('set');
  const team = await status('ListenerSet', 'team');
  expect(condition(team.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'ListenersNotValid' });
  expect(condition(team.conditions, 'Programmed')).toMatchObject({ status: 'True', reason: 'Programmed' });
  expect(listenerOf(team, 'one').attachedRoutes).toBe(2);
  expect((await status('Gateway', 'parent')).attachedListenerSets).toBe(1);
  expect((await status('Gateway', 'parent')).listeners.map((l: { name: string }) => l.name)).toEqual(['web']);
});

test("a listener taking the Gateway's hostname, or an older ListenerSet's, is Conflicted and not served", async () => {
  expect(condition(listenerOf(await status('ListenerSet', 'team'), 'taken').conditions, 'Conflicted')).toMatchObject({ status: 'True', reason: 'HostnameConflict' });
  const late = await status('ListenerSet', 'late');
  expect(condition(late.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'ListenersNotValid' });
  expect(condition(listenerOf(late, 'one').conditions, 'Conflicted')?.reason).toBe('HostnameConflict');
  expect(await gw.backend('/', { host: 'gw.example' }, shared)).toBe('own');
});

test('a ListenerSet its Gateway does not allow is NotAllowed, and routes to it are not served', async () => {
  const uninvited = await status('ListenerSet', 'uninvited');
  expect(condition(uninvited.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'NotAllowed' });
  expect(condition(uninvited.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'NotAllowed' });
  expect(condition((await status('HTTPRoute', 'refused')).parents[0].conditions, 'Accepted')?.reason).toBe('NoMatchingParent');
  expect(await gw.backend('/', { host: 'x.example' }, shared)).not.toBe('refused');
});

test('a ListenerSet created after another Gateway took a port and hostname is Conflicted there; the other Gateway keeps serving it', async () => {
  const port = await freePort();
  await gw.write('second.yaml', [gateway('second', [{ name: 'web', port, hostname: 'second.example' }]), httpRoute('second', { rules: [rule('own')] }, 'second')]);
  expect(await gw.backend('/', { host: 'second.example' }, port)).toBe('own');
  // Its Gateway (parent) is older than Gateway second, the ListenerSet itself is newer (stamped now).
  const intruder = listenerSet('intruder', 'parent', [
    { name: 'web', port, hostname: 'second.example' },
    { name: 'fine', port, hostname: 'fine.example' },
  ]);
  await gw.write('intruder.yaml', [{ ...intruder, metadata: { name: 'intruder' } }, httpRoute('intruder', { parentRefs: [toSet('intruder')], rules: [rule('set')] })]);
  expect(await gw.backend('/', { host: 'second.example' }, port)).toBe('own');
  expect(await gw.backend('/', { host: 'fine.example' }, port)).toBe('set');
  const set = await status('ListenerSet', 'intruder');
  expect(condition(set.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'ListenersNotValid' });
  expect(condition(listenerOf(set, 'web').conditions, 'Conflicted')).toMatchObject({ status: 'True', reason: 'HostnameConflict' });
  const second = await status('Gateway', 'second');
  expect(condition(second.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
  expect(condition(listenerOf(second, 'web').conditions, 'Conflicted')).toMatchObject({ status: 'False' });
  await gw.remove('intruder.yaml');
  await gw.remove('second.yaml');
});

test('an invalid ListenerSet document is Accepted and Programmed False (Invalid) and changes nothing served', async () => {
  await gw.write('invalid.yaml', [listenerSet('broken', 'parent', [{ name: 'dup', port: added, hostname: 'dup.example' }, { name: 'dup', port: added, hostname: 'dup2.example' }])]);
  const broken = await status('ListenerSet', 'broken');
  expect(condition(broken.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'Invalid' });
  expect(condition(broken.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
  expect(await gw.backend('/', { host: 'gw.example' }, shared)).toBe('own');
  await gw.remove('invalid.yaml');
});
