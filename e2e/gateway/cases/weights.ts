/** backendRefs weights and unusable backends.
 *
 * Shared by both providers: ../weights.test.ts runs these cases in standalone mode,
 * e2e/k8s/conformance.test.ts through the Kubernetes API server.
 */
import type { GatewayFixture, StartGatewayFixture } from '../../support/gateway';
import { httpRoute, rule } from '../../support/manifests';

export function weightCases(start: StartGatewayFixture, setupTimeoutMs = 60000): void {
  let gw: GatewayFixture;

  beforeAll(async () => {
    gw = await start({
      backends: ['heavy', 'light', 'zero', 'ok'],
      files: {
        'routes.yaml': [
          httpRoute('split', {
            rules: [
              rule(
                [
                  { name: 'heavy', weight: 3 },
                  { name: 'light', weight: 1 },
                  { name: 'zero', weight: 0 },
                ],
                [{ path: { type: 'PathPrefix', value: '/split' } }],
              ),
              rule([{ name: 'missing' }], [{ path: { type: 'PathPrefix', value: '/missing' } }]),
              rule(
                [
                  { name: 'ok', weight: 1 },
                  { name: 'missing', weight: 1 },
                ],
                [{ path: { type: 'PathPrefix', value: '/half' } }],
              ),
              rule([{ name: 'zero', weight: 0 }], [{ path: { type: 'PathPrefix', value: '/all-zero' } }]),
            ],
          }),
        ],
      },
    });
  }, setupTimeoutMs);

  afterAll(async () => {
    await gw?.close();
  });

  async function tally(path: string, n: number): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const who = String(await gw.backend(path));
      counts[who] = (counts[who] ?? 0) + 1;
    }
    return counts;
  }

  test('traffic is split in proportion to the weights; weight 0 gets nothing', async () => {
    const counts = await tally('/split', 400);
    expect(counts.zero).toBeUndefined();
    expect((counts.heavy ?? 0) + (counts.light ?? 0)).toBe(400);
    // 3:1 -> 75 %; 400 draws put 99.9 % of outcomes within ±8 points.
    expect(counts.heavy / 400).toBeGreaterThan(0.65);
    expect(counts.heavy / 400).toBeLessThan(0.85);
  });

  test('a rule whose only backend does not exist answers 500', async () => {
    expect((await gw.request('/missing')).status).toBe(500);
  });

  test('a missing backend keeps its share of the traffic, answered with 500', async () => {
    const counts = await tally('/half', 200);
    expect(counts.ok).toBeGreaterThan(60);
    expect(counts['500']).toBeGreaterThan(60);
    expect((counts.ok ?? 0) + (counts['500'] ?? 0)).toBe(200);
  });

  test('a rule whose backends all have weight 0 answers 500', async () => {
    expect((await gw.request('/all-zero')).status).toBe(500);
  });
}
