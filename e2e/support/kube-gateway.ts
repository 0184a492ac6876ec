/**
 * The GatewayFixture of support/gateway.ts, through Kubernetes: the same manifests are applied
 * with kubectl to a real API server, the controller runs with --provider=kubernetes (nginx
 * local, --dataplane=local), and the echo backends listen in a network namespace (EndpointSlices
 * refuse loopback). Test files written against GatewayFixture run unchanged on both providers.
 *
 * A "file" here is a set of documents applied together: writing it again applies the new set
 * and deletes what it no longer holds; removing it deletes its documents. Documents that set
 * metadata.creationTimestamp (the API server ignores it) are created in that order, oldest
 * first, one wall-clock second apart, and documents with the same time within one second, so
 * the precedence cases that rank routes by age see the ages the test asked for.
 */
import * as path from 'path';
import { settleAfter, startController, type ControllerProcess } from './controller';
import type { EchoBackend } from './echo-backend';
import type { GatewayFixture, GatewayFixtureOptions } from './gateway';
import { backendOf, httpRequest } from './http';
import { describeKube, startCluster, type Cluster } from './kube';
import { gateway, gatewayClass, serviceFor, type Manifest } from './manifests';
import { startNetnsBackends, type NetnsBackends } from './netns';
import { freePort } from './ports';
import { makeTempDir, removeDir } from './tmp';

export { describeKube };

export interface KubeGatewayFixture extends GatewayFixture {
  cluster: Cluster;
  netns: NetnsBackends;
  healthPort: number;
  metricsPort: number;
}

const idOf = (d: Manifest) => `${d.kind}|${d.metadata?.namespace ?? 'default'}|${d.metadata?.name}`;

function withoutCreationTimestamp(d: Manifest): Manifest {
  if (!d.metadata?.creationTimestamp) return d;
  const { creationTimestamp: _c, ...metadata } = d.metadata;
  return { ...d, metadata };
}

async function nextSecond(): Promise<void> {
  // Start at the beginning of a wall-clock second, so one kubectl call stays within it.
  const ms = Date.now() % 1000;
  await new Promise((r) => setTimeout(r, 1000 - ms + 20));
}

/** kubectl apply in creationTimestamp order (see the header); other documents first, at once. */
async function applyOrdered(cluster: Cluster, docs: Manifest[]): Promise<void> {
  const plain = docs.filter((d) => !d.metadata?.creationTimestamp);
  const timed = docs.filter((d) => d.metadata?.creationTimestamp);
  if (plain.length) await cluster.apply(plain);
  const groups = new Map<string, Manifest[]>();
  for (const d of timed) {
    const t = String(d.metadata.creationTimestamp);
    groups.set(t, [...(groups.get(t) ?? []), withoutCreationTimestamp(d)]);
  }
  for (const t of [...groups.keys()].sort()) {
    await nextSecond();
    await cluster.apply(groups.get(t)!);
  }
}

export async function startKubeGatewayFixture(options: GatewayFixtureOptions = {}): Promise<KubeGatewayFixture> {
  const dir = await makeTempDir('portcullis-kgw-');
  let cluster: Cluster | undefined;
  let netns: NetnsBackends | undefined;
  let controller: ControllerProcess | undefined;
  try {
    cluster = await startCluster();
    const names = options.backends ?? [];
    netns = await startNetnsBackends(names);
    const backends: Record<string, EchoBackend> = {};
    for (const name of names) {
      backends[name] = { name, host: netns.address, port: netns.ports[name], url: `http://${netns.address}:${netns.ports[name]}`, requests: [], close: async () => undefined };
    }
    const listeners = options.listeners ?? [{ name: 'http' }];
    const ports: Record<string, number> = {};
    for (const l of listeners) ports[l.name] = ports[l.name] ?? (await freePort());
    const base: Manifest[] = [gatewayClass(), gateway('gw', listeners.map((l) => ({ ...l, port: ports[l.name] })))];
    for (const name of names) base.push(...serviceFor(name, netns.ports[name], netns.address));
    const files = new Map<string, Manifest[]>();
    await cluster.apply(base);
    files.set('00-base.yaml', base);
    for (const [file, docs] of Object.entries(options.files ?? {})) {
      await applyOrdered(cluster, docs);
      files.set(file, docs);
    }
    const stateDir = path.join(dir, 'state');
    controller = await startController({
      manifestsDir: dir,
      stateDir,
      kubeconfig: cluster.kubeconfig,
      ...options.controller,
      args: ['--leader-election=false', '--health-address=127.0.0.1:0', '--metrics-address=127.0.0.1:0', ...(options.controller?.args ?? [])],
    });
    const healthPort = await controller.boundPort('health');
    const metricsPort = await controller.boundPort('metrics');
    const current = (): ControllerProcess => fixture.controller;
    const settle = (since: number): Promise<void> => settleAfter(current(), since, 200);
    const c = cluster;
    const write = async (file: string, docs: Manifest[] | string): Promise<void> => {
      if (typeof docs === 'string') throw new Error('the Kubernetes fixture applies documents, not raw YAML text');
      const before = current().reconciles();
      const previous = files.get(file) ?? [];
      const keep = new Set(docs.map(idOf));
      const gone = previous.filter((d) => !keep.has(idOf(d)));
      await applyOrdered(c, docs);
      if (gone.length) await c.delete(gone.map(withoutCreationTimestamp));
      files.set(file, docs);
      await settle(before);
    };
    const port = ports[listeners[0].name];
    const listenAddress = options.controller?.listenAddress ?? '127.0.0.1';
    const fixture: KubeGatewayFixture = {
      dir,
      manifestsDir: dir,
      stateDir,
      ports,
      port,
      backends,
      controller,
      cluster,
      netns,
      healthPort,
      metricsPort,
      write,
      async remove(file) {
        const docs = files.get(file);
        if (!docs) return;
        const before = current().reconciles();
        await c.delete(docs.map(withoutCreationTimestamp));
        files.delete(file);
        await settle(before);
      },
      settle,
      request: (p, o, pt) => httpRequest(pt ?? port, p, o, listenAddress),
      backend: (p, o, pt) => backendOf(pt ?? port, p, o, listenAddress),
      async close() {
        await current().stop('SIGTERM');
        await netns!.close();
        await c.stop();
        await removeDir(dir);
      },
    };
    return fixture;
  } catch (err) {
    await controller?.stop('SIGKILL');
    await netns?.close();
    await cluster?.stop();
    await removeDir(dir);
    throw err;
  }
}
