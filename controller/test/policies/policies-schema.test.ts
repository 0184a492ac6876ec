import { parsePolicy, sizeBytes } from '../../src/resources/policies';
import { EXAMPLES, rlp } from './examples';

describe('policy schemas', () => {
  it.each(EXAMPLES.map((e) => [e.name, e] as const))('%s', (_name, example) => {
    const result = parsePolicy(example.doc);
    expect(result.ok).toBe(example.valid);
    if (!result.ok && example.field !== undefined) {
      // Each problem is `<field path>: <what is wrong>`.
      expect(result.message.split('; ').map((line) => line.slice(0, line.indexOf(': ')))).toContain(example.field);
    }
  });

  it('names the field and the allowed values in the message', () => {
    const r = parsePolicy(rlp({ targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' }], rateLimit: { logLevel: 'debug' } }));
    expect(r).toEqual({ ok: false, message: 'spec.rateLimit.logLevel: must be one of info, notice, warn, error' });
  });

  it('explains the targetRefs mix rule', () => {
    const r = parsePolicy(
      rlp({
        targetRefs: [
          { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
          { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' },
        ],
      }),
    );
    expect(r).toEqual({ ok: false, message: 'spec.targetRefs: must not mix kind Gateway with route kinds (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute)' });
  });

  it('rejects an unknown key variable with a hint', () => {
    const r = parsePolicy(
      rlp({
        targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' }],
        rateLimit: { local: { rules: [{ key: '$client_ip', rate: '1r/s' }] } },
      }),
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('spec.rateLimit.local.rules[0].key: unknown nginx variable $client_ip');
  });

  it('keeps the metadata the provider filled in and defaults the namespace', () => {
    const doc = rlp({ targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }] });
    const r = parsePolicy({ ...doc, metadata: { name: 'p', generation: 3, creationTimestamp: '2026-01-02T03:04:05Z' } });
    expect(r.ok && r.policy.metadata).toMatchObject({ name: 'p', namespace: 'default', generation: 3, creationTimestamp: '2026-01-02T03:04:05.000Z' });
  });

  it('refuses another version of our group', () => {
    const doc = { ...rlp({ targetRefs: [] }), apiVersion: 'gateway.portcullis.dev/v1' };
    expect(parsePolicy(doc)).toEqual({ ok: false, message: expect.stringContaining('apiVersion: gateway.portcullis.dev/v1 is not supported') });
  });

  it('reads sizes as nginx does: no unit = bytes, k/m/g powers of 1024', () => {
    expect(sizeBytes('1000')).toBe(1000);
    expect(sizeBytes('4k')).toBe(4096);
    expect(sizeBytes('4K')).toBe(4096);
    expect(sizeBytes('2m')).toBe(2 * 1024 * 1024);
    expect(sizeBytes('1g')).toBe(1024 ** 3);
  });
});
