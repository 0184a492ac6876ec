/**
 * The chart's container images, built here (scripts/build-images.sh: buildah + a Debian root
 * filesystem from the package mirror) and run the way the chart runs them: as the image's
 * non-root user, read-only root filesystem, only /tmp writable.
 *
 * - portcullis/controller: the entry point answers --help; the bundled controller finds its
 *   templates (a kubernetes-less check: --help is all the CLI does without a provider).
 * - portcullis/nginx: its nginx accepts (`nginx -t`) a config the controller renders for 100
 *   routes with policies, refuses a broken one, and the agent entry point answers --help.
 *
 * Needs root (mount namespaces, buildah). The first build on a machine makes the base root
 * filesystem (~1-2 min) and nginx (scripts/build-nginx.sh); later builds reuse both from
 * ~/.cache and take ~30 s, printed as "image build: N s".
 */
import { spawnSync } from 'child_process';
import { mkdirSync, writeFileSync } from 'fs';
import * as path from 'path';
import { standardPipeline } from '../../controller/src/reconcile';
import { targetsFromGraph } from '../../controller/src/policies';
import { DEFAULT_CONTROLLER_NAME } from '../../controller/src/graph/types';
import { baseDocs, policyDocs, routeDoc } from '../../scripts/bench-manifests';
import { makeTempDir, removeDir } from '../support/tmp';
import { ImageRoot } from './run-image';
import { GENERATION_CONF, renderGeneration } from '../../controller/src/render';

const REPO = path.resolve(__dirname, '../..');
const TAG = require('../../package.json').version as string;
const CONTROLLER = `portcullis/controller:${TAG}`;
const NGINX = `portcullis/nginx:${TAG}`;

/** Renders the controller's config for `routes` routes with policies into DIR/conf, prefix `prefix`. */
function renderInto(dir: string, prefix: string, routes: number): void {
  const docs = [...baseDocs(8080, 9000), ...Array.from({ length: routes }, (_, i) => routeDoc(i, undefined, 10)), ...policyDocs(routes)].map((doc, i) => {
    const d = doc as { metadata: Record<string, unknown> };
    d.metadata.generation = 1;
    d.metadata.creationTimestamp ??= '2026-01-01T00:00:00.000Z';
    return { source: `images.yaml:${i}`, doc };
  });
  const parsed = standardPipeline.parseManifests(docs);
  const graph = standardPipeline.buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
  const pol = standardPipeline.computePolicies!({ policies: standardPipeline.parsePolicyDocs!(docs).policies, invalid: [], targets: targetsFromGraph(graph) });
  const config = standardPipeline.renderConfig(standardPipeline.buildModel(graph, pol.effective), { listenAddress: '127.0.0.1', prefix });
  for (const sub of ['conf', 'logs', 'run', 'temp']) mkdirSync(path.join(dir, sub), { recursive: true });
  for (const [name, text] of Object.entries(config.files)) writeFileSync(path.join(dir, 'conf', name), text);
  writeFileSync(path.join(dir, 'conf', GENERATION_CONF), renderGeneration('1'));
}

let work: string;
let controller: ImageRoot | undefined;
let nginx: ImageRoot | undefined;

