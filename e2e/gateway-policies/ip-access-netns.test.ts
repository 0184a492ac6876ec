/**
 * IPAccessPolicy with clients on other hosts, as far as one machine allows: each client is curl
 * in a network namespace of its own on a veth pair (support/netns.ts, prefix `pia-`,
 * 10.247.0.0/16), so nginx (listening on every address) sees the client's real source address,
 * not a loopback one, through the real controller CLI (standalone) and real nginx.
 */
import { execFile } from 'child_process';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { httpRoute, rule, type Manifest } from '../support/manifests';
import { startNetnsBackends, type NetnsBackends } from '../support/netns';
import { findStatus, waitForStatus } from '../support/status';
import { ipAccessPolicy, target, timedRequest } from './support';

let gw: GatewayFixture;
let a: NetnsBackends;
let b: NetnsBackends;

const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];

/** The status code curl gets from inside `from`'s namespace, through its veth pair to nginx. */
function statusFrom(from: NetnsBackends, path: string): Promise<number> {
  const url = `http://${from.hostAddress}:${gw.port}${path}`;
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', from.namespace, 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', url], (err, stdout, stderr) =>
      err ? reject(new Error(`curl ${url} in ${from.namespace}: ${stderr || err.message}`)) : resolve(Number(stdout)),
    );
  });
}

beforeAll(async () => {
  // The namespaces' echo backends go unused: the namespaces are the clients here.
  a = await startNetnsBackends(['a'], { prefix: 'pia-', subnet: '10.247' });
  b = await startNetnsBackends(['b'], { prefix: 'pia-', subnet: '10.247' });
  const routes: Manifest[] = [httpRoute('open', { rules: [rule('ok', prefix('/open'))] }), httpRoute('guarded', { rules: [rule('ok', prefix('/guarded'))] })];
  gw = await startGatewayFixture({
    backends: ['ok'],
    controller: { listenAddress: '0.0.0.0' },
    files: {
      'routes.yaml': routes,
      'policies.yaml': [
        // Only the two client hosts; not this machine's loopback.
        ipAccessPolicy('gw-ip', [target('gw', 'Gateway')], { allow: [`${a.address}/32`, `${b.address}/32`] }),
        // The route adds a deny for b; the Gateway's allow still applies to it.
        ipAccessPolicy('guarded-ip', [target('guarded')], { deny: [`${b.address}/32`] }),
      ],
    },
  });
  await waitForStatus(gw.stateDir, (d) => !!findStatus(d, 'IPAccessPolicy', 'guarded-ip') && !!findStatus(d, 'IPAccessPolicy', 'gw-ip'));
}, 90000);

afterAll(async () => {
  await gw?.close();
  await a?.close();
  await b?.close();
});

test("the Gateway's allow list serves both client hosts and refuses an address outside it (loopback)", async () => {
  expect(await statusFrom(a, '/open')).toBe(200);
  expect(await statusFrom(b, '/open')).toBe(200);
  expect((await timedRequest(gw.port, '/open')).status).toBe(403);
});

test("a route's deny refuses one host on that route only", async () => {
  expect(await statusFrom(a, '/guarded')).toBe(200);
  expect(await statusFrom(b, '/guarded')).toBe(403);
  expect(await statusFrom(b, '/open')).toBe(200);
});
