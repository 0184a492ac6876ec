/**
 * Statuses written to <state-dir>/status.yaml for valid and invalid resources, as the Gateway
 * API defines them, and generation / observedGeneration as an API server keeps them.
 */
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { httpRoute, rule } from '../support/manifests';
import { condition, findStatus, readStatus, routeParent, StatusDoc, waitForStatus } from '../support/status';

const CONTROLLER = 'gateway.portcullis.dev/controller';
let gw: GatewayFixture;
let docs: StatusDoc[];

const route = (name: string) => findStatus(docs, 'HTTPRoute', name);
const parentConditions = (name: string, gateway = 'gw') => routeParent(route(name), gateway)?.conditions;

function routes(goodPath = '/good', goodLabels?: Record<string, string>) {
  const good = httpRoute('good', { rules: [rule('ok', [{ path: { type: 'PathPrefix', value: goodPath } }])] });
  if (goodLabels) good.metadata.labels = goodLabels;
  return [
    good,
    httpRoute('no-listener', { parentRefs: [{ name: 'gw', sectionName: 'nope' }], rules: [rule('ok')] }),
    httpRoute('other-ns', { namespace: 'other', parentRefs: [{ name: 'gw', namespace: 'default' }], rules: [rule('ok')] }),
    httpRoute('wrong-host', {
      parentRefs: [{ name: 'gw', sectionName: 'only-a' }],
      hostnames: ['b.example.test'],
      rules: [rule('ok')],
    }),
    httpRoute('missing-backend', { rules: [rule('missing', [{ path: { type: 'PathPrefix', value: '/missing-backend' } }])] }),
    httpRoute('bad-kind', {
      rules: [rule([{ name: 'ok', kind: 'ConfigMap', group: '' }], [{ path: { type: 'PathPrefix', value: '/bad-kind' } }])],
    }),
    httpRoute('bad-regex', {
      rules: [
        rule('ok', [{ path: { type: 'PathPrefix', value: '/still-good' } }]),
        // A lookahead: PCRE would accept it, RE2 does not; it must never reach nginx.
        rule('ok', [{ path: { type: 'RegularExpression', value: '/look(?=ahead)' } }]),
      ],
    }),
    httpRoute('bad-schema', { rules: [{ matches: [{ path: { type: 'Bogus', value: '/x' } }], backendRefs: [{ name: 'ok', port: 80 }] }] }),
  ];
}

beforeAll(async () => {
  gw = await startGatewayFixture({
    backends: ['ok'],
    listeners: [{ name: 'http' }, { name: 'only-a', hostname: 'a.example.test' }],
    files: { 'routes.yaml': routes() },
  });
  docs = await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'HTTPRoute', 'good'));
}, 60000);

afterAll(async () => {
  await gw?.close();
});

