/**
 * buildModel: the Graph -> what nginx must do (pure). See model/types.ts for the shape and
 * model/locations.ts for the matching design.
 */
import type { Graph } from '../graph/types';
import type { EffectivePolicies } from '../policies/types';
import { gatewayKey, modelZones, type AccessGeo } from '../policies';
import { ruleSettingsOf } from './policy-settings';
import { planServers, sniListenerMaps, type ServerPlan } from './hosts';
import type { ListenerCertificate } from '../graph/tls';
import type { CABundle } from '../graph/ca-certificates';
import type { ClientValidation } from '../graph/gateway-tls';
import { buildLocations } from './locations';
import { Registries } from './uses';
import { sessionMaps } from './session';
import { finalizeBodyLimits } from './bodylimit';
import type { DispatchMap, NginxModel, ObjectKey, ProxyTarget, RuleLocation, RuleSource, Server, ServerClientAddress, ServerClientValidation, SplitClients } from './types';
import { serverInfo, type HeaderAppendMap } from './filters';
import { caBundleFile, targetSignature } from './upstreams';
import { grpcErrorPages } from './grpc';
import { buildStreams, certificateFile } from './streams';
import type { ModelMemo } from './memo';

export * from './types';
export { NOT_FOUND_LOCATION } from './locations';
export { DISPATCH_KEY_VARIABLE } from './matching';
export { ModelMemo } from './memo';

/**
 * `policies` (from computePolicies().effective): zones go to the http level and each
 * rule location gets its route's settings (its Gateway's when the route has none); nothing is
 * set at server/http level, since dispatching and 404 locations `return` before limit_req runs.
 */
export function buildModel(graph: Graph, policies?: EffectivePolicies, memo?: ModelMemo): NginxModel {
  const ctx = new Registries();
  const { maps: conditionMaps, upstreams, warnings } = ctx;

  memo?.begin();
  const planned = planServers(graph.gateways);
  const clientCertificates = new Map<string, string>();
  for (const g of graph.gateways) if (g.backendClientCertificate) clientCertificates.set(`${g.namespace}/${g.name}`, certificateFile(g.backendClientCertificate));
  if (clientCertificates.size > 0) for (const plan of planned) plan.backendCertificate = backendCertificateOf(plan, clientCertificates);
  const servers: Server[] = planned.map((plan) => {
    const info = serverInfo(plan);
    const { locations, ruleLocations } = memo
      ? memo.server(JSON.stringify(info), plan.routes, ctx, (c, parts) => buildLocations(plan.routes, c, info, parts))
      : buildLocations(plan.routes, ctx, info);
    return {
      port: plan.port,
      serverNames: plan.name === undefined ? [] : [plan.name],
      defaultServer: plan.name === undefined,
      gateways: plan.gateways,
      locations,
      ruleLocations,
      settings: {},
      ...(plan.routes.some((r) => r.attached.route.kind === 'GRPCRoute') ? { grpcErrors: [] } : {}),
      ...(plan.https ? { tls: plan.certificates ? { certificates: plan.certificates.map(certificateFile), ...(plan.clientValidation ? { clientValidation: clientValidationOf(plan.clientValidation) } : {}) } : { rejectHandshake: true as const } } : {}),
      ...(plan.https && plan.certificates && plan.listenerKey !== undefined ? { misdirected: { variable: `$pc_sni_${plan.port}`, key: plan.listenerKey } } : {}),
      ...(graph.nginx && !graph.nginx.http2On && graph.nginx.h2cPorts.includes(plan.port) ? { http2Listen: true } : {}),
    };
  });
  memo?.end();
  if (policies) {
    for (const server of servers) {
      const settingsOf = ruleSettingsOf(policies, server.gateways);
      for (const rule of server.ruleLocations) rule.settings = settingsOf(rule.source, rule.grpc ? 'GRPCRoute' : 'HTTPRoute');
      const clientAddress = serverClientAddress(policies, server.gateways);
      if (clientAddress) server.clientAddress = clientAddress;
    }
  }

  const stream = buildStreams(graph.gateways, policies);
  const secrets = { ...secretFiles(planned, graph.gateways), ...stream?.secretFiles, ...trustedCaFiles(servers) };
  return finalizeModel({
    http: { limitReqZones: policies ? modelZones(policies) : [], settings: {}, ...(graph.nginx?.http2On === false ? {} : { http2: true }) },
    ...(upstreams.inferenceUsed || servers.some((s) => s.ruleLocations.some((r) => r.target.kind === 'inference')) ? { inferenceHop: true } : {}),
    maps: conditionMaps.maps,
    splitClients: [...upstreams.splitClients, ...mirrorSamples(servers)],
    ...sessionMaps(servers),
    upstreams: upstreams.upstreams,
    servers,
    warnings,
    ...(stream ? { stream } : {}),
    ...(Object.keys(secrets).length > 0 ? { secretFiles: secrets } : {}),
    ...(planned.some((p) => p.https) ? { sniMaps: sniListenerMaps(graph.gateways).map((m) => ({ variable: `$pc_sni_${m.port}`, entries: m.entries, default: m.default })) } : {}),
  });
}


