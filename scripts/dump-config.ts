/**
 * Writes the nginx config the controller renders for the benchmark manifests, to look at or to
 * time nginx on it:  npx tsx scripts/dump-config.ts --routes=1000 --out=/tmp/pc-conf
 * then:  nginx -t -p /tmp/pc-conf -c conf/nginx.conf
 * --one-host: the routes have no hostnames (bench:agent --one-host: one server block).
 */
import { mkdirSync, writeFileSync } from 'fs';
import * as path from 'path';
import { standardPipeline } from '../controller/src/reconcile';
import { targetsFromGraph } from '../controller/src/policies';
import { DEFAULT_CONTROLLER_NAME } from '../controller/src/graph/types';
import { baseDocs, policyDocs, routeDoc } from './bench-manifests';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const routes = Number(arg('routes', '1000'));
const out = path.resolve(arg('out', '/tmp/pc-conf'));
const withPolicies = process.argv.includes('--with-policies');
const oneHost = process.argv.includes('--one-host');
const docs = [...baseDocs(8080, 9000), ...Array.from({ length: routes }, (_, i) => routeDoc(i, undefined, Number(arg('regex-every', '10')))), ...(withPolicies ? policyDocs(routes) : [])].map((doc, i) => {
  const d = doc as { metadata: Record<string, unknown> };
  d.metadata.generation = 1;
  d.metadata.creationTimestamp ??= '2026-01-01T00:00:00.000Z';
  if (oneHost && (doc as { kind?: string }).kind === 'HTTPRoute') delete (doc as { spec: Record<string, unknown> }).spec.hostnames;
  return { source: `bench.yaml:${i}`, doc };
});
const parsed = standardPipeline.parseManifests(docs);
const graph = standardPipeline.buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
const pol = standardPipeline.computePolicies!({ policies: standardPipeline.parsePolicyDocs!(docs).policies, invalid: [], targets: targetsFromGraph(graph) });
const config = standardPipeline.renderConfig(standardPipeline.buildModel(graph, pol.effective), { listenAddress: '127.0.0.1', prefix: out });
for (const sub of ['conf', 'logs', 'run', 'temp']) mkdirSync(path.join(out, sub), { recursive: true });
for (const [name, text] of Object.entries(config.files)) writeFileSync(path.join(out, 'conf', name), text);
console.log(`wrote ${Object.keys(config.files).length} files to ${out}/conf`);
