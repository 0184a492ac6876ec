/**
 * On an nginx older than 1.25.1 (Debian 12's 1.22) a plaintext port is either HTTP/1.1 or h2c:
 * GRPCRoutes are served on ports without HTTPRoutes (`listen ... http2`), and a listener whose
 * port would need both says so (Programmed False) while its HTTP/1.1 clients keep working.
 */
import * as fs from 'fs';
import { hasHttp2Directive, nginxVersion } from '../../controller/src/apply/nginx-binary';
import { GatewayFixture, startGatewayFixture } from '../support/gateway';
import { echoPath, ECHO_SERVICE, grpcCall, grpcClient, type GrpcEchoBackend, startGrpcEchoBackend } from '../support/grpc-echo';
import { httpRequest } from '../support/http';
import { GATEWAY_API, httpRoute, serviceFor } from '../support/manifests';
import { condition, findStatus, readStatus } from '../support/status';

const OLD = '/usr/sbin/nginx';
const v = fs.existsSync(OLD) ? nginxVersion(OLD) : undefined;
const run = v && !hasHttp2Directive(v) ? describe : describe.skip;

let gw: GatewayFixture;
let backend: GrpcEchoBackend;

run(`nginx ${v?.text ?? '(none older than 1.25.1 installed)'}`, () => {
  beforeAll(async () => {
    backend = await startGrpcEchoBackend('grpc-old');
    const route = (name: string, section: string) => ({
      apiVersion: GATEWAY_API,
      kind: 'GRPCRoute',
      metadata: { name },
      spec: { parentRefs: [{ name: 'gw', sectionName: section }], hostnames: ['grpc.example'], rules: [{ matches: [{ method: { service: ECHO_SERVICE } }], backendRefs: [{ name: 'grpc-old', port: 80 }] }] },
    });
    gw = await startGatewayFixture({
      backends: ['web'],
      listeners: [{ name: 'mixed' }, { name: 'grpc-only' }],
      controller: { nginx: OLD },
      files: {
        'routes.yaml': [
          ...serviceFor('grpc-old', backend.port),
          httpRoute('web', { parentRefs: [{ name: 'gw', sectionName: 'mixed' }], hostnames: ['web.example'], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] }),
          route('grpc-mixed', 'mixed'),
          route('grpc-alone', 'grpc-only'),
        ],
      },
    });
  }, 60000);

  afterAll(async () => {
    await gw?.close();
    await backend?.close();
  });

  test('HTTP/1.1 keeps working on the mixed port; its listener reports the GRPCRoute it cannot serve', async () => {
    const res = await httpRequest(gw.ports.mixed, '/', { headers: { host: 'web.example' } });
    expect(res.status).toBe(200);
    expect(res.json.backend).toBe('web');
    const listeners = findStatus(await readStatus(gw.stateDir), 'Gateway', 'gw')!.status.listeners;
    const mixed = listeners.find((l: { name: string }) => l.name === 'mixed');
    expect(condition(mixed.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(condition(mixed.conditions, 'Programmed')!.message).toContain('default/grpc-mixed');
    const alone = listeners.find((l: { name: string }) => l.name === 'grpc-only');
    expect(condition(alone.conditions, 'Programmed')?.status).toBe('True');
  });

  test('a port with GRPCRoutes alone serves gRPC', async () => {
    const client = grpcClient(gw.ports['grpc-only'], 'grpc.example');
    const r = await grpcCall(client, echoPath('Echo'));
    client.close();
    expect(r.code).toBe(0);
    expect(r.reply!.backend).toBe('grpc-old');
  });
});