beforeAll(() => {
  const t0 = Date.now();
  const res = spawnSync('bash', [path.join(REPO, 'scripts/build-images.sh'), 'all'], { encoding: 'utf8', cwd: REPO, timeout: 900_000 });
  if (res.status !== 0) throw new Error(`build-images.sh failed (${res.status}):\n${res.stdout}\n${res.stderr}`);
  process.stdout.write(`image build: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  // One working container per image for the whole file (vfs copies the image for each).
  controller = new ImageRoot(CONTROLLER);
  nginx = new ImageRoot(NGINX);
}, 900_000);

afterAll(() => {
  controller?.close();
  nginx?.close();
});

beforeEach(async () => {
  work = await makeTempDir('portcullis-images-');
});

afterEach(async () => {
  await removeDir(work);
});

describe('controller image', () => {
  test('runs as a non-root user with the controller as its entry point', () => {
    const img = controller!;
    expect(img.config.User).toBe('65532:65532');
    expect(img.config.Entrypoint).toEqual(['/usr/local/bin/portcullis-controller']);
    const res = img.run(['--help']);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Usage: portcullis-controller /);
    expect(res.stdout).toContain('--provider=kubernetes');
  });

  test('the root filesystem is read-only to it and a bad flag is a usage error', () => {
    const img = controller!;
    const touch = img.run(['-c', 'touch /app/x'], { entry: ['/bin/sh'] });
    expect(touch.status).not.toBe(0);
    expect(touch.stderr).toMatch(/Read-only file system/);
    const bad = img.run(['--no-such-flag']);
    expect(bad.status).toBe(64);
    expect(bad.stderr).toContain('unknown option --no-such-flag');
  });
});

describe('nginx image', () => {
  test('runs as uid 101; its nginx accepts a rendered config and refuses a broken one', () => {
    const img = nginx!;
    expect(img.config.User).toBe('101:101');
    const prefix = '/tmp/portcullis';
    const host = path.join(work, 'prefix');
    renderInto(host, prefix, 100);
    spawnSync('chmod', ['-R', 'a+rwX', work]);
    const args = ['-t', '-p', `${prefix}/`, '-e', 'stderr', '-c', `${prefix}/conf/nginx.conf`];
    const ok = img.run(args, { entry: ['/usr/local/bin/nginx'], binds: { [host]: prefix } });
    expect(ok.stderr).toContain('test is successful');
    expect(ok.status).toBe(0);
    const version = img.run(['-v'], { entry: ['/usr/local/bin/nginx'] });
    expect(version.stderr).toMatch(/nginx\/1\.26\.3/);

    writeFileSync(path.join(host, 'conf', 'servers.conf'), 'server { listen 127.0.0.1:8080; location / { proxy_pass http://nowhere-defined; } bogus_directive on; }\n');
    const bad = img.run(args, { entry: ['/usr/local/bin/nginx'], binds: { [host]: prefix } });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('unknown directive "bogus_directive"');
  });

  test('the portcullis-agent entry point answers --help; the inference hop is on the PATH', () => {
    const img = nginx!;
    expect(img.config.Entrypoint).toEqual(['/usr/local/bin/portcullis-agent']);
    const res = img.run(['--help']);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Usage: portcullis-agent /);
    const hop = img.run(['--help'], { entry: ['portcullis-inference-hop'] });
    expect(hop.status).toBe(0);
    expect(hop.stdout).toMatch(/^Usage: portcullis-inference-hop /);
  });

  test('the agent runs as uid 101 on a read-only root: health endpoints answer while it waits for the controller', () => {
    // No controller to talk to (nothing listens on port 1): the agent keeps reconnecting with
    // backoff, is alive (/healthz 200) and not ready (/readyz 503) until a config is applied.
    const img = nginx!;
    writeFileSync(path.join(work, 'token'), 'not-a-real-token\n');
    spawnSync('chmod', ['-R', 'a+rwX', work]);
    const get = (p: string) => `node -e "fetch('http://127.0.0.1:19113${p}').then(async (r) => console.log('${p}', r.status, await r.text()))"`;
    const script = [
      'portcullis-agent --server=https://127.0.0.1:1 --gateway=default/gw --token-file=/tmp/w/token --prefix=/tmp/prefix \\',
      '  --listen-address=127.0.0.1 --health-address=127.0.0.1:19113 >/tmp/w/agent.log 2>&1 & pid=$!',
      'sleep 3; grep ^Uid: /proc/$pid/status',
      get('/healthz'),
      get('/readyz'),
      'kill $pid; wait $pid; echo "exit $?"; cat /tmp/w/agent.log',
    ].join('\n');
    const res = img.run(['-c', script], { entry: ['/bin/sh'], binds: { [work]: '/tmp/w' }, timeoutMs: 30000 });
    expect(res.stdout).toMatch(/^Uid:\s+101\s+101/m);
    expect(res.stdout).toMatch(/^\/healthz 200/m);
    expect(res.stdout).toMatch(/^\/readyz 503 no configuration applied yet/m);
    expect(res.stdout).toContain('"msg":"config channel failed; reconnecting"');
    expect(res.stdout).toContain('exit 0');
  });
});
