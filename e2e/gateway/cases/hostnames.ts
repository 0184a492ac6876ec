/**
 * Hostnames: listener hostname ∩ route hostnames (wildcards included), one nginx server per
 * hostname with a catch-all, and the more specific hostname winning.
 *
 * Shared by both providers: ../hostnames.test.ts runs these cases in standalone mode,
 * e2e/k8s/conformance.test.ts through the Kubernetes API server.
 */
import type { GatewayFixture, StartGatewayFixture } from '../../support/gateway';
import { httpRoute, rule } from '../../support/manifests';

export function hostnameCases(start: StartGatewayFixture, setupTimeoutMs = 60000): void {
  let gw: GatewayFixture;

  beforeAll(async () => {
    gw = await start({
      backends: ['any-host', 'foo', 'wild', 'bar-exact', 'on-listener'],
      // Listener "all" accepts every host; listener "scoped" (own port) only *.scoped.test.
      listeners: [{ name: 'all' }, { name: 'scoped', hostname: '*.scoped.test' }],
      files: {
        'routes.yaml': [
          httpRoute('any-host', { parentRefs: [{ name: 'gw', sectionName: 'all' }], rules: [rule('any-host')] }),
          httpRoute('foo', { parentRefs: [{ name: 'gw', sectionName: 'all' }], hostnames: ['foo.example.test'], rules: [rule('foo')] }),
          httpRoute('wild', { parentRefs: [{ name: 'gw', sectionName: 'all' }], hostnames: ['*.wild.test'], rules: [rule('wild')] }),
          httpRoute('bar-exact', { parentRefs: [{ name: 'gw', sectionName: 'all' }], hostnames: ['bar.wild.test'], rules: [rule('bar-exact')] }),
          // No hostnames of its own: it gets the listener's *.scoped.test.
          httpRoute('on-listener', { parentRefs: [{ name: 'gw', sectionName: 'scoped' }], rules: [rule('on-listener')] }),
        ],
      },
    });
  }, setupTimeoutMs);

  afterAll(async () => {
    await gw?.close();
  });

  test('a route with hostnames answers only those hosts; other hosts fall to the route without hostnames', async () => {
    expect(await gw.backend('/', { host: 'foo.example.test' })).toBe('foo');
    expect(await gw.backend('/', { host: 'other.example.test' })).toBe('any-host');
    expect(await gw.backend('/')).toBe('any-host');
  });

  test('Host header matching ignores the port and letter case', async () => {
    expect(await gw.backend('/', { host: `foo.example.test:${gw.port}` })).toBe('foo');
    expect(await gw.backend('/', { host: 'FOO.Example.Test' })).toBe('foo');
  });

  test('a wildcard hostname matches one or more labels but not the bare domain; an exact name beats it', async () => {
    expect(await gw.backend('/', { host: 'a.wild.test' })).toBe('wild');
    expect(await gw.backend('/', { host: 'a.b.wild.test' })).toBe('wild');
    expect(await gw.backend('/', { host: 'bar.wild.test' })).toBe('bar-exact');
    expect(await gw.backend('/', { host: 'wild.test' })).toBe('any-host');
  });

  test('a listener hostname limits the hosts of the routes attached to it', async () => {
    const scoped = gw.ports.scoped;
    expect(await gw.backend('/', { host: 'x.scoped.test' }, scoped)).toBe('on-listener');
    expect(await gw.backend('/', { host: 'elsewhere.test' }, scoped)).toBe(404);
  });
}
