/** GRPCRoute documents: CRD defaults and validation rules, errors named by field. */
import { parseManifests } from '../src/resources';

const doc = (spec: object) => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', metadata: { name: 'r', namespace: 'default' }, spec });
const parse = (spec: object) => parseManifests([{ source: 'r.yaml', doc: doc(spec) }]);

test('defaults: method type Exact, backend weight 1, group "" and kind Service, no rules -> []', () => {
  const parsed = parse({ parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ method: { service: 'a.B' } }], backendRefs: [{ name: 's', port: 80 }] }] });
  expect(parsed.invalid).toEqual([]);
  const r = parsed.set.grpcRoutes![0];
  expect(r.spec.rules[0].matches[0]).toEqual({ method: { type: 'Exact', service: 'a.B' }, headers: [] });
  expect(r.spec.rules[0].backendRefs[0]).toMatchObject({ group: '', kind: 'Service', weight: 1, filters: [] });
  expect(parse({ parentRefs: [{ name: 'gw' }] }).set.grpcRoutes![0].spec.rules).toEqual([]);
});

test.each([
  [{ method: {} }, 'One or both of service or method must be specified'],
  [{ method: { service: 'not a service' } }, 'fully qualified gRPC service name'],
  [{ method: { service: 'a.B', method: 'Get/x' } }, 'gRPC method name'],
  [{ headers: [{ name: 'x', value: '1' }, { name: 'x', value: '2' }] }, 'duplicate entry with name "x"'],
])('match %j is invalid: %s', (match, message) => {
  const parsed = parse({ parentRefs: [{ name: 'gw' }], rules: [{ matches: [match] }] });
  expect(parsed.invalid).toHaveLength(1);
  expect(parsed.invalid[0].message).toContain(message);
  expect(parsed.invalid[0].parentRefs).toEqual([{ name: 'gw' }]);
});

test('a RegularExpression method is not held to the Exact patterns', () => {
  expect(parse({ rules: [{ matches: [{ method: { type: 'RegularExpression', service: 'a\\..*', method: 'Get|Put' } }] }] }).invalid).toEqual([]);
});

test('HTTPRoute-only filters are refused on a GRPCRoute', () => {
  const parsed = parse({ rules: [{ filters: [{ type: 'URLRewrite' }] }] });
  expect(parsed.invalid[0].message).toMatch(/filters/);
});

test('sessionPersistence is read with the CRD\'s defaults (type Cookie) and rules', () => {
  const parsed = parse({ rules: [{ sessionPersistence: { sessionName: 'x-session' } }, {}] });
  expect(parsed.invalid).toEqual([]);
  expect(parsed.set.grpcRoutes![0].spec.rules.map((r) => r.sessionPersistence)).toEqual([{ sessionName: 'x-session', type: 'Cookie' }, undefined]);
  expect(parse({ rules: [{ sessionPersistence: { type: 'Header', cookieConfig: {} } }] }).invalid[0].message).toMatch(/cookieConfig can only be set with type Cookie/);
  expect(parse({ rules: [{ sessionPersistence: { cookieConfig: { lifetimeType: 'Permanent' } } }] }).invalid[0].message).toMatch(/AbsoluteTimeout must be specified/);
});
