/**
 * Filter validation: what the CRD rejects (schema), what nginx cannot do (the rule is dropped
 * with a reason), and hostile values that must come out of nginx -t as a valid config.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { parseManifests } from '../src/resources';
import { buildGraph, DEFAULT_CONTROLLER_NAME } from '../src/graph';
import { buildModel } from '../src/model';
import { DEFAULT_PROXY_HEADERS } from '../src/model/filters';
import { ensurePrefixDirs } from '../src/apply/files';
import { prefixLayout, renderConfig } from '../src/render';
import { defaultNginxBinary } from '../src/apply/nginx-binary';
import { gateway, gatewayClass, http, parse, route, service, slice } from './graph-fixtures';

const base = [gatewayClass(), gateway('gw', [http('web', 8080)]), service('svc', [{ port: 80 }]), slice('svc-1', 'svc', [{ addresses: ['10.0.0.1'] }], [{ port: 8080, protocol: 'TCP' }])];
const ref = { name: 'svc', port: 80 };
const rule = (filters: object[], extra: object = {}) => ({ matches: [{ path: { type: 'PathPrefix', value: '/p' } }], filters, backendRefs: [ref], ...extra });
const headerFilter = (m: object) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: m });

function schemaError(spec: object): string | undefined {
  const parsed = parseManifests([{ source: 'x.yaml', doc: route('r', { parentRefs: [{ name: 'gw' }], ...spec }) }]);
  return parsed.invalid[0]?.message;
}

function ruleOutcome(rules: object[]) {
  const graph = buildGraph(parse(...base, route('r', { parentRefs: [{ name: 'gw' }], rules })).set, { controllerName: DEFAULT_CONTROLLER_NAME });
  const node = graph.routes[0];
  return { rules: node.rules, accepted: node.parents[0].conditions.find((c) => c.type === 'Accepted')!, conditions: node.parents[0].conditions };
}

describe('the CRD rules on filters (schema)', () => {
  test('each filter type needs its own field and no other', () => {
    expect(schemaError({ rules: [rule([{ type: 'RequestHeaderModifier' }])] })).toContain('filter.requestHeaderModifier must be specified');
    expect(schemaError({ rules: [rule([{ type: 'URLRewrite', requestHeaderModifier: { set: [] }, urlRewrite: {} }])] })).toContain('must be nil if the filter.type is not RequestHeaderModifier');
  });

  test('RequestRedirect and URLRewrite together, or a filter repeated, are rejected', () => {
    expect(schemaError({ rules: [rule([{ type: 'RequestRedirect', requestRedirect: {} }, { type: 'URLRewrite', urlRewrite: {} }], { backendRefs: [] })] })).toContain('either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite');
    expect(schemaError({ rules: [rule([headerFilter({}), headerFilter({})])] })).toContain('RequestHeaderModifier filter cannot be repeated');
  });

  test('RequestRedirect with backendRefs is rejected', () => {
    expect(schemaError({ rules: [rule([{ type: 'RequestRedirect', requestRedirect: { hostname: 'a.b' } }])] })).toContain('must not be used together with backendRefs');
  });

  test('ReplacePrefixMatch needs exactly one PathPrefix match', () => {
    const f = [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/x' } } }];
    expect(schemaError({ rules: [rule(f, { matches: [{ path: { type: 'Exact', value: '/a' } }] })] })).toContain('exactly one PathPrefix match');
    expect(schemaError({ rules: [rule(f, { matches: [{ path: { type: 'PathPrefix', value: '/a' } }, { path: { type: 'PathPrefix', value: '/b' } }] })] })).toContain('exactly one PathPrefix match');
    expect(schemaError({ rules: [rule(f)] })).toBeUndefined();
  });

  test('statusCode, scheme, percent/fraction and CORS wildcards are checked', () => {
    expect(schemaError({ rules: [rule([{ type: 'RequestRedirect', requestRedirect: { statusCode: 305 } }], { backendRefs: [] })] })).toMatch(/statusCode/);
    expect(schemaError({ rules: [rule([{ type: 'RequestRedirect', requestRedirect: { scheme: 'ftp' } }], { backendRefs: [] })] })).toMatch(/scheme/);
    expect(schemaError({ rules: [rule([{ type: 'RequestMirror', requestMirror: { backendRef: ref, percent: 5, fraction: { numerator: 1 } } }])] })).toContain('Only one of percent or fraction');
    expect(schemaError({ rules: [rule([{ type: 'CORS', cors: { allowOrigins: ['*', 'https://a.b'] } }])] })).toContain("cannot contain '*'");
    expect(schemaError({ rules: [rule([{ type: 'CORS', cors: { allowOrigins: ['ftp://a.b'] } }])] })).toContain('scheme http or https');
  });
});

describe('filters nginx cannot apply drop the rule, with the reason', () => {
  test('header values with CR, LF or NUL', () => {
    for (const value of ['a\r\nX-Injected: 1', 'a\nb', 'a\0b']) {
      const out = ruleOutcome([rule([headerFilter({ set: [{ name: 'X-A', value }] })])]);
      expect(out.rules[0].valid).toBe(false);
      expect(out.accepted).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
      expect(out.rules[0].invalidMessage).toContain('spec.rules[0].filters[0].requestHeaderModifier.set[0].value');
    }
  });

  test('one header named twice, in any case', () => {
    const out = ruleOutcome([rule([headerFilter({ set: [{ name: 'X-A', value: '1' }], add: [{ name: 'x-a', value: '2' }] })])]);
    expect(out.rules[0].invalidMessage).toContain('case-insensitive');
  });

  test('appending to a request header nginx cannot read', () => {
    const out = ruleOutcome([rule([headerFilter({ add: [{ name: 'X_A', value: '1' }] })]), { backendRefs: [ref] }]);
    expect(out.rules[0].valid).toBe(false);
    expect(out.rules[1].valid).toBe(true);
    expect(out.accepted.status).toBe('True');
    expect(out.conditions.find((c) => c.type === 'PartiallyInvalid')?.message).toMatch(/^Dropped Rule\(s\): .*X_A/);
  });

  test('a replacement path that is not an absolute clean path', () => {
    for (const value of ['relative', '/a//b', '/a/../b', '/a b', '/a%2Fb']) {
      const out = ruleOutcome([rule([{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: value } } }])]);
      expect(out.rules[0].valid).toBe(false);
    }
  });

  test('ExtensionRef: UnsupportedValue; RequestRedirect with RequestMirror: IncompatibleFilters', () => {
    expect(ruleOutcome([rule([{ type: 'ExtensionRef', extensionRef: { group: 'x.io', kind: 'K', name: 'n' } }])]).accepted.reason).toBe('UnsupportedValue');
    const mirrorAndRedirect = ruleOutcome([rule([{ type: 'RequestRedirect', requestRedirect: {} }, { type: 'RequestMirror', requestMirror: { backendRef: ref } }], { backendRefs: [] })]);
    expect(mirrorAndRedirect.accepted).toMatchObject({ status: 'False', reason: 'IncompatibleFilters' });
  });

  test('backendRef filters: merged for a single backendRef; per backend next to other backendRefs; refused when both levels set one type', () => {
    const single = ruleOutcome([{ ...rule([]), backendRefs: [{ ...ref, filters: [headerFilter({ set: [{ name: 'X-B', value: '1' }] })] }] }]);
    expect(single.rules[0].filters?.requestHeaders?.set).toEqual([{ name: 'X-B', value: '1' }]);
    expect(single.rules[0].backendFilters).toBeUndefined();
    const two = ruleOutcome([
      { ...rule([{ type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'X-R', value: 'rule' }] } }]), backendRefs: [{ ...ref, filters: [headerFilter({ set: [{ name: 'X-B', value: '1' }] })] }, ref] },
    ]);
    expect(two.rules[0].valid).toBe(true);
    // The rule's filters apply to both backends, the backendRef's only to its own.
    expect(two.rules[0].backendFilters).toEqual([
      expect.objectContaining({ requestHeaders: { set: [{ name: 'X-B', value: '1' }], add: [], remove: [] }, responseHeaders: expect.anything() }),
      expect.objectContaining({ responseHeaders: { set: [{ name: 'X-R', value: 'rule' }], add: [], remove: [] } }),
    ]);
    expect(two.rules[0].backendFilters![1]?.requestHeaders).toBeUndefined();
    const clash = ruleOutcome([{ ...rule([headerFilter({ set: [{ name: 'X-A', value: '1' }] })]), backendRefs: [ref, { ...ref, filters: [headerFilter({ set: [{ name: 'X-B', value: '1' }] })] }] }]);
    expect(clash.accepted.reason).toBe('IncompatibleFilters');
    expect(clash.rules[0].invalidMessage).toContain('spec.rules[0].backendRefs[1].filters');
    const both = ruleOutcome([{ ...rule([headerFilter({ set: [{ name: 'X-A', value: '1' }] })]), backendRefs: [{ ...ref, filters: [headerFilter({ set: [{ name: 'X-B', value: '1' }] })] }] }]);
    expect(both.accepted.reason).toBe('IncompatibleFilters');
  });

  test('a mirror to a missing Service: ResolvedRefs False, the rule still serves', () => {
    const out = ruleOutcome([rule([{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'nope', port: 80 } } }])]);
    expect(out.rules[0].valid).toBe(true);
    expect(out.conditions.find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
  });
});

test('a filtered location repeats the http-level proxy_set_header list (nginx drops inherited ones)', () => {
  const graph = buildGraph(parse(...base).set, { controllerName: DEFAULT_CONTROLLER_NAME });
  const main = renderConfig(buildModel(graph), { listenAddress: '127.0.0.1', prefix: '/tmp/x' }).files['nginx.conf'];
  const http = [...main.matchAll(/^\s*proxy_set_header (\S+) \$(\S+);$/gm)].map((m) => `${m[1]} ${m[2]}`);
  expect(http).toEqual(DEFAULT_PROXY_HEADERS.map((h) => `${h.name} ${(h.value[0] as { v: string }).v}`));
});

describe('hostile filter values render a config nginx -t accepts', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-filters-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // Printable ASCII and UTF-8 only (control characters are refused above); every nginx-special one.
  const hostile = ['"; return 200 "pwned"; #', '$host', '${x}', '$1$$', '\\"\\', '} server { listen 1; }', "';{}", 'é ü 日本', '\t tab', 'a;b', '$', '\\'];

  test('header values, replacement paths and CORS lists', async () => {
    const rules = hostile.map((value, i) => ({
      matches: [{ path: { type: 'PathPrefix', value: `/h${i}` } }],
      filters: [
        headerFilter({ set: [{ name: 'X-Set', value }], add: [{ name: 'X-Add', value }], remove: ['X-Remove'] }),
        { type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'X-R', value }], add: [{ name: "X-'!#", value }] } },
        { type: 'URLRewrite', urlRewrite: { hostname: 'a.example', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: `/$x${i}!$&'()*+,;=:@` } } },
        { type: 'RequestMirror', requestMirror: { backendRef: ref, percent: 33 } },
        { type: 'CORS', cors: { allowOrigins: ['https://*.a-b.example:8443', 'http://x.y'], allowHeaders: ['X-$'], exposeHeaders: ["x-'|~"], allowMethods: ['GET'] } },
      ],
      backendRefs: [ref],
    }));
    rules.push({ matches: [{ path: { type: 'PathPrefix', value: '/redirect' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'r.example', path: { type: 'ReplaceFullPath', replaceFullPath: "/$a;b'()" }, statusCode: 308 } }], backendRefs: [] } as never);
    // 16 rules per route at most: spread over several routes.
    const routes = [];
    for (let i = 0; i < rules.length; i += 8) routes.push(route(`r${i}`, { parentRefs: [{ name: 'gw' }], rules: rules.slice(i, i + 8) }));
    const graph = buildGraph(parse(...base, ...routes).set, { controllerName: DEFAULT_CONTROLLER_NAME });
    expect(graph.routes.flatMap((r) => r.rules.filter((x) => !x.valid).map((x) => x.invalidMessage))).toEqual([]);
    const prefix = path.join(tmp, 'hostile');
    const { files } = renderConfig(buildModel(graph), { listenAddress: '127.0.0.1', prefix });
    expect(files['servers.conf']).not.toMatch(/^\s*return 200 "pwned"/m);
    expect(files['servers.conf']).not.toContain('listen 1;\n');
    const conf = path.join(prefix, 'conf');
    fs.mkdirSync(conf, { recursive: true });
    ensurePrefixDirs(prefixLayout(prefix));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(conf, name), text);
    const res = await execa(defaultNginxBinary(), ['-t', '-p', prefix + '/', '-e', 'stderr', '-c', path.join(conf, 'nginx.conf')], { reject: false, all: true });
    expect(res.all).toMatch(/test is successful/);
  });
});

describe('backendRef filters with several backendRefs', () => {
  const two = [
    ...base,
    service('other', [{ port: 80 }]),
    slice('other-1', 'other', [{ addresses: ['10.0.0.2'] }], [{ port: 8080, protocol: 'TCP' }]),
    service('empty', [{ port: 80 }]),
  ];
  const other = { name: 'other', port: 80 };
  const withOwn = (r: object, headers: string) => ({ ...r, filters: [headerFilter({ set: [{ name: 'X-Backend', value: headers }] })] });

  function render(rules: object[]) {
    const graph = buildGraph(parse(...two, route('r', { parentRefs: [{ name: 'gw' }], rules })).set, { controllerName: DEFAULT_CONTROLLER_NAME });
    const model = buildModel(graph);
    return { graph, model, files: renderConfig(model, { listenAddress: '127.0.0.1', prefix: '/tmp/x' }).files };
  }

  test('each backend with a share gets a named location with its filters; the rule location picks one per request', () => {
    const { model, files } = render([{ matches: [{ path: { type: 'PathPrefix', value: '/p' } }], backendRefs: [withOwn({ ...ref, weight: 3 }, 'svc'), withOwn({ ...other, weight: 1 }, 'other')] }]);
    const server = model.servers.find((s) => s.ruleLocations.length > 0)!;
    const [rule, b0, b1] = server.ruleLocations;
    expect(rule.target).toMatchObject({ kind: 'backends', invalidShare: false, noEndpointsShare: false });
    expect([b0.name, b1.name]).toEqual([`${rule.name}_b0`, `${rule.name}_b1`]);
    expect(b0).toMatchObject({ dispatchedBy: rule.name, target: { kind: 'upstream' }, emit: true });
    expect(b0.filters?.proxySetHeaders).toContainEqual({ name: 'X-Backend', value: ['svc'] });
    expect(b1.filters?.proxySetHeaders).toContainEqual({ name: 'X-Backend', value: ['other'] });
    const variable = (rule.target as { dispatchVariable: string }).dispatchVariable;
    const split = model.splitClients.find((s) => s.variable === variable)!;
    expect(split.buckets).toEqual([{ percent: '75.00', value: b0.name }, { percent: '*', value: b1.name }]);
    expect(files['servers.conf']).toContain(`error_page 418 = ${variable};`);
    expect(files['servers.conf']).toMatch(/recursive_error_pages on;/);
  });

  test('a backend with weight 0 gets no location; one backend left takes its own filters in the rule location', () => {
    const { model } = render([{ backendRefs: [withOwn({ ...ref, weight: 0 }, 'svc'), withOwn({ ...other, weight: 1 }, 'other')] }]);
    const server = model.servers.find((s) => s.ruleLocations.length > 0)!;
    expect(server.ruleLocations).toHaveLength(1);
    expect(server.ruleLocations[0].target.kind).toBe('upstream');
    expect(server.ruleLocations[0].filters?.proxySetHeaders).toContainEqual({ name: 'X-Backend', value: ['other'] });
  });

  test('invalid and endpoint-less backends keep their shares as 500 and 502', () => {
    const { model, files } = render([{ backendRefs: [withOwn(ref, 'svc'), withOwn({ name: 'missing', port: 80 }, 'm'), withOwn({ name: 'empty', port: 80 }, 'e')] }]);
    const server = model.servers.find((s) => s.ruleLocations.length > 0)!;
    expect(server.ruleLocations[0].target).toMatchObject({ kind: 'backends', invalidShare: true, noEndpointsShare: true });
    const variable = (server.ruleLocations[0].target as { dispatchVariable: string }).dispatchVariable;
    expect(files['servers.conf']).toContain(`if (${variable} = "") {\n            return 500;`);
    expect(files['servers.conf']).toContain(`if (${variable} = "!") {\n            return 502;`);
  });

  test('with conditions, mirrors and rewrites the config passes nginx -t', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bfilters-'));
    try {
      const rules = [
        { matches: [{ path: { type: 'PathPrefix', value: '/a' }, headers: [{ name: 'x-h', value: '1' }] }], backendRefs: [withOwn(ref, 'a0'), { ...other, filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/z' } } }, { type: 'RequestMirror', requestMirror: { backendRef: ref, percent: 50 } }] }] },
        { matches: [{ path: { type: 'Exact', value: '/b' } }], filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'X-Rule', value: 'b' }] } }], backendRefs: [withOwn(ref, 'b0'), withOwn(other, 'b1')] },
      ];
      const graph = buildGraph(parse(...two, route('r', { parentRefs: [{ name: 'gw' }], rules })).set, { controllerName: DEFAULT_CONTROLLER_NAME });
      expect(graph.routes[0].rules.every((r) => r.valid)).toBe(true);
      const prefix = path.join(tmp, 'p');
      const { files } = renderConfig(buildModel(graph), { listenAddress: '127.0.0.1', prefix });
      const conf = path.join(prefix, 'conf');
      fs.mkdirSync(conf, { recursive: true });
      ensurePrefixDirs(prefixLayout(prefix));
      for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(conf, name), text);
      const res = await execa(defaultNginxBinary(), ['-t', '-p', prefix + '/', '-e', 'stderr', '-c', path.join(conf, 'nginx.conf')], { reject: false, all: true });
      expect(res.all).toMatch(/test is successful/);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('URLRewrite ReplacePrefixMatch where a location proxies inline', () => {
  const rw = (value: string) => ({ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: value } } });
  function servers(rules: object[]): string {
    const graph = buildGraph(parse(...base, route('r', { parentRefs: [{ name: 'gw' }], rules })).set, { controllerName: DEFAULT_CONTROLLER_NAME });
    return renderConfig(buildModel(graph), { listenAddress: '127.0.0.1', prefix: '/tmp/x' }).files['servers.conf'];
  }
  const block = (conf: string, head: string) => conf.slice(conf.indexOf(head), conf.indexOf('}', conf.indexOf(head)));

  test('is done by proxy_pass with a URI part: no regex rewrite', () => {
    const conf = servers([{ matches: [{ path: { type: 'PathPrefix', value: '/p' } }], filters: [rw('/new')], backendRefs: [ref] }]);
    expect(block(conf, 'location "/p/" {')).toMatch(/proxy_pass "http:\/\/b_default__svc_80\/new\/";/);
    expect(block(conf, 'location = "/p" {')).toMatch(/proxy_pass "http:\/\/b_default__svc_80\/new";/);
    expect(conf).not.toContain('rewrite ');
  });

  test('keeps the rewrite in a named location, next to other script steps, or for values that need escaping', () => {
    const dispatched = servers([{ matches: [{ path: { type: 'PathPrefix', value: '/p' }, headers: [{ name: 'x-a', value: '1' }] }], filters: [rw('/new')], backendRefs: [ref] }]);
    expect(dispatched).toContain('rewrite ');
    expect(dispatched).not.toContain('proxy_pass "http');
    const withCors = servers([{ ...rule([rw('/new'), { type: 'CORS', cors: { allowOrigins: ['https://a.example'] } }]) }]);
    expect(withCors).toContain('rewrite ');
    const dollar = servers([rule([rw('/a$b')])]);
    expect(dollar).toContain('rewrite ');
    expect(dollar).not.toContain('proxy_pass "http');
  });
});
