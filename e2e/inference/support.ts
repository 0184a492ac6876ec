import * as http from 'http';
import * as path from 'path';
import { promises as fs } from 'fs';
import { startController, type ControllerProcess } from '../support/controller';
import { httpRequest, type HttpRequestOptions, type HttpResponse } from '../support/http';
import { gateway, gatewayClass, writeManifests, type Manifest } from '../support/manifests';
import { freePort } from '../support/ports';
import { makeTempDir, removeDir } from '../support/tmp';
import { startModelServer, type ModelServer, type ModelServerOptions } from '../support/model-server';

/**
 * Pods on loopback: each fake model server gets its own 127.0.0.x address (all of 127/8 is
 * loopback on Linux) and every pod listens on the same port(s), as a pool's targetPorts say.
 */
export async function startPods(names: string[], ports: number[], firstOctet = 11, options: ModelServerOptions = {}): Promise<ModelServer[][]> {
  const pods: ModelServer[][] = [];
  for (let i = 0; i < names.length; i++) {
    const address = `127.0.0.${firstOctet + i}`;
    const ranks: ModelServer[] = [];
    for (const port of ports) ranks.push(await startModelServer(ports.length > 1 ? `${names[i]}-rank${ranks.length}` : names[i], { ...options, address, port }));
    pods.push(ranks);
  }
  return pods;
}

/** A port free on 127.0.0.1 (the pods' addresses are other loopback addresses; a clash there is unlikely). */
export const podPort = freePort;

export interface InferenceGateway {
  dir: string;
  manifestsDir: string;
  stateDir: string;
  port: number;
  controller: ControllerProcess;
  write(file: string, docs: Manifest[]): Promise<void>;
  request(path: string, options?: HttpRequestOptions): Promise<HttpResponse>;
  complete(body: unknown, options?: { path?: string; headers?: Record<string, string> }): Promise<HttpResponse>;
  close(): Promise<void>;
}

export async function startInferenceGateway(files: Record<string, Manifest[]>, args: string[] = ['--gateway-api-inference-extension']): Promise<InferenceGateway> {
  const dir = await makeTempDir('portcullis-inf-');
  const manifestsDir = path.join(dir, 'manifests');
  const stateDir = path.join(dir, 'state');
  await fs.mkdir(manifestsDir);
  const port = await freePort();
  await writeManifests(manifestsDir, '00-base.yaml', [gatewayClass(), gateway('gw', [{ name: 'http', port }])]);
  for (const [file, docs] of Object.entries(files)) await writeManifests(manifestsDir, file, docs);
  const controller = await startController({ manifestsDir, stateDir, args, logLevel: 'info' });
  const settle = async (since: number) => {
    await controller.waitForReconciles(since + 1);
    for (;;) {
      const n = controller.reconciles();
      await new Promise((r) => setTimeout(r, 150));
      if (controller.reconciles() === n) return;
    }
  };
  return {
    dir,
    manifestsDir,
    stateDir,
    port,
    controller,
    async write(file, docs) {
      const before = controller.reconciles();
      await writeManifests(manifestsDir, file, docs);
      await settle(before);
    },
    request: (p, o) => httpRequest(port, p, o),
    complete: (body, o = {}) =>
      httpRequest(port, o.path ?? '/v1/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...(o.headers ?? {}) }, body: JSON.stringify(body), timeoutMs: 15000 }),
    async close() {
      await controller.stop('SIGTERM');
      await removeDir(dir);
    },
  };
}

export const COMPLETION = { model: 'fake-model', prompt: 'Write a haiku about gateways', max_tokens: 6, temperature: 0.2 };
export const CHAT = { model: 'fake-model', messages: [{ role: 'user', content: 'Hello?' }], max_tokens: 4 };

export interface StreamedAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Each piece as it reached the client, with its arrival time. */
  arrivals: { at: number; text: string }[];
  text: string;
}

/** A streamed completion (`stream: true`) read piece by piece as the gateway sends it. */
export function streamCompletion(port: number, body: unknown, headers: Record<string, string> = {}, p = '/v1/completions'): Promise<StreamedAnswer> {
  return new Promise<StreamedAnswer>((resolve, reject) => {
    const arrivals: { at: number; text: string }[] = [];
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false, timeout: 20000 }, (res) => {
      res.on('data', (c: Buffer) => arrivals.push({ at: Date.now(), text: c.toString() }));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, arrivals, text: arrivals.map((a) => a.text).join('') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('streamed completion timed out')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
