/**
 * A throwaway kube-apiserver + etcd for the chart tests, from ../shared/tools/k8s (start.sh in
 * a temp dir, no controller manager), with the Gateway API standard CRDs and our policy CRDs.
 * Without the built tools the file is skipped loudly, except on CI, where that is a failure.
 */
import { execFile } from 'child_process';
import { existsSync, promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { makeTempDir, removeDir } from '../support/tmp';

const REPO = path.resolve(__dirname, '../..');
export const K8S_TOOLS = process.env.K8S_TOOLS ?? path.join(os.homedir(), '.cache', 'portcullis-k8s');
const GATEWAY_API_CRDS = path.join(K8S_TOOLS, 'crds', 'gateway-api-v1.6.3', 'standard');

/** ../shared/tools/k8s beside the repository (or beside its parent, for a checkout nested one level deeper). */
function findShared(): string {
  if (process.env.PORTCULLIS_SHARED_DIR) return path.join(process.env.PORTCULLIS_SHARED_DIR, 'tools', 'k8s');
  for (let dir = path.dirname(REPO); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', 'tools', 'k8s');
    if (existsSync(path.join(candidate, 'start.sh'))) return candidate;
  }
  return path.join(path.dirname(REPO), 'shared', 'tools', 'k8s');
}
export const SHARED_K8S = findShared();

function missing(): string | undefined {
  if (!existsSync(path.join(SHARED_K8S, 'start.sh'))) return `${SHARED_K8S}/start.sh not found`;
  for (const bin of ['etcd', 'kube-apiserver', 'kubectl', 'helm']) {
    if (!existsSync(path.join(K8S_TOOLS, 'bin', bin))) return `${path.join(K8S_TOOLS, 'bin', bin)} is missing (../shared/tools/k8s/build.sh builds it)`;
  }
  if (!existsSync(GATEWAY_API_CRDS)) return `${GATEWAY_API_CRDS} is missing`;
  return undefined;
}

export function describeCluster(name: string, fn: () => void): void {
  const why = missing();
  if (!why) return describe(name, fn);
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => test('the Kubernetes tools are installed', () => {
      throw new Error(`cannot run on CI: ${why}`);
    }));
    return;
  }
  process.stderr.write(`\n!!! SKIPPED "${name}": ${why}\n\n`);
  describe.skip(name, fn);
}

export interface Cluster {
  dir: string;
  env: NodeJS.ProcessEnv;
  kubectl(args: string[], input?: string): Promise<string>;
  getJson<T = any>(kind: string, name: string, namespace?: string): Promise<T>;
  stop(): Promise<void>;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env, maxBuffer: 64 << 20, timeout: 180_000 }, (e, out, err) => {
      resolve({ code: e ? (typeof (e as { code?: unknown }).code === 'number' ? (e as { code: number }).code : 1) : 0, out: String(out), err: String(err) });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

export async function startCluster(): Promise<Cluster> {
  const dir = await makeTempDir('portcullis-chart-k8s-');
  const base = { ...process.env, K8S_TOOLS, KCM: '0', WITH_KCM: '0' };
  const stop = async () => {
    await run('bash', [path.join(SHARED_K8S, 'stop.sh'), dir], base);
    await removeDir(dir);
  };
  const started = await run('bash', [path.join(SHARED_K8S, 'start.sh'), dir], base);
  if (started.code !== 0) {
    await stop();
    throw new Error(`start.sh failed: ${(started.out + started.err).slice(-2000)}`);
  }
  const vars: Record<string, string> = {};
  for (const line of (await fs.readFile(path.join(dir, 'env'), 'utf8')).split('\n')) {
    const m = /^(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) vars[m[1]] = m[2].replace(/^["']|["']$/g, '');
  }
  const env = { ...base, ...vars, PATH: `${path.join(K8S_TOOLS, 'bin')}:${process.env.PATH}` };
  const kubectl = async (args: string[], input?: string) => {
    const r = await run(path.join(K8S_TOOLS, 'bin', 'kubectl'), args, env, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.err || r.out}`);
    return r.out;
  };
  const cluster: Cluster = {
    dir,
    env,
    kubectl,
    getJson: async (kind, name, namespace) => JSON.parse(await kubectl(['get', kind, name, ...(namespace ? ['-n', namespace] : []), '-o', 'json'])),
    stop,
  };
  try {
    await kubectl(['apply', '--server-side', '-f', GATEWAY_API_CRDS]);
    await kubectl(['apply', '--server-side', '-f', path.join(REPO, 'charts', 'portcullis', 'crds')]);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  } catch (err) {
    await stop();
    throw err;
  }
  return cluster;
}