/**
 * Where a server reads the client address from: its first Gateway's IPAccessPolicy clientAddress
 * (one nginx serving several Gateways on a shared server uses the first that sets one).
 */
function serverClientAddress(policies: EffectivePolicies, gateways: ObjectKey[]): ServerClientAddress | undefined {
  for (const g of gateways) {
    const c = policies.gateways[gatewayKey(g.namespace, g.name)]?.clientAddress;
    if (!c) continue;
    if (c.source === 'Connection') return undefined;
    return { header: c.source === 'ProxyProtocol' ? 'proxy_protocol' : 'X-Forwarded-For', trusted: c.trustedCIDRs ?? [], proxyProtocol: c.source === 'ProxyProtocol' };
  }
  return undefined;
}

function caFile(ca: CABundle): string {
  return caBundleFile(ca.id);
}

function clientValidationOf(v: ClientValidation): ServerClientValidation {
  return v.mode === 'AllowValidOnly' ? { ca: caFile(v.ca), required: true } : { required: false };
}

/**
 * The client certificate a server presents to TLS backends: its Gateway's. One nginx serving
 * several Gateways on a shared server (standalone: same port and hostname) uses the first of them
 * that has one.
 */
function backendCertificateOf(plan: ServerPlan, files: Map<string, string>): string | undefined {
  for (const g of plan.gateways) {
    const file = files.get(`${g.namespace}/${g.name}`);
    if (file) return file;
  }
  return undefined;
}

/** The CA bundles BackendTLSPolicies trust (proxy_ssl_trusted_certificate), by file. */
function trustedCaFiles(servers: Server[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  const add = (t: ProxyTarget | undefined) => {
    if (t && (t.kind === 'upstream' || t.kind === 'split') && t.tls?.pem !== undefined) (out ??= {})[t.tls.trusted] = t.tls.pem;
  };
  for (const s of servers) {
    for (const r of s.ruleLocations) {
      add(r.target);
      for (const m of r.filters?.mirrors ?? []) add(m.target);
      const auth = r.filters?.externalAuth?.tls;
      if (auth?.pem !== undefined) (out ??= {})[auth.trusted] = auth.pem;
    }
  }
  return out;
}

/** The PEM files (certificate and key) the HTTPS servers read; written 0600 by apply/. */
function secretFiles(plans: ServerPlan[], gateways: Graph['gateways']): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const p of plans) {
    for (const c of p.certificates ?? []) (out ??= {})[certificateFile(c)] = c.pem;
    if (p.clientValidation?.mode === 'AllowValidOnly') (out ??= {})[caFile(p.clientValidation.ca)] = p.clientValidation.ca.pem;
  }
  for (const g of gateways) if (g.backendClientCertificate) (out ??= {})[certificateFile(g.backendClientCertificate)] = g.backendClientCertificate.pem;
  return out;
}

