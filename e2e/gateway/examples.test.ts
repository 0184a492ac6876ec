/**
 * The manifests of the main job (examples/) stay valid: every document parses, every route is
 * Accepted with all references resolved. (`npm start` serves them on fixed ports, so this
 * checks them through the pipeline rather than a second gateway on the same ports.)
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { parseManifestText } from '../../controller/src/providers/file';
import { standardPipeline } from '../../controller/src/reconcile';
import { DEFAULT_CONTROLLER_NAME } from '../../controller/src/graph/types';
import { REPO_ROOT } from '../support/controller';

test('examples/ parse without errors and every route is Accepted with ResolvedRefs', async () => {
  const dir = path.join(REPO_ROOT, 'examples');
  const docs = [];
  for (const file of (await fs.readdir(dir)).filter((f) => /\.ya?ml$/.test(f))) {
    const parsed = parseManifestText(file, await fs.readFile(path.join(dir, file), 'utf8'));
    if (!parsed.ok) throw new Error(`${file}: ${JSON.stringify(parsed.errors)}`);
    docs.push(...parsed.docs.map((d) => ({ source: `${d.file}:${d.line}`, doc: d.doc })));
  }
  const parsed = standardPipeline.parseManifests(docs);
  expect(parsed.invalid).toEqual([]);
  expect(parsed.errors).toEqual([]);
  const graph = standardPipeline.buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
  const statuses = standardPipeline.computeStatuses(graph, parsed, { programmed: true, addresses: ['127.0.0.1'] });
  const routes = statuses.filter((s) => s.kind === 'HTTPRoute');
  expect(routes.map((r) => r.name).sort()).toEqual(['echo', 'echo-by-host', 'forge']);
  for (const r of routes) {
    for (const parent of (r.status as any).parents) {
      for (const c of parent.conditions) {
        if (c.type === 'Accepted' || c.type === 'ResolvedRefs') expect({ route: r.name, type: c.type, status: c.status }).toEqual({ route: r.name, type: c.type, status: 'True' });
        if (c.type === 'PartiallyInvalid') throw new Error(`${r.name}: ${c.message}`);
      }
    }
  }
  // Every example backend port is the one scripts/main-job.js starts.
  const mainJob = await fs.readFile(path.join(REPO_ROOT, 'scripts', 'main-job.js'), 'utf8');
  for (const slice of parsed.set.endpointSlices) {
    for (const p of slice.ports) expect(mainJob).toContain(String(p.port === 3000 ? 'FORGE_PORT || 3000' : p.port));
  }
});
