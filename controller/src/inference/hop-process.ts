/**
 * Standalone mode runs the inference hop as a child process next to its nginx: its own event
 * loop, so a long reconcile never holds model requests back, and a crash of one does not take
 * the other down (the hop is restarted).
 */
import { spawn, type ChildProcess } from 'child_process';
import * as path from 'path';
import type { Logger } from '../log';
import * as net from 'net';

const HOP_BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'portcullis-inference-hop.js');

export interface HopProcessOptions {
  logLevel: string;
  endpointPicker: { disableTls: boolean; verify: boolean; caFile?: string };
}

/** A loopback port free right now (the hop binds it a moment later). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The hop takes a moment to start (tsx); nginx should not send it requests before. */
async function waitForListening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the inference hop did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts the hop on a loopback TCP port and resolves with its address (what nginx's upstream
 * names). TCP, not a unix socket: nginx's workers may run as another user (nobody, when the
 * controller is root), who cannot reach a socket inside a private state directory.
 */
export async function startInferenceHop(options: HopProcessOptions, log: Logger): Promise<{ address: string; stop(): Promise<void> }> {
  const port = await freeLoopbackPort();
  const address = `127.0.0.1:${port}`;
  const args = [
    HOP_BIN,
    `--port=${port}`,
    `--log-level=${options.logLevel}`,
    ...(options.endpointPicker.disableTls ? ['--endpoint-picker-disable-tls'] : []),
    ...(options.endpointPicker.verify ? ['--endpoint-picker-tls-verify'] : []),
    ...(options.endpointPicker.caFile ? [`--endpoint-picker-ca-file=${options.endpointPicker.caFile}`] : []),
  ];
  let child: ChildProcess | undefined;
  let stopping = false;
  const run = () => {
    child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code, signal) => {
      if (stopping) return;
      log.error('inference hop exited; restarting it', { code, signal });
      setTimeout(run, 500).unref();
    });
  };
  run();
  await waitForListening(port, 20_000);
  log.info('inference hop started', { address });
  return {
    address,
    async stop() {
      stopping = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
        setTimeout(() => c.kill('SIGKILL'), 3000).unref();
      });
    },
  };
}
