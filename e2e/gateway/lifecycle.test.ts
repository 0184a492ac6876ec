/**
 * The controller as a long-running process: file changes and deletions, broken YAML, a
 * listener port another process holds (the other listeners keep serving), restarts that keep
 * creationTimestamp and lastTransitionTime, and SIGTERM stopping nginx.
 */
import * as path from 'path';
import { promises as fs } from 'fs';
import { isAlive, nginxPid, startController } from '../support/controller';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { eventually } from '../support/http';
import { gateway, gatewayClass, httpRoute, rule, serviceFor } from '../support/manifests';
import { freePort, occupyPort } from '../support/ports';
import { condition, findStatus, readStatus, routeParent, waitForStatus, type Condition } from '../support/status';

const prefixRoute = (name: string, backend: string, value: string) =>
  httpRoute(name, { rules: [rule(backend, [{ path: { type: 'PathPrefix', value } }])] });

describe('manifest files', () => {
  let gw: GatewayFixture;
  beforeAll(async () => {
    gw = await startGatewayFixture({ backends: ['one', 'two'], files: { 'one.yaml': [prefixRoute('one', 'one', '/one')] } });
  }, 60000);
  afterAll(() => gw?.close());

  test('a new file is picked up, a changed file re-applied, a deleted file removes its routes and their status', async () => {
    await gw.write('two.yaml', [prefixRoute('two', 'two', '/two')]);
    expect(await eventually(() => gw.backend('/two'), (b) => b === 'two')).toBe('two');

    await gw.write('two.yaml', [prefixRoute('two', 'two', '/deux')]);
    expect(await eventually(() => gw.backend('/deux'), (b) => b === 'two')).toBe('two');
    expect(await gw.backend('/two')).toBe(404);

    await gw.remove('two.yaml');
    expect(await eventually(() => gw.backend('/deux'), (b) => b === 404)).toBe(404);
    const docs = await waitForStatus(gw.stateDir, (d) => !findStatus(d, 'HTTPRoute', 'two'));
    expect(findStatus(docs, 'HTTPRoute', 'one')).toBeDefined();
    expect(await gw.backend('/one')).toBe('one');
  });

  test('a file with YAML errors keeps its last good resources serving and the log names file and line', async () => {
    await gw.write('one.yaml', 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: one\nspec: [\n  broken: yes\n');
    const line = await gw.controller.waitForLog((l) => l.level === 'error' && /YAML errors/.test(l.msg));
    expect(line.file).toBe('one.yaml');
    expect(String((line.errors as string[])[0])).toMatch(/^one\.yaml:\d+:\d+: /);
    expect(await gw.backend('/one')).toBe('one');
    const docs = await readStatus(gw.stateDir);
    expect(condition(routeParent(findStatus(docs, 'HTTPRoute', 'one'), 'gw').conditions, 'Accepted')?.status).toBe('True');

    await gw.write('one.yaml', [prefixRoute('one', 'one', '/uno')]);
    expect(await eventually(() => gw.backend('/uno'), (b) => b === 'one')).toBe('one');
  });
});

describe('a listener port another process holds', () => {
  let gw: GatewayFixture;
  let blocker: { close(): Promise<void> } | undefined;
  beforeAll(async () => {
    gw = await startGatewayFixture({ backends: ['kept', 'new'], files: { 'r.yaml': [prefixRoute('kept', 'kept', '/kept')] } });
  }, 60000);
  afterAll(async () => {
    await blocker?.close();
    await gw?.close();
  });

  test('only the listeners on that port are not Accepted (PortUnavailable) and not Programmed; the rest is served; once the port is free it is served too', async () => {
    // A plain Node server holds the port: nothing in the manifests is wrong, so only nginx can
    // find out (when it binds the new listener).
    const taken = await freePort();
    const otherPort = await freePort();
    blocker = await occupyPort(taken);
    const base = [
      gatewayClass(),
      gateway('gw', [
        { name: 'http', port: gw.port },
        { name: 'extra', port: taken },
      ]),
      gateway('other', [{ name: 'http', port: otherPort }]),
      ...serviceFor('kept', gw.backends.kept.port),
      ...serviceFor('new', gw.backends.new.port),
    ];
    await gw.write('00-base.yaml', base);
    await gw.write('other.yaml', [httpRoute('on-other', { rules: [rule('kept', [{ path: { type: 'PathPrefix', value: '/other' } }])] }, 'other')]);
    const listener = (d: Awaited<ReturnType<typeof readStatus>>, gateway: string, name: string) =>
      (findStatus(d, 'Gateway', gateway)?.status.listeners as { name: string; conditions: Condition[] }[] | undefined)?.find((l) => l.name === name);
    const docs = await waitForStatus(gw.stateDir, (d) => condition(listener(d, 'gw', 'extra')?.conditions, 'Accepted')?.reason === 'PortUnavailable');
    const extra = listener(docs, 'gw', 'extra')!;
    expect(condition(extra.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'PortUnavailable', observedGeneration: 2 });
    expect(condition(extra.conditions, 'Accepted')!.message).toContain(`Port ${taken} (TCP) is unavailable: nginx could not listen on 127.0.0.1:${taken} (98: Address already in use)`);
    expect(condition(extra.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
    // The Gateway's other listener and the other Gateway are programmed and serving.
    expect(condition(listener(docs, 'gw', 'http')!.conditions, 'Programmed')?.status).toBe('True');
    expect(condition(findStatus(docs, 'Gateway', 'gw')!.status.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'ListenersNotValid' });
    expect(condition(findStatus(docs, 'Gateway', 'gw')!.status.conditions, 'Programmed')?.status).toBe('True');
    expect(condition(findStatus(docs, 'Gateway', 'other')!.status.conditions, 'Programmed')?.status).toBe('True');
    expect(await gw.backend('/kept')).toBe('kept');
    expect(await gw.backend('/other', {}, otherPort)).toBe('kept');

    // A change while the port is still held is served without nginx trying the port again.
    await gw.write('new.yaml', [prefixRoute('new', 'new', '/new')]);
    expect(await eventually(() => gw.backend('/new'), (b) => b === 'new')).toBe('new');
    expect(gw.controller.logs.filter((l) => /ports held by another process/.test(String(l.msg)))).toHaveLength(1);
    expect(condition(listener(await readStatus(gw.stateDir), 'gw', 'extra')!.conditions, 'Accepted')?.reason).toBe('PortUnavailable');

    // Freed: the controller finds the port free and serves the listener, no manifest changed.
    await blocker.close();
    blocker = undefined;
    const freed = await waitForStatus(gw.stateDir, (d) => condition(listener(d, 'gw', 'extra')?.conditions, 'Programmed')?.status === 'True', 30000);
    expect(condition(listener(freed, 'gw', 'extra')!.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(condition(findStatus(freed, 'Gateway', 'gw')!.status.conditions, 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(await eventually(() => gw.backend('/kept', {}, taken), (b) => b === 'kept')).toBe('kept');
  });
});

describe('restart and stop', () => {
  test('creationTimestamp, generation and lastTransitionTime survive a restart; a transition time moves only when its status changes', async () => {
    const gw = await startGatewayFixture({ backends: ['a'], files: { 'r.yaml': [prefixRoute('r', 'a', '/a')] } });
    try {
      let docs = await readStatus(gw.stateDir);
      await gw.write('r.yaml', [prefixRoute('r', 'a', '/b')]); // generation 2
      docs = await waitForStatus(gw.stateDir, (d) => findStatus(d, 'HTTPRoute', 'r')?.metadata.generation === 2);
      const before = findStatus(docs, 'HTTPRoute', 'r')!;
      const acceptedBefore = condition(routeParent(before, 'gw').conditions, 'Accepted')!;
      const gwBefore = findStatus(docs, 'Gateway', 'gw')!;

      await gw.controller.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 1100)); // a restart visibly later than the first start
      gw.controller = await startController({ manifestsDir: gw.manifestsDir, stateDir: gw.stateDir });
      docs = await readStatus(gw.stateDir);
      const after = findStatus(docs, 'HTTPRoute', 'r')!;
      expect(after.metadata).toEqual(before.metadata);
      expect(condition(routeParent(after, 'gw').conditions, 'Accepted')).toEqual(acceptedBefore);
      expect(findStatus(docs, 'Gateway', 'gw')!.metadata.creationTimestamp).toBe(gwBefore.metadata.creationTimestamp);
      expect(condition(findStatus(docs, 'Gateway', 'gw')!.status.conditions, 'Programmed')!.lastTransitionTime).toBe(
        condition(gwBefore.status.conditions, 'Programmed')!.lastTransitionTime,
      );
      expect(await gw.backend('/b')).toBe('a');

      // ResolvedRefs flips (backend gone): its time moves, Accepted's does not.
      const resolvedBefore = condition(routeParent(after, 'gw').conditions, 'ResolvedRefs')!;
      await gw.write('r.yaml', [httpRoute('r', { rules: [rule('gone', [{ path: { type: 'PathPrefix', value: '/b' } }])] })]);
      docs = await waitForStatus(gw.stateDir, (d) =>
        condition(routeParent(findStatus(d, 'HTTPRoute', 'r'), 'gw')?.conditions, 'ResolvedRefs')?.status === 'False',
      );
      const conds = routeParent(findStatus(docs, 'HTTPRoute', 'r'), 'gw').conditions;
      expect(condition(conds, 'Accepted')!.lastTransitionTime).toBe(acceptedBefore.lastTransitionTime);
      expect(condition(conds, 'ResolvedRefs')!.lastTransitionTime).not.toBe(resolvedBefore.lastTransitionTime);
      expect(condition(conds, 'Accepted')!.observedGeneration).toBe(3);
    } finally {
      await gw.close();
    }
  });

  test('SIGTERM stops nginx and exits with code 0', async () => {
    const gw = await startGatewayFixture({ backends: ['a'], files: { 'r.yaml': [prefixRoute('r', 'a', '/a')] } });
    try {
      expect(await gw.backend('/a')).toBe('a');
      const pid = await nginxPid(gw.stateDir);
      expect(pid).toBeDefined();
      expect(isAlive(pid!)).toBe(true);
      // Not through gw.controller.stop(), which also ends an nginx the controller left behind.
      gw.controller.child.kill('SIGTERM');
      expect(await gw.controller.exited).toBe(0);
      expect(isAlive(pid!)).toBe(false);
      await expect(gw.request('/a', { timeoutMs: 1000 })).rejects.toThrow(/ECONNREFUSED/);
      expect(gw.controller.logs.some((l) => l.msg === 'stopped')).toBe(true);
    } finally {
      await gw.close();
    }
  });
});

describe('nginx error log', () => {
  test('reaches the controller log', async () => {
    const gw = await startGatewayFixture({ backends: ['a'], files: { 'r.yaml': [prefixRoute('r', 'a', '/a')] } });
    try {
      // A backend that refuses connections makes nginx log an error for the request.
      await gw.backends.a.close();
      expect((await gw.request('/a')).status).toBe(502);
      const line = await gw.controller.waitForLog((l) => /connect\(\) failed|Connection refused/.test(JSON.stringify(l)));
      expect(line).toBeDefined();
    } finally {
      await gw.close();
    }
  });
});

void path;
void fs;
