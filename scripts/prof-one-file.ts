/**
 * In-process: what the standalone controller does per change in bench:one-file, minus the I/O
 * (file reads, nginx): parse -> graph -> policies -> model (one ModelMemo, as dataplane/local.ts
 * keeps) -> render -> statuses -> transition times. One route's path changes per change, as in
 * the bench; every other document is the same frozen object, as the file provider hands out.
 *   npx tsx scripts/prof-one-file.ts [--routes=1000 --changes=30]
 * Profile it with `node --cpu-prof -r tsx/cjs scripts/prof-one-file.ts`.
 */
import { parseManifests } from '../controller/src/resources';
import { freezeDocument } from '../controller/src/resources/readonly';
import { buildGraph } from '../controller/src/graph';
import { parsePolicyDocs } from '../controller/src/resources/policies';
import { computePolicies, targetsFromGraph } from '../controller/src/policies';
import { buildModel, ModelMemo } from '../controller/src/model';
import { renderConfig } from '../controller/src/render';
import { carryTransitionTimes, computeStatuses, withAffected } from '../controller/src/status';
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';
import type { ManifestDoc } from '../controller/src/resources/types';
import type { StatusReport } from '../controller/src/graph/types';
import { baseDocs, routeDoc } from './bench-manifests';
import { cpuStages } from './support/cpu-stages';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const ROUTES = Number(arg('routes', '1000'));
const CHANGES = Number(arg('changes', '30'));

const route = (i: number, changed?: string) => {
  const d = routeDoc(i, changed) as { spec: Record<string, unknown> };
  delete d.spec.hostnames;
  return d;
};
const docs: ManifestDoc[] = [...baseDocs(8080, 9000), ...Array.from({ length: ROUTES }, (_, i) => route(i))].map((d, i) => ({ source: `gateway.yaml:${i}`, doc: freezeDocument(d) }));
const base = docs.length - ROUTES;
const memo = new ModelMemo();
let previous: StatusReport[] = [];
let lastEffective: ReturnType<typeof computePolicies>['effective'] | undefined;
const { stage, time } = cpuStages();
let cpu0 = 0;
let bytes = 0;
for (let c = -3; c < CHANGES; c++) {
  if (c === 0) cpu0 = process.cpuUsage().user + process.cpuUsage().system;
  const i = ((c + 3) * 37 + 11) % ROUTES;
  docs[base + i] = { source: docs[base + i].source, doc: freezeDocument(route(i, `/changed-${c + 3}/api`)) };
  const parsed = time('parse', () => parseManifests(docs));
  const pol = time('policies-parse', () => parsePolicyDocs(docs));
  const graph = time('graph', () => buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME }));
  const policies = time('policies', () => computePolicies({ policies: pol.policies, invalid: pol.invalid, targets: targetsFromGraph(graph), previous: lastEffective, controllerName: DEFAULT_CONTROLLER_NAME }));
  lastEffective = policies.effective;
  const model = time('model', () => buildModel(graph, policies.effective, memo));
  const files = time('render', () => renderConfig(model, { prefix: '/tmp/x', listenAddress: '127.0.0.1' }).files);
  bytes = Object.values(files).reduce((s, t) => s + t.length, 0);
  const statuses = time('status', () => [...withAffected(computeStatuses(graph, parsed, { programmed: true, addresses: ['127.0.0.1'] }, { controllerName: DEFAULT_CONTROLLER_NAME }), policies.affected), ...policies.statuses]);
  previous = time('transitions', () => carryTransitionTimes(previous, statuses, new Date().toISOString()));
  if (c === -1) for (const k of Object.keys(stage)) stage[k] = [];
}
const cpu = (process.cpuUsage().user + process.cpuUsage().system - cpu0) / 1000 / CHANGES;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
process.stdout.write(`${ROUTES} hostless routes, ${CHANGES} changes, load ${require('fs').readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
process.stdout.write(`CPU medians ms: ${Object.entries(stage).map(([k, v]) => `${k} ${med(v).toFixed(1)}`).join(', ')}\n`);
process.stdout.write(`process CPU per change: ${cpu.toFixed(1)} ms; config ${bytes} chars; model memo ${JSON.stringify(memo.stats)}\n`);