describe('GatewayClass and Gateway', () => {
  test('the GatewayClass naming our controller is Accepted', () => {
    const gc = findStatus(docs, 'GatewayClass', 'portcullis');
    expect(condition(gc?.status.conditions, 'Accepted')).toMatchObject({ status: 'True', observedGeneration: 1 });
  });

  test('the Gateway reports its address (type IPAddress) and is Accepted and Programmed', () => {
    const g = findStatus(docs, 'Gateway', 'gw')!;
    expect(g.metadata).toMatchObject({ name: 'gw', namespace: 'default', generation: 1 });
    expect(g.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(g.status.addresses).toEqual([{ type: 'IPAddress', value: '127.0.0.1' }]);
    expect(condition(g.status.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 1 });
    expect(condition(g.status.conditions, 'Programmed')).toMatchObject({ status: 'True', reason: 'Programmed', observedGeneration: 1 });
    for (const c of g.status.conditions) expect(c.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test('each listener reports its conditions and attachedRoutes counts accepted routes only', () => {
    const g = findStatus(docs, 'Gateway', 'gw')!;
    const http = g.status.listeners.find((l: any) => l.name === 'http');
    const onlyA = g.status.listeners.find((l: any) => l.name === 'only-a');
    // good, missing-backend, bad-kind, bad-regex attach to "http" (and, having no hostnames, to
    // "only-a" too); no-listener, other-ns, wrong-host and bad-schema are not accepted there.
    expect(http.attachedRoutes).toBe(4);
    expect(onlyA.attachedRoutes).toBe(4);
    for (const type of ['Accepted', 'Programmed', 'ResolvedRefs']) {
      expect(condition(http.conditions, type)).toMatchObject({ status: 'True', observedGeneration: 1 });
    }
    expect(condition(http.conditions, 'Conflicted')).toMatchObject({ status: 'False', reason: 'NoConflicts' });
  });
});

describe('HTTPRoute parents', () => {
  test('an attached route is Accepted with ResolvedRefs, names its parentRef and our controller', () => {
    const parent = routeParent(route('good'), 'gw');
    expect(parent.controllerName).toBe(CONTROLLER);
    expect(parent.parentRef).toMatchObject({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'default' });
    expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 1 });
    expect(condition(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True', reason: 'ResolvedRefs', observedGeneration: 1 });
  });

  test('a sectionName naming no listener: Accepted False, NoMatchingParent', () => {
    expect(condition(parentConditions('no-listener'), 'Accepted')).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
  });

  test('a route from a namespace the listeners do not allow: Accepted False, NotAllowedByListeners', () => {
    const parent = routeParent(findStatus(docs, 'HTTPRoute', 'other-ns', 'other'), 'gw');
    expect(condition(parent?.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'NotAllowedByListeners' });
  });

  test('route hostnames outside the listener hostname: Accepted False, NoMatchingListenerHostname', () => {
    expect(condition(parentConditions('wrong-host'), 'Accepted')).toMatchObject({ status: 'False', reason: 'NoMatchingListenerHostname' });
  });

  test('a missing backend Service: still Accepted, ResolvedRefs False BackendNotFound, requests get 500', async () => {
    expect(condition(parentConditions('missing-backend'), 'Accepted')).toMatchObject({ status: 'True' });
    expect(condition(parentConditions('missing-backend'), 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    expect((await gw.request('/missing-backend')).status).toBe(500);
  });

  test('a backend of an unsupported kind: ResolvedRefs False InvalidKind, requests get 500', async () => {
    expect(condition(parentConditions('bad-kind'), 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'InvalidKind' });
    expect((await gw.request('/bad-kind')).status).toBe(500);
  });

  test('a regular expression RE2 does not accept is rejected in status and never reaches nginx; the other rules serve', async () => {
    const conditions = parentConditions('bad-regex');
    // The route stays Accepted for its valid rules; the dropped rule is named (Gateway API
    // PartiallyInvalid, as NGINX Gateway Fabric reports it).
    expect(condition(conditions, 'Accepted')?.status).toBe('True');
    const partial = condition(conditions, 'PartiallyInvalid');
    expect(partial?.status).toBe('True');
    expect(partial?.message).toMatch(/spec\.rules\[1\]\.matches\[0\]\.path\.value: invalid regular expression/);
    expect(await gw.backend('/still-good')).toBe('ok');
    expect(await gw.backend('/lookahead')).toBe(404);
    // nginx accepted the configuration: the Gateway stays Programmed.
    expect(condition(findStatus(docs, 'Gateway', 'gw')!.status.conditions, 'Programmed')?.status).toBe('True');
  });

  test('a route failing its schema gets Accepted False with a message naming the field', () => {
    const doc = route('bad-schema');
    const conditions = doc?.status.parents?.[0]?.conditions ?? doc?.status.conditions;
    const accepted = condition(conditions, 'Accepted');
    expect(accepted?.status).toBe('False');
    expect(accepted?.message).toMatch(/spec\.rules\[0\]\.matches\[0\]\.path\.type/);
  });
});

describe('generation', () => {
  test('grows when the spec changes (not on label changes) and every condition observes it', async () => {
    await gw.write('routes.yaml', routes('/good', { team: 'web' }));
    let d = await readStatus(gw.stateDir);
    expect(findStatus(d, 'HTTPRoute', 'good')!.metadata.generation).toBe(1);

    await gw.write('routes.yaml', routes('/better', { team: 'web' }));
    d = await waitForStatus(gw.stateDir, (x) => findStatus(x, 'HTTPRoute', 'good')?.metadata.generation === 2);
    const parent = routeParent(findStatus(d, 'HTTPRoute', 'good'), 'gw');
    for (const c of parent.conditions) expect(c.observedGeneration).toBe(2);
    expect(await gw.backend('/better')).toBe('ok');
    expect(await gw.backend('/good')).toBe(404);
    // Other resources keep their generation.
    expect(findStatus(d, 'HTTPRoute', 'bad-kind')!.metadata.generation).toBe(1);
    expect(findStatus(d, 'Gateway', 'gw')!.metadata.generation).toBe(1);
  });
});
