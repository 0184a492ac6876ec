/**
 * In-process: what the controller does per change in bench:agent --one-host, minus the I/O.
 * parse -> graph -> policies -> GatewaySources.build (model) -> render -> version hash -> delta.
 *   npx tsx scripts/prof-one-host.ts [--routes=1000 --changes=30 --hosts]
 */
import { parseManifests } from '../controller/src/resources';
import { freezeDocument } from '../controller/src/resources/readonly';
import { buildGraph } from '../controller/src/graph';
import { parsePolicyDocs } from '../controller/src/resources/policies';
import { computePolicies, targetsFromGraph } from '../controller/src/policies';
import { GatewaySources } from '../controller/src/configserver/sources';
import { configVersion } from '../controller/src/dataplane/protocol';
import { makeDelta } from '../controller/src/dataplane/protocol';
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';
import type { ManifestDoc } from '../controller/src/resources/types';
import { baseDocs, routeDoc } from './bench-manifests';
import { cpuStages } from './support/cpu-stages';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const ROUTES = Number(arg('routes', '1000'));
const CHANGES = Number(arg('changes', '30'));
const HOSTS = process.argv.includes('--hosts');

const route = (i: number) => {
  const d = routeDoc(i) as { spec: Record<string, unknown> };
  if (!HOSTS) delete d.spec.hostnames;
  return d;
};
const docs: ManifestDoc[] = [...baseDocs(8080, 9000), ...Array.from({ length: ROUTES }, (_, i) => route(i))].map((d, i) => ({ source: `doc-${i}`, doc: freezeDocument(d) }));
const sources = new GatewaySources();
let prev: Record<string, string> | undefined;
const { stage, time } = cpuStages();
const cpu0: number[] = [];
for (let c = -3; c < CHANGES; c++) {
  if (c === 0) cpu0.push(process.cpuUsage().user + process.cpuUsage().system);
  docs.push({ source: `added-${c}`, doc: freezeDocument(route(ROUTES + 10 + c)) });
  const parsed = time('parse', () => parseManifests(docs));
  const pol = time('policies-parse', () => parsePolicyDocs(docs));
  const graph = time('graph', () => buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME, dataplanePerGateway: true }));
  const policies = time('policies', () => computePolicies({ policies: pol.policies, invalid: pol.invalid, targets: targetsFromGraph(graph), controllerName: DEFAULT_CONTROLLER_NAME }));
  const built = time('model', () => sources.build(graph, policies.effective));
  const files = time('render', () => [...built.values()][0].render({ prefix: '/tmp/x', listenAddress: '127.0.0.1' }));
  time('hash', () => configVersion(files));
  if (prev) {
    const p = prev;
    time('delta', () => JSON.stringify(makeDelta(p, files)));
  }
  prev = files;
  if (c === CHANGES - 1) process.stdout.write(`memo stats of the last change: ${JSON.stringify((sources as unknown as { memos: Map<string, { stats: unknown }> }).memos.values().next().value?.stats)}\n`);
  if (c === -1) { for (const k of Object.keys(stage)) stage[k] = []; }
}
const cpu = (process.cpuUsage().user + process.cpuUsage().system - cpu0[0]) / 1000 / CHANGES;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
process.stdout.write(`${ROUTES} routes ${HOSTS ? '20 hosts' : 'one host'}, ${CHANGES} changes, load ${require('fs').readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
process.stdout.write(`CPU medians ms: ${Object.entries(stage).map(([k, v]) => `${k} ${med(v).toFixed(1)}`).join(', ')}\n`);
process.stdout.write(`CPU means ms: ${Object.entries(stage).map(([k, v]) => `${k} ${mean(v).toFixed(1)}`).join(', ')}\n`);
process.stdout.write(`process CPU per change: ${cpu.toFixed(1)} ms; config ${Object.values(prev!).reduce((s, t) => s + t.length, 0)} chars\n`);
