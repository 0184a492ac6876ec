/**
 * Backends (echo servers, or fake model servers) in a network namespace the test creates: EndpointSlices refuse loopback addresses,
 * so "pods" get a real address on a veth pair (prefix pck-, subnet 10.244.0.0/16), and nginx in
 * the root namespace reaches them there. Names are unique per run (pid + counter); close()
 * kills the servers and deletes the namespace, which removes the veth pair and its route.
 */
import { ChildProcess, execFile, spawn } from 'child_process';
import * as path from 'path';
import { REPO_ROOT } from './controller';

export interface NetnsBackends {
  namespace: string;
  /** The backends' address inside the namespace. */
  address: string;
  /** The root namespace's end of the veth pair: an address of this machine that is not loopback (for a process on the host that an EndpointSlice must name). */
  hostAddress: string;
  /** Port of each echo backend, by name. */
  ports: Record<string, number>;
  close(): Promise<void>;
}

let counter = 0;

function ip(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', args, (err, stdout, stderr) => (err ? reject(new Error(`ip ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

/** A /30 of <subnet>.0.0/16 no interface of this machine uses yet. */
async function freeSubnet(subnet: string): Promise<{ host: string; ns: string }> {
  const used = await ip(['-o', '-4', 'addr', 'show']);
  for (let tries = 0; tries < 200; tries++) {
    const n = Math.floor(Math.random() * 16384); // 65536 addresses / 4
    const base = n * 4;
    const a = `${subnet}.${base >> 8}.${(base & 255) + 1}`;
    const b = `${subnet}.${base >> 8}.${(base & 255) + 2}`;
    if (!used.includes(` ${a}/`) && !used.includes(` ${b}/`)) return { host: a, ns: b };
  }
  throw new Error(`no free /30 in ${subnet}.0.0/16`);
}

/**
 * Starts one echo backend per name inside a new network namespace. Each suite uses its own
 * prefix and /16 (the BOARD assigns them), so parallel runs never share names or addresses.
 */
export async function startNetnsBackends(
  names: string[],
  options: {
    prefix?: string;
    subnet?: string;
    /** Fake model servers (support/model-server.ts, "pods" of an InferencePool) instead of echo backends, on this port (0: any). */
    models?: { port: number };
  } = {},
): Promise<NetnsBackends> {
  const prefix = options.prefix ?? 'pck-';
  const short = prefix.replace(/-$/, '');
  const id = `${process.pid % 100000}${(counter++).toString(36)}`;
  const namespace = `${prefix}${id}`;
  const hostIf = `${short}${id}h`.slice(0, 15);
  const nsIf = `${short}${id}n`.slice(0, 15);
  const { host, ns } = await freeSubnet(options.subnet ?? '10.244');
  let child: ChildProcess | undefined;
  const close = async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    await ip(['netns', 'del', namespace]).catch(() => undefined);
  };
  try {
    await ip(['netns', 'add', namespace]);
    await ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', namespace]);
    await ip(['addr', 'add', `${host}/30`, 'dev', hostIf]);
    await ip(['link', 'set', hostIf, 'up']);
    await ip(['-n', namespace, 'addr', 'add', `${ns}/30`, 'dev', nsIf]);
    await ip(['-n', namespace, 'link', 'set', nsIf, 'up']);
    await ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
    const main = options.models
      ? [path.join(REPO_ROOT, 'e2e', 'support', 'model-main.ts'), ns, String(options.models.port), ...names]
      : [path.join(REPO_ROOT, 'e2e', 'support', 'echo-main.ts'), ns, ...names];
    child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-r', 'tsx/cjs', ...main], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ports = await new Promise<Record<string, number>>((resolve, reject) => {
      let out = '';
      let err = '';
      child!.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
      });
      child!.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      child!.once('exit', (code) => reject(new Error(`echo backends in ${namespace} exited (${code}): ${err}`)));
      setTimeout(() => reject(new Error(`echo backends in ${namespace} did not start: ${err}`)), 30_000).unref();
    });
    return { namespace, address: ns, hostAddress: host, ports, close };
  } catch (err) {
    await close();
    throw err;
  }
}
