/**
 * buildModel: the Graph -> what nginx must do (pure). See model/types.ts for the shape and
 * model/locations.ts for the matching design.
 */
import type { Graph } from '../graph/types';
import type { EffectivePolicies } from '../policies/types';
import { modelZones } from '../policies';
import { ruleSettingsOf } from './policy-settings';
import { planServers, sniListenerMaps, type ServerPlan } from './hosts';
import type { ListenerCertificate } from '../graph/tls';
import { buildLocations } from './locations';
import { ConditionMaps } from './matching';
import { finalizeBodyLimits } from './bodylimit';
import type { DispatchMap, NginxModel, RuleLocation, RuleSource, Server, SplitClients } from './types';
import type { HeaderAppendMap } from './filters';
import { targetSignature, Upstreams } from './upstreams';
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
  const conditionMaps = new ConditionMaps();
  const upstreams = new Upstreams();
  const warnings: string[] = [];
  const warn = (m: string) => {
    if (!warnings.includes(m)) warnings.push(m);
  };

  memo?.begin();
  const ctx = { maps: conditionMaps, upstreams, warn };
  const planned = planServers(graph.gateways);
  const servers: Server[] = planned.map((plan) => {
    const { locations, ruleLocations } = memo
      ? memo.server(`${plan.port}|${plan.https ? 's' : ''}|${plan.name ?? ''}`, plan.routes, ctx, (c, parts) => buildLocations(plan.routes, c, plan, parts))
      : buildLocations(plan.routes, ctx, plan);
    return {
      port: plan.port,
      serverNames: plan.name === undefined ? [] : [plan.name],
      defaultServer: plan.name === undefined,
      gateways: plan.gateways,
      locations,
      ruleLocations,
      settings: {},
      ...(plan.routes.some((r) => r.attached.route.kind === 'GRPCRoute') ? { grpcErrors: [] } : {}),
      ...(plan.https ? { tls: plan.certificates ? { certificates: plan.certificates.map(certificateFile) } : { rejectHandshake: true as const } } : {}),
      ...(plan.https && plan.certificates && plan.listenerKey !== undefined ? { misdirected: { variable: `$pc_sni_${plan.port}`, key: plan.listenerKey } } : {}),
      ...(graph.nginx && !graph.nginx.http2On && graph.nginx.h2cPorts.includes(plan.port) ? { http2Listen: true } : {}),
    };
  });
  memo?.end();
  if (policies) {
    for (const server of servers) {
      const settingsOf = ruleSettingsOf(policies, server.gateways);
      for (const rule of server.ruleLocations) rule.settings = settingsOf(rule.source, rule.grpc ? 'GRPCRoute' : 'HTTPRoute');
    }
  }

  const stream = buildStreams(graph.gateways);
  const secrets = { ...secretFiles(planned), ...stream?.secretFiles };
  return finalizeModel({
    http: { limitReqZones: policies ? modelZones(policies) : [], settings: {}, ...(graph.nginx?.http2On === false ? {} : { http2: true }) },
    ...(upstreams.inferenceUsed || servers.some((s) => s.ruleLocations.some((r) => r.target.kind === 'inference')) ? { inferenceHop: true } : {}),
    maps: conditionMaps.maps,
    splitClients: [...upstreams.splitClients, ...mirrorSamples(servers)],
    upstreams: upstreams.upstreams,
    servers,
    warnings,
    ...(stream ? { stream } : {}),
    ...(Object.keys(secrets).length > 0 ? { secretFiles: secrets } : {}),
    ...(planned.some((p) => p.https) ? { sniMaps: sniListenerMaps(graph.gateways).map((m) => ({ variable: `$pc_sni_${m.port}`, entries: m.entries, default: m.default })) } : {}),
  });
}


/** The PEM files (certificate and key) the HTTPS servers read; written 0600 by apply/. */
function secretFiles(plans: ServerPlan[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const p of plans) for (const c of p.certificates ?? []) (out ??= {})[certificateFile(c)] = c.pem;
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
 * What a rule's named location renders from, as text; two rules with the same text share one.
 * Kept per target object with the fields it was made of: a rule kept by the model memo hands out
 * the same target object, so the text (and its hash, for the Map) is not made again per build.
 */
interface KeptSignature {
  name: string;
  dispatchedBy?: string;
  grpc?: boolean;
  bodyLimitVariable?: string;
  timeout?: string;
  settings: string;
  filters?: RuleLocation['filters'];
  signature: string;
}
const signatures = new WeakMap<object, KeptSignature>();
function ruleSignature(rule: RuleLocation): string {
  const settings = settingsSignature(rule.settings);
  const r = signatures.get(rule.target);
  if (r && r.name === rule.name && r.dispatchedBy === rule.dispatchedBy && r.grpc === rule.grpc && r.bodyLimitVariable === rule.bodyLimitVariable && r.timeout === rule.timeout && r.settings === settings && r.filters === rule.filters) return r.signature;
  const signature = `${rule.dispatchedBy ? `${rule.name}|` : ''}${targetSignature(rule.target)}|${rule.grpc ? 'g' : ''}|${rule.bodyLimitVariable ?? ''}|${rule.timeout ?? ''}|${settings}|${rule.filters ? filtersSignature(rule.filters) : ''}`;
  signatures.set(rule.target, { name: rule.name, dispatchedBy: rule.dispatchedBy, grpc: rule.grpc, bodyLimitVariable: rule.bodyLimitVariable, timeout: rule.timeout, settings, filters: rule.filters, signature });
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

/** Mirror locations are named per rule, so two rules' filters that differ only there still share. */
function filtersSignature(filters: NonNullable<RuleLocation['filters']>): string {
  return JSON.stringify({ ...filters, mirrors: filters.mirrors.map((m) => ({ ...m, uri: '' })) });
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
  const mapsByVariable = new Map(model.maps.map((m) => [m.variable, m]));
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
    for (const v of runs) for (const e of mapsByVariable.get(v)?.entries ?? []) e.nginxValue = name(e.value);
  }
}