/**
 * Derives what follows from the settings policies put on the model: a location that proxies
 * inline carries its rule's settings, and per-rule body limits are enforced (model/bodylimit.ts).
 * buildModel calls it; call it again after changing settings. Idempotent.
 */
export function finalizeModel(model: NginxModel): NginxModel {
  for (const server of model.servers) {
    const targets = new Set<string>();
    const runs = new Set<string[]>();
    for (const l of server.locations) {
      if (l.action.kind !== 'dispatch') continue;
      for (const t of l.action.targets) targets.add(t);
      for (const run of l.action.runs) {
        if (runs.has(run.targets)) continue;
        runs.add(run.targets);
        for (const t of run.targets) targets.add(t);
      }
    }
    // A backend's own location (backendRef filters) is rendered whenever its rule is served,
    // inline or by name: the rule's location sends to it through a split_clients variable.
    let backendDispatch = false;
    for (const rule of server.ruleLocations) {
      rule.referenced = !!rule.dispatchedBy || targets.has(rule.name);
      backendDispatch ||= rule.target.kind === 'backends';
    }
    // The rule's location is itself reached through error_page 418 (dispatch) or inline.
    if (backendDispatch || server.grpcErrors) server.recursiveErrorPages = true;
    else delete server.recursiveErrorPages;
    let bySource: Map<string, RuleLocation> | undefined;
    for (const loc of server.locations) {
      if (loc.action.kind !== 'proxy') continue;
      if (!bySource) {
        bySource = new Map();
        for (const r of server.ruleLocations) if (!r.dispatchedBy) bySource.set(sourceKey(r.source), r);
      }
      const rule = bySource.get(sourceKey(loc.action.source));
      if (rule && loc.action.settings !== rule.settings) loc.action = { ...loc.action, settings: rule.settings };
    }
  }
  finalizeBodyLimits(model);
  const geos = new Map<string, AccessGeo>();
  for (const server of model.servers) {
    for (const r of server.ruleLocations) if (r.settings.ipAccess) geos.set(r.settings.ipAccess.variable, r.settings.ipAccess);
  }
  if (geos.size) model.accessGeos = [...geos.values()].sort((a, b) => (a.variable < b.variable ? -1 : 1));
  else delete model.accessGeos;
  shareNamedLocations(model);
  model.dispatchMaps = dispatchMaps(model);
  const appends = new Map<string, HeaderAppendMap>();
  for (const server of model.servers) for (const r of server.ruleLocations) for (const m of r.filters?.appendMaps ?? []) appends.set(m.variable, m);
  if (appends.size) model.headerAppends = [...appends.values()].sort((a, b) => (a.variable < b.variable ? -1 : 1));
  else delete model.headerAppends;
  for (const server of model.servers) {
    if (!server.grpcErrors) continue;
    // Reject codes the server's policies set get an answer too.
    const codes: number[] = [];
    for (const r of server.ruleLocations) if (r.settings.limitReqStatus !== undefined) codes.push(r.settings.limitReqStatus);
    server.grpcErrors = grpcErrorPages(codes);
  }
  return model;
}

/**
 * split_clients for the mirror shares the rules ask for (pc_sample_<hundredths of a percent>),
 * keyed on the request id with a suffix so the draw is independent of the backend weights'.
 */
function mirrorSamples(servers: Server[]): SplitClients[] {
  const wanted = new Set<string>();
  for (const s of servers) for (const r of s.ruleLocations) for (const m of r.filters?.mirrors ?? []) if (m.sampleVariable) wanted.add(m.sampleVariable);
  return [...wanted].sort().map((variable) => {
    const hundredths = Number(variable.slice('pc_sample_'.length));
    return { key: '${request_id}m', variable: `$${variable}`, buckets: [{ percent: (hundredths / 100).toFixed(2), value: '1' }, { percent: '*', value: '' }] };
  });
}

