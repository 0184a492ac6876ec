import * as path from 'path';
import { promises as fs } from 'fs';
import { ControllerOptions, ControllerProcess, settleAfter, startController } from './controller';
import { EchoBackend, startEchoBackend } from './echo-backend';
import { atFileEnd } from './file-end';
import { backendOf, httpRequest, HttpRequestOptions, HttpResponse } from './http';
import { freePort } from './ports';
import { gateway, gatewayClass, ListenerSpec, Manifest, serviceFor, writeManifests } from './manifests';
import { makeTempDir, removeDir } from './tmp';

/**
 * One standalone gateway for a test file: temp manifests + state dirs, echo backends with their
 * Service/EndpointSlice manifests, a GatewayClass and a Gateway `gw`, and the real controller.
 */
export interface GatewayFixture {
  dir: string;
  manifestsDir: string;
  stateDir: string;
  /** Listener ports by listener name. */
  ports: Record<string, number>;
  /** The first listener's port. */
  port: number;
  backends: Record<string, EchoBackend>;
  controller: ControllerProcess;
  /** Writes a manifest file and waits until the controller reconciled it. */
  write(file: string, docs: Manifest[] | string): Promise<void>;
  remove(file: string): Promise<void>;
  /** Waits for the reconcile that follows a change made by other means. */
  settle(since: number): Promise<void>;
  request(path: string, options?: HttpRequestOptions, port?: number): Promise<HttpResponse>;
  /** The echo backend's name that answered, or the status code when none did. */
  backend(path: string, options?: HttpRequestOptions, port?: number): Promise<string | number>;
  close(): Promise<void>;
}

export interface GatewayFixtureOptions {
  backends?: string[];
  /** Listeners of Gateway `gw`; ports are allocated. Default one listener "http". */
  listeners?: Omit<ListenerSpec, 'port'>[];
  /** Manifests written before the controller starts (file name -> docs). */
  files?: Record<string, Manifest[]>;
  controller?: Partial<ControllerOptions>;
}

/** How a test file gets its gateway: standalone (startGatewayFixture) or through Kubernetes. */
export type StartGatewayFixture = (options?: GatewayFixtureOptions) => Promise<GatewayFixture>;

export async function startGatewayFixture(options: GatewayFixtureOptions = {}): Promise<GatewayFixture> {
  const dir = await makeTempDir('portcullis-gw-');
  const manifestsDir = path.join(dir, 'manifests');
  const stateDir = path.join(dir, 'state');
  await fs.mkdir(manifestsDir);
  const backends: Record<string, EchoBackend> = {};
  let controller: ControllerProcess | undefined;
  try {
    for (const name of options.backends ?? []) backends[name] = await startEchoBackend(name);
    const listeners = options.listeners ?? [{ name: 'http' }];
    const ports: Record<string, number> = {};
    for (const l of listeners) ports[l.name] = ports[l.name] ?? (await freePort());
    const base: Manifest[] = [gatewayClass(), gateway('gw', listeners.map((l) => ({ ...l, port: ports[l.name] })))];
    for (const b of Object.values(backends)) base.push(...serviceFor(b.name, b.port));
    await writeManifests(manifestsDir, '00-base.yaml', base);
    for (const [file, docs] of Object.entries(options.files ?? {})) await writeManifests(manifestsDir, file, docs);
    controller = await startController({ manifestsDir, stateDir, ...options.controller });
    // Tests may replace fixture.controller (a restart): always use the current one.
    const current = (): ControllerProcess => fixture.controller;
    const settle = (since: number): Promise<void> => settleAfter(current(), since, 150);
    const port = ports[listeners[0].name];
    const fixture: GatewayFixture = {
      dir,
      manifestsDir,
      stateDir,
      ports,
      port,
      backends,
      controller,
      async write(file, docs) {
        const before = current().reconciles();
        await writeManifests(manifestsDir, file, docs);
        await settle(before);
      },
      async remove(file) {
        const before = current().reconciles();
        await fs.rm(path.join(manifestsDir, file), { force: true });
        await settle(before);
      },
      settle,
      request: (p, o, pt) => httpRequest(pt ?? port, p, o),
      backend: (p, o, pt) => backendOf(pt ?? port, p, o),
      async close() {
        forget();
        try {
          // The controller's own stop (SIGTERM), nginx's open sessions ended after 1 s.
          await current().stop('SIGTERM', undefined, 1000);
        } finally {
          await Promise.all(Object.values(backends).map((b) => b.close()));
          await removeDir(dir);
        }
      },
    };
    // A test file that ends without closing it (a hook failed first) still leaves nothing behind.
    const forget = atFileEnd(() => fixture.close());
    return fixture;
  } catch (err) {
    try {
      await controller?.stop('SIGKILL');
    } finally {
      await Promise.all(Object.values(backends).map((b) => b.close()));
      await removeDir(dir);
    }
    throw err;
  }
}
