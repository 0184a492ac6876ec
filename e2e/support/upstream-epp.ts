/**
 * The upstream endpoint pickers (built from the Go module proxy by scripts/build-epp.sh into
 * ~/.cache/portcullis-epp/bin) run as local processes against a real API server: they watch the
 * InferencePool and its Pods through a kubeconfig, as they would in a cluster.
 */
import { spawn, type ChildProcess } from 'child_process';
import { existsSync } from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { k8sMissing } from './kube';

export const EPP_TOOLS = process.env.EPP_TOOLS ?? path.join(os.homedir(), '.cache', 'portcullis-epp');

/** Why the picker `name` (lwepp, epp) or the API server cannot run here; undefined when they can. */
export function eppMissing(name: string): string | undefined {
  const bin = path.join(EPP_TOOLS, 'bin', name);
  if (!existsSync(bin)) return `${bin} is missing (run bash scripts/build-epp.sh, which scripts/install.sh runs)`;
  return k8sMissing();
}

/** `describe` when the picker and the API server can run; a loud skip off CI, a failing test on CI. */
export function describeWithEpp(name: string, picker: string, fn: () => void): void {
  const missing = eppMissing(picker);
  if (!missing) return describe(name, fn);
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => {
      test(`the upstream endpoint picker (${picker}) and the Kubernetes tools are installed`, () => {
        throw new Error(`cannot run on CI: ${missing}`);
      });
    });
    return;
  }
  process.stderr.write(`\n!!! SKIPPED "${name}": ${missing}\n\n`);
  describe.skip(name, fn);
}

export interface UpstreamEpp {
  /** Everything it logged (stdout and stderr). */
  log(): string;
  stop(): Promise<void>;
}

function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts `bin/<name> ...args` and resolves once its gRPC port accepts connections on `host`.
 * The kubeconfig goes in KUBECONFIG (controller-runtime reads it; not every picker has a flag).
 */
export async function startUpstreamEpp(name: string, args: string[], wait: { host: string; port: number }, kubeconfig: string): Promise<UpstreamEpp> {
  let out = '';
  const child: ChildProcess = spawn(path.join(EPP_TOOLS, 'bin', name), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: kubeconfig } });
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  const deadline = Date.now() + 60_000;
  while (!(await listening(wait.host, wait.port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${out.slice(-3000)}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not listen on ${wait.host}:${wait.port} within 60 s: ${out.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { log: () => out, stop };
}