/** Settings objects are shared per policy outcome (model/policy-settings.ts): text them once. */
const settingsText = new WeakMap<object, string>();
function settingsSignature(settings: RuleLocation['settings']): string {
  if (isEmpty(settings)) return '';
  let text = settingsText.get(settings);
  if (text === undefined) {
    text = JSON.stringify(settings);
    settingsText.set(settings, text);
  }
  return text;
}

/** "namespace/name#rule", text once per source object (kept ones are the same objects: location-memo.ts). */
const sourceKeys = new WeakMap<RuleSource, string>();
function sourceKey(s: RuleSource): string {
  let key = sourceKeys.get(s);
  if (key === undefined) {
    key = `${s.namespace}/${s.name}#${s.ruleIndex}`;
    sourceKeys.set(s, key);
  }
  return key;
}

/**
 * Fields of a rule location that say which rule it is or what finalizeModel decided about its
 * named location, not what that location does: every other field, one added later too, is part
 * of the signature (two rules share a named location only when all of those are equal).
 * `name` counts for a backend's own location (dispatchedBy), which is never shared.
 */
const NOT_IN_SIGNATURE: Record<string, true> = { name: true, source: true, referenced: true, nginxName: true, emit: true };

/** An object field's text, made once per object (kept rules hand out the same objects). */
const fieldTexts = new WeakMap<object, string>();
function fieldText(field: string, value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  let text = fieldTexts.get(value);
  if (text === undefined) {
    if (field === 'filters') text = filtersSignature(value as NonNullable<RuleLocation['filters']>);
    else if (field === 'target') text = targetSignature(value as ProxyTarget);
    else text = JSON.stringify(value);
    fieldTexts.set(value, text);
  }
  return text;
}

/**
 * What a rule's named location renders from, as text; two rules with the same text share one.
 * Kept per target object with the field values it was made of (compared by identity): a rule
 * kept by the model memo hands out the same objects, so the text (and its hash, for the Map) is
 * not made again per build.
 */
const signatures = new WeakMap<object, { values: unknown[]; signature: string }>();
function ruleSignature(rule: RuleLocation): string {
  const fields = rule as unknown as Record<string, unknown>;
  const kept = signatures.get(rule.target);
  let same = kept !== undefined;
  let n = 0;
  for (const k in fields) {
    const v = k === 'settings' ? settingsSignature(rule.settings) : fields[k];
    if (v === undefined || (NOT_IN_SIGNATURE[k] && !(k === 'name' && rule.dispatchedBy))) continue;
    if (same && (kept!.values[n] !== k || kept!.values[n + 1] !== v)) same = false;
    n += 2;
  }
  if (same && n === kept!.values.length) return kept!.signature;
  const values: unknown[] = [];
  let signature = '';
  for (const k in fields) {
    const v = k === 'settings' ? settingsSignature(rule.settings) : fields[k];
    if (v === undefined || (NOT_IN_SIGNATURE[k] && !(k === 'name' && rule.dispatchedBy))) continue;
    values.push(k, v);
    signature += `${k}=${fieldText(k, v)}\u0000`;
  }
  signatures.set(rule.target, { values, signature });
  return signature;
}

/**
 * A dispatch key with the shared named locations' names (nginxKey). Kept per regexes array (a
 * kept action hands out the same one) with the names it mapped: made again only when one of its
 * named locations is now shared under another name.
 */
const nginxKeys = new WeakMap<string[], { key: string; names: string[]; mapped: string[]; nginxKey: string }>();
function nginxKeyOf(key: string, regexes: string[], name: (n: string) => string): string {
  let hit = nginxKeys.get(regexes);
  if (!hit || hit.key !== key) {
    // Named locations are the fields starting with "@" (64).
    const names = key.split('\n').filter((f) => f.charCodeAt(0) === 64);
    hit = { key, names, mapped: [], nginxKey: '' };
    nginxKeys.set(regexes, hit);
  }
  let same = hit.mapped.length === hit.names.length;
  for (let i = 0; i < hit.names.length && same; i++) same = name(hit.names[i]) === hit.mapped[i];
  if (!same) {
    hit.mapped = hit.names.map(name);
    hit.nginxKey = key.split('\n').map((f) => (f.charCodeAt(0) === 64 ? name(f) : f)).join('\n');
  }
  return hit.nginxKey;
}

