/**
 * A real Kubernetes API server (etcd + kube-apiserver from ../shared/tools/k8s) for a test
 * file: started in a temp dir, with kubectl bound to it, the Gateway API standard CRDs and our
 * policy CRDs installed, stopped at the end.
 *
 * The tools are built by scripts/install.sh (../shared/tools/k8s/build.sh, cached under
 * ~/.cache/portcullis-k8s). Without them a test file skips with a loud message, except on CI
 * (CI=true), where a missing tool is a failure.
 */
import { execFile, spawn } from 'child_process';
import { existsSync, promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './controller';
import { makeTempDir, removeDir } from './tmp';
import { toYaml, type Manifest } from './manifests';

export const K8S_TOOLS = process.env.K8S_TOOLS ?? path.join(os.homedir(), '.cache', 'portcullis-k8s');
export const GATEWAY_API_CRDS = process.env.GATEWAY_API_CRDS ?? path.join(K8S_TOOLS, 'crds', 'gateway-api-v1.6.3', 'standard');
export const POLICY_CRDS = path.join(REPO_ROOT, 'charts', 'portcullis', 'crds');

/** ../shared/tools/k8s from the repository root (or from its parent, for a checkout nested one level deeper). */
export function sharedK8sTools(): string | undefined {
  if (process.env.PORTCULLIS_SHARED_DIR) return path.join(process.env.PORTCULLIS_SHARED_DIR, 'tools', 'k8s');
  for (let dir = path.dirname(REPO_ROOT); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', 'tools', 'k8s');
    if (existsSync(path.join(candidate, 'start.sh'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Why the API server (and the extra tools named, e.g. helm) cannot run here, or undefined when it can. */
export function k8sMissing(extraTools: string[] = []): string | undefined {
  const tools = sharedK8sTools();
  if (!tools) return 'the shared k8s tools (../shared/tools/k8s) are not beside the repository';
  for (const bin of ['etcd', 'kube-apiserver', 'kubectl', ...extraTools]) {
    if (!existsSync(path.join(K8S_TOOLS, 'bin', bin))) return `${path.join(K8S_TOOLS, 'bin', bin)} is missing (run bash scripts/install.sh, which runs ../shared/tools/k8s/build.sh)`;
  }
  if (!existsSync(GATEWAY_API_CRDS)) return `${GATEWAY_API_CRDS} is missing`;
  return undefined;
}

/**
 * `describe` when the API server can run, else a loud skip; on CI a missing tool fails the file
 * instead of hiding it.
 */
export function describeKube(name: string, fn: () => void, extraTools: string[] = []): void {
  const missing = k8sMissing(extraTools);
  if (!missing) return describe(name, fn);
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => {
      test('the Kubernetes tools are installed', () => {
        throw new Error(`Kubernetes e2e cannot run on CI: ${missing}`);
      });
    });
    return;
  }
  process.stderr.write(`\n!!! SKIPPED "${name}": ${missing}\n\n`);
  describe.skip(name, fn);
}

export interface Cluster {
  dir: string;
  kubeconfig: string;
  server: string;
  env: NodeJS.ProcessEnv;
  kubectl(args: string[], input?: string): Promise<string>;
  /** kubectl apply of the documents (YAML stream); resolves with kubectl's output. */
  apply(docs: Manifest[] | string, extra?: string[]): Promise<string>;
  /** kubectl apply that is expected to fail: resolves with the error text. */
  applyFailure(docs: Manifest[] | string): Promise<string>;
  delete(docs: Manifest[]): Promise<void>;
  getJson<T = any>(kind: string, name: string, namespace?: string): Promise<T>;
  /** The API server's own count of requests (apiserver_request_total), by verb/resource/subresource. */
  requestCounts(): Promise<Map<string, number>>;
  /** Stops etcd and the API server, keeping their data (the connection is lost). */
  down(): Promise<void>;
  /** Starts them again on the same API server port with the same data. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input?: string, timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function readEnvFile(file: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const line of (await fs.readFile(file, 'utf8')).split('\n')) {
    const m = /^(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2].replace(/^["']|["']$/g, '');
  }
  return out;
}

/**
 * Starts etcd + kube-apiserver (no controller manager: nothing here needs pods) in a fresh
 * temp dir and installs the CRDs. About 5-10 s on this machine.
 */
export async function startCluster(options: { crds?: boolean; /** with kube-controller-manager (garbage collection) */ kcm?: boolean } = {}): Promise<Cluster> {
  const tools = sharedK8sTools();
  if (!tools) throw new Error('../shared/tools/k8s not found');
  const dir = await makeTempDir('portcullis-k8s-');
  const baseEnv: NodeJS.ProcessEnv = { ...process.env, K8S_TOOLS, ...(options.kcm ? {} : { KCM: '0', WITH_KCM: '0' }) };
  const startTools = (env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      const child = spawn('bash', [path.join(tools, 'start.sh'), dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.on('exit', (code) => resolve({ code: code ?? 1, out }));
    });
  const started = await startTools(baseEnv);
  const stopTools = async () => {
    await run('bash', [path.join(tools, 'stop.sh'), dir], baseEnv);
  };
  if (started.code !== 0) {
    await stopTools();
    await removeDir(dir);
    throw new Error(`start.sh failed (${started.code}): ${started.out.slice(-3000)}`);
  }
  const vars = await readEnvFile(path.join(dir, 'env'));
  const env: NodeJS.ProcessEnv = { ...baseEnv, ...vars, PATH: `${path.join(K8S_TOOLS, 'bin')}:${process.env.PATH}` };
  const kubeconfig = vars.KUBECONFIG ?? path.join(dir, 'kubeconfig');
  env.KUBECONFIG = kubeconfig;
  const kubectlBin = path.join(K8S_TOOLS, 'bin', 'kubectl');

  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const r = await run(kubectlBin, args, env, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  const yamlOf = (docs: Manifest[] | string) => (typeof docs === 'string' ? docs : toYaml(docs));
  const cluster: Cluster = {
    dir,
    kubeconfig,
    server: vars.K8S_API_SERVER ?? '',
    env,
    kubectl,
    apply: (docs, extra = []) => kubectl(['apply', '-f', '-', ...extra], yamlOf(docs)),
    async applyFailure(docs) {
      const r = await run(kubectlBin, ['apply', '-f', '-'], env, yamlOf(docs));
      if (r.code === 0) throw new Error(`kubectl apply succeeded but was expected to fail: ${r.stdout}`);
      return r.stderr;
    },
    async delete(docs) {
      await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], toYaml(docs));
    },
    async getJson(kind, name, namespace) {
      return JSON.parse(await kubectl(['get', kind, name, ...(namespace ? ['-n', namespace] : []), '-o', 'json']));
    },
    async requestCounts() {
      const text = await kubectl(['get', '--raw', '/metrics']);
      const counts = new Map<string, number>();
      for (const line of text.split('\n')) {
        if (!line.startsWith('apiserver_request_total{')) continue;
        const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
        const value = Number(line.slice(line.lastIndexOf(' ') + 1));
        const key = `${labels.verb}|${labels.resource}|${labels.subresource ?? ''}`;
        counts.set(key, (counts.get(key) ?? 0) + value);
      }
      return counts;
    },
    async down() {
      await stopTools();
    },
    async up() {
      const port = new URL(vars.K8S_API_SERVER).port;
      const r = await startTools({ ...baseEnv, APISERVER_PORT: port });
      if (r.code !== 0) throw new Error(`start.sh (again) failed (${r.code}): ${r.out.slice(-3000)}`);
    },
    async stop() {
      await stopTools();
      await removeDir(dir);
    },
  };
  try {
    if (options.crds !== false) await installCrds(cluster);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** The Gateway API standard CRDs and our policy CRDs, applied and Established. */
export async function installCrds(cluster: Cluster): Promise<void> {
  await cluster.kubectl(['apply', '--server-side', '-f', GATEWAY_API_CRDS]);
  await cluster.kubectl(['apply', '--server-side', '-f', POLICY_CRDS]);
  await cluster.kubectl(['wait', '--for', 'condition=established', '--timeout=60s', 'crd', '--all']);
}
