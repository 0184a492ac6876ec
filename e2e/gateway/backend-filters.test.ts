/** backendRef-level filters with several backendRefs (standalone), and a mirror per backend. */
import { startGatewayFixture, type GatewayFixture } from '../support/gateway';
import { httpRoute } from '../support/manifests';
import { condition, findStatus, readStatus, routeParent } from '../support/status';
import { eventually } from '../support/http';
import { backendFilterCases } from './cases/backend-filters';

describe('backendRef filters (conformance-style cases)', () => backendFilterCases(startGatewayFixture));

describe('statuses and mirrors of backendRef filters', () => {
  let gw: GatewayFixture;

  beforeAll(async () => {
    gw = await startGatewayFixture({
      backends: ['v1', 'v2', 'mirror'],
      files: {
        'routes.yaml': [
          httpRoute('mirror-per-backend', {
            rules: [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/m' } }],
                backendRefs: [
                  { name: 'v1', port: 80, filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: 80 } } }] },
                  { name: 'v2', port: 80, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-V2', value: '1' }] } }] },
                ],
              },
            ],
          }),
        ],
      },
    });
  }, 60000);

  afterAll(async () => {
    await gw?.close();
  });

  test('the route is Accepted with ResolvedRefs True and no dropped rule', async () => {
    const parent = routeParent(findStatus(await readStatus(gw.stateDir), 'HTTPRoute', 'mirror-per-backend'), 'gw');
    expect(condition(parent.conditions, 'Accepted')).toMatchObject({ status: 'True' });
    expect(condition(parent.conditions, 'ResolvedRefs')).toMatchObject({ status: 'True' });
    expect(condition(parent.conditions, 'PartiallyInvalid')).toBeUndefined();
  });

  test('only the requests sent to v1 are mirrored', async () => {
    for (let i = 0; i < 30; i++) expect((await gw.request(`/m/${i}`)).status).toBe(200);
    const toV1 = gw.backends.v1.requests.map((r) => r.path).sort();
    expect(toV1.length).toBeGreaterThan(0);
    expect(gw.backends.v2.requests.length).toBeGreaterThan(0);
    expect(gw.backends.v2.requests.every((r) => r.headers['x-v2'] === '1')).toBe(true);
    // Mirrors are sent alongside; wait for the last copies.
    const mirrored = await eventually(async () => gw.backends.mirror.requests.map((r) => r.path).sort(), (m) => m.length >= toV1.length, 5000, 50);
    expect(mirrored).toEqual(toV1);
  });
});