/**
 * The maps dispatching locations name (LocationAction 'dispatch' `variable`), once each, in a
 * stable order. A variable is a hash of its regexes: two different lists under one name (a
 * 1-in-2^80 chance) would send requests astray, so that is an error, never a config.
 */
function dispatchMaps(model: NginxModel): DispatchMap[] {
  const byVariable = new Map<string, string[]>();
  for (const server of model.servers) {
    for (const loc of server.locations) {
      const a = loc.action;
      if (a.kind !== 'dispatch') continue;
      const seen = byVariable.get(a.variable);
      if (!seen) byVariable.set(a.variable, a.regexes);
      else if (seen !== a.regexes && !sameStrings(seen, a.regexes)) throw new Error(`dispatch map ${a.variable} names two different regex lists`);
    }
  }
  return [...byVariable].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([variable, regexes]) => ({ variable, regexes }));
}

function sameStrings(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Mirror and authorization locations are named per rule, so two rules' filters that differ only there still share. */
function filtersSignature(filters: NonNullable<RuleLocation['filters']>): string {
  return JSON.stringify({
    ...filters,
    mirrors: filters.mirrors.map((m) => ({ ...m, uri: '' })),
    ...(filters.externalAuth ? { externalAuth: { ...filters.externalAuth, uri: '' } } : {}),
  });
}

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * Rules of a server whose named locations would render the same share one
 * (RuleLocation.nginxName, the first of them by name). The model keeps each rule's own name
 * everywhere (tests and policies reason per rule); the nginx* fields carry what the config says.
 * A rule's settings may differ between servers (Gateway policies), so sharing is per server, as
 * are the run maps a server's locations read.
 */
function shareNamedLocations(model: NginxModel): void {
  const mapsByVariable = new Map(model.maps.map((m, i) => [m.variable, i]));
  for (const server of model.servers) {
    // The first by name of each signature names the shared location (stable across changes).
    const bySignature = new Map<string, RuleLocation>();
    const signatures: string[] = [];
    for (const rule of server.ruleLocations) {
      // A backend's own location is named in its rule's split_clients: never shared.
      const signature = ruleSignature(rule);
      signatures.push(signature);
      if (!rule.referenced) continue;
      const first = bySignature.get(signature);
      if (!first || rule.name < first.name) bySignature.set(signature, rule);
    }
    const alias = new Map<string, string>();
    let shared = false;
    server.ruleLocations.forEach((rule, i) => {
      const first = rule.referenced ? bySignature.get(signatures[i])! : rule;
      rule.nginxName = first.name;
      rule.emit = !!rule.referenced && first === rule;
      if (first !== rule) {
        alias.set(rule.name, rule.nginxName);
        shared = true;
      }
    });
    const name = (n: string) => alias.get(n) ?? n;
    const runs = new Set<string>();
    for (const loc of server.locations) {
      if (loc.action.kind !== 'dispatch') continue;
      loc.action.nginxKey = shared ? nginxKeyOf(loc.action.key, loc.action.regexes, name) : loc.action.key;
      loc.action.nginxFallback = name(loc.action.fallback);
      for (const run of loc.action.runs) runs.add(run.variable);
    }
    // A copy of the run's map: a kept server brings its block along, which stays as built.
    for (const v of runs) {
      const i = mapsByVariable.get(v);
      if (i === undefined) continue;
      const m = model.maps[i];
      model.maps[i] = { ...m, entries: m.entries.map((e) => ({ ...e, nginxValue: name(e.value) })) };
    }
  }
}
