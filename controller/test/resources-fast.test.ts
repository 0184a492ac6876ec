import { httpRouteSchema, parseManifests } from '../src/resources';
import { parseHttpRouteFast } from '../src/resources/httproute-fast';
import { routeDoc } from '../../scripts/bench-manifests';
import { rng as prng } from './random-routes';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const BASES: Json[] = [
  routeDoc(1) as Json,
  routeDoc(10) as Json,
  {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'HTTPRoute',
    metadata: { name: 'full', namespace: 'team-a', generation: 3, uid: 'u-1', labels: { app: 'x' }, annotations: { note: 'y' }, creationTimestamp: '2026-02-03T04:05:06Z' },
    spec: {
      parentRefs: [
        { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'infra', sectionName: 'http', port: 8080 },
        { name: 'gw', sectionName: 'other' },
      ],
      hostnames: ['a.example.com', '*.example.org'],
      rules: [
        {
          name: 'first',
          matches: [{ path: { type: 'Exact', value: '/x' }, headers: [{ type: 'RegularExpression', name: 'X-A', value: 'a.*' }], queryParams: [{ name: 'q', value: '1' }], method: 'PUT' }],
          backendRefs: [{ name: 'svc', port: 80, weight: 0, namespace: 'other', group: '', kind: 'Service' }, { name: 'svc2', port: 81 }],
        },
        { name: 'second' },
        { matches: [], backendRefs: [{ group: 'example.com', kind: 'Thing', name: 'thing' }] },
      ],
    },
  },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'bare' } },
];

const VALUES: Json[] = [
  '', 'x', 'UPPER', 'a'.repeat(254), 'b'.repeat(1100), '/', '/a', '//a', '/a/../b', '/a/.', '/%2f', '/a#b', '/é', 'é', 'x\ty', '10.0.0.1', '*.example.com', 'a.example.com',
  'RegularExpression', 'Exact', 'PathPrefix', 'GET', 'get', 'Service', 'Gateway', 'gateway.networking.k8s.io', 'bad group!', 'X-Tenant', 'X_Tenant', '[0-9]+', '1m', 'not a date', '2026-01-01T00:00:00Z',
  0, -1, 1, 1.5, 80, 65536, 1000001, Number.MAX_SAFE_INTEGER + 2, null, true, [], {}, [{}], { type: 'RequestHeaderModifier' }, { request: '1s' },
];
const KEYS = ['name', 'namespace', 'type', 'value', 'path', 'port', 'weight', 'filters', 'timeouts', 'method', 'headers', 'queryParams', 'matches', 'backendRefs', 'rules', 'hostnames', 'parentRefs', 'sectionName', 'group', 'kind', 'labels', 'uid', 'generation', 'creationTimestamp', 'extra'];

/** Every container (object or array) inside `doc`, with its parent so it can be replaced. */
function containers(doc: Json): (Json[] | { [k: string]: Json })[] {
  const out: (Json[] | { [k: string]: Json })[] = [];
  const walk = (v: Json) => {
    if (v === null || typeof v !== 'object') return;
    out.push(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) walk(child);
  };
  walk(doc);
  return out;
}

function mutate(doc: Json, rnd: () => number): void {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const target = pick(containers(doc));
  const op = rnd();
  if (Array.isArray(target)) {
    if (target.length && op < 0.3) target.push(structuredClone(pick(target)));
    else if (target.length && op < 0.5) target.splice(Math.floor(rnd() * target.length), 1);
    else if (target.length) target[Math.floor(rnd() * target.length)] = structuredClone(pick(VALUES));
    else target.push(structuredClone(pick(VALUES)));
    return;
  }
  const keys = Object.keys(target);
  if (keys.length && op < 0.3) delete target[pick(keys)];
  else if (keys.length && op < 0.7) target[pick(keys)] = structuredClone(pick(VALUES));
  else target[pick(KEYS)] = structuredClone(pick(VALUES));
}

describe('HTTPRoute fast path', () => {
  test('on valid routes it answers, exactly as the schema does (defaults, key order, dropped fields)', () => {
    for (const base of BASES) {
      const fast = parseHttpRouteFast(base);
      const zod = httpRouteSchema.safeParse(base);
      expect(zod.success).toBe(true);
      expect(fast).toBeDefined();
      expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
      expect(fast).toStrictEqual(zod.data);
    }
  });

  test('on thousands of altered routes it answers only when the schema accepts, and with the same result', () => {
    let answered = 0;
    let rejected = 0;
    for (let seed = 1; seed <= 6000; seed++) {
      const rnd = prng(seed);
      const doc = structuredClone(BASES[seed % BASES.length]);
      const edits = 1 + Math.floor(rnd() * 3);
      for (let k = 0; k < edits; k++) mutate(doc, rnd);
      const fast = parseHttpRouteFast(doc);
      const zod = httpRouteSchema.safeParse(doc);
      if (!zod.success) rejected++;
      if (fast === undefined) continue;
      answered++;
      if (!zod.success || JSON.stringify(fast) !== JSON.stringify(zod.data)) {
        throw new Error(`seed ${seed}: fast path ${JSON.stringify(fast)} but schema ${JSON.stringify(zod.success ? zod.data : zod.error.issues)} for ${JSON.stringify(doc)}`);
      }
      expect(fast).toStrictEqual(zod.data);
    }
    // Both kinds of outcome were exercised: the fast path answered, and the schema refused some.
    expect(answered).toBeGreaterThan(1000);
    expect(rejected).toBeGreaterThan(1000);
  });

  test('timestamps: the same instant, or the same refusal, as the schema', () => {
    const stamps = [
      '2026-06-15T12:34:56.789Z', '2026-02-28T23:59:59.999Z', '2024-02-29T00:00:00.000Z', '2026-02-29T00:00:00.000Z', '2026-02-30T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z', '2026-00-10T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01T23:60:00.000Z', '2026-01-01T23:00:60.000Z',
      '0999-01-01T00:00:00.000Z', '0050-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '2026-01-01T00:00:00Z', '2026-01-01', '2026-01-01T00:00:00+02:00', 'yesterday', '',
    ];
    for (const creationTimestamp of stamps) {
      const doc = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', creationTimestamp } };
      const zod = httpRouteSchema.safeParse(doc);
      const fast = parseHttpRouteFast(doc);
      if (zod.success) expect([creationTimestamp, fast?.metadata.creationTimestamp]).toEqual([creationTimestamp, zod.data.metadata.creationTimestamp]);
      else expect([creationTimestamp, fast]).toEqual([creationTimestamp, undefined]);
    }
  });

  test('a route the fast path leaves to the schema still gets the schema\'s message', () => {
    const doc = structuredClone(BASES[0]) as { spec: { rules: { filters?: unknown[] }[] } };
    doc.spec.rules[0].filters = [{ type: 'Bogus' }];
    expect(parseHttpRouteFast(doc)).toBeUndefined();
    expect(parseManifests([{ source: 'r.yaml', doc }]).invalid[0].message).toMatch(/^spec\.rules\[0\]\.filters\[0\]\.type/);
  });
});
